#!/usr/bin/env python3
"""compare_eustack.py EU_STACK_OUTPUT DIAGTOP_JSON: frame by frame, diagtop's stack of each thread holds at least
eu-stack's frames (eu-stack -i -s, taken on the same stopped state): the same PCs in the same order, and in each
(the function and the calls inlined into it) every function eu-stack names, with the same file:line wherever
eu-stack has one. diagtop may have more: inlined calls eu-stack does not see (Go: libdw finds no compilation unit
without .debug_aranges). Names compare without a symbol version (@GLIBC_2.2.5) or Go's ABI suffix (.abi0), which
DWARF names do not carry. Go stacks end at the runtime's stack switches (runtime.goexit, mcall, systemstack,
morestack) and a thread's first frame (runtime.clone, rt0_go): eu-stack goes on past them into whatever the words
there point at, diagtop stops; eu-stack's frames beyond are not compared. Prints one line per difference and exits 1 if there is any; a summary on success."""
import json, re, sys


def parse_eu(path):
    threads, frames = {}, None
    for line in open(path, errors="replace"):
        m = re.match(r"^TID (\d+):", line)
        if m:
            frames = threads.setdefault(int(m.group(1)), [])
            continue
        m = re.match(r"^#(\d+)\s+0x([0-9a-f]+)(?:\s+(-|\S.*?))?\s*$", line)
        if m and frames is not None:
            name = m.group(3)
            frames.append({"pc": int(m.group(2), 16), "function": None if name in (None, "-", "??") else name,
                           "file": None, "line": None})
            continue
        m = re.match(r"^\s{4}(\S.*?):(\d+)(?::\d+)?\s*$", line)
        if m and frames:
            frames[-1]["file"], frames[-1]["line"] = m.group(1), int(m.group(2))
    return threads


def plain(name):
    return re.sub(r"(@.*|\.abi0|\.abiinternal)$", "", name) if name else name


GO_SWITCHES = ("runtime.goexit", "runtime.mcall", "runtime.systemstack", "runtime.morestack", "runtime.clone",
               "runtime.rt0_go")


def up_to_go_switch(frames):
    for i, f in enumerate(frames):
        if plain(f["function"]) in GO_SWITCHES:
            return frames[:i + 1]
    return frames


def same(e, d):
    return int(d["pc"], 16) == e["pc"] and (not e["function"] or plain(d["function"]) == plain(e["function"]))


def main():
    eu = parse_eu(sys.argv[1])
    dt = {t["tid"]: t["frames"] for t in json.load(open(sys.argv[2]))["threads"]}
    problems, compared = [], 0
    if not eu:
        problems.append("eu-stack gave no threads")
    for tid, eframes in sorted(eu.items()):
        eframes = up_to_go_switch(eframes)
        ours = dt.get(tid)
        if ours is None:
            problems.append("thread %d: missing in diagtop" % tid)
            continue
        # Both lists run from the innermost frame, inlined calls before the function holding them; diagtop's
        # extra frames may only be inlined calls.
        k = 0
        for i, e in enumerate(eframes):
            while k < len(ours) and not same(e, ours[k]) and ours[k]["inlined"]:
                k += 1
            if k == len(ours) or not same(e, ours[k]):
                got = ours[k] if k < len(ours) else None
                problems.append("thread %d: eu-stack's frame #%d 0x%x %s is not diagtop's next frame (%s)" %
                                (tid, i, e["pc"], e["function"], got and (got["pc"], got["function"])))
                break
            compared += 1
            d = ours[k]
            if e["file"] and (d.get("file"), d.get("line")) != (e["file"], e["line"]):
                problems.append("thread %d frame #%d (%s): %s:%s, eu-stack %s:%d" %
                                (tid, i, e["function"], d.get("file"), d.get("line"), e["file"], e["line"]))
            k += 1
    for p in problems:
        print("  " + p)
    if not problems:
        print("  %d threads, %d frames compared, diagtop has %d frames in all" %
              (len(eu), compared, sum(len(dt[t]) for t in eu)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
