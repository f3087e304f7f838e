#!/usr/bin/env python3
"""compare_goroutines.py GO_TRACE DIAGTOP_JSON: the goroutines a Go program printed of itself (runtime.Stack(buf,
true), just before its core was taken) against `diagtop analyze CORE --json`'s, or those of `diagtop stack PID
--json` read from its memory (the runtime view, "created_by" as "function in file:line"): the same goroutines (the
runtime's own, which Go's traceback hides, left out on both sides), and for each one that was not running when it
printed: the same state, every frame Go shows (function, file:line) among diagtop's in the same order (diagtop
also shows the runtime's frames and the go statement's wrappers, which Go's traceback hides), and the same
"created by" function and file:line. Prints each difference and exits 1 if there is any."""
import json, re, sys


def parse_trace(path):
    gs, cur, expect_loc = {}, None, None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"^goroutine (\d+) \[([^\]]*)\]:$", line)
        if m:
            state = re.sub(r", \d+ minutes?$", "", m.group(2)).replace(", locked to thread", "")
            cur = gs[int(m.group(1))] = {"state": state, "frames": [], "created_by": None}
            continue
        if cur is None or not line:
            continue
        m = re.match(r"^\t(.*):(\d+)(?: \+0x[0-9a-f]+)?$", line)
        if m and expect_loc is not None:
            expect_loc.update(file=m.group(1), line=int(m.group(2)))
            expect_loc = None
            continue
        m = re.match(r"^created by (\S+)", line)
        if m:
            cur["created_by"] = expect_loc = {"function": m.group(1)}
            continue
        m = re.match(r"^(\S.*?)\((?:[^()]|\([^)]*\))*\)$", line)
        if m:
            expect_loc = {"function": m.group(1)}
            cur["frames"].append(expect_loc)
    return gs


def main():
    go = parse_trace(sys.argv[1])
    doc = json.load(open(sys.argv[2]))
    if "provider" in doc:  # diagtop stack's runtime view: the runtime's own goroutines are already left out
        listed = doc["threads"]
        for g in listed:
            m = re.match(r"^(\S+) in (.*):(\d+)$", g.get("created_by") or "")
            g["created_by"] = {"function": m.group(1), "file": m.group(2), "line": int(m.group(3))} if m else None
    elif not doc.get("goroutines") or doc["goroutines"].get("error"):
        print("no goroutines in diagtop's report:", doc.get("goroutines"))
        sys.exit(1)
    else:
        listed = doc["goroutines"]["list"]
    ours = {g["id"]: g for g in listed if not g.get("system")}
    problems = []
    if sorted(go) != sorted(ours):
        problems.append("goroutines: Go printed %s, diagtop has %s" % (sorted(go), sorted(ours)))
    compared = 0
    for gid, g in sorted(go.items()):
        d = ours.get(gid)
        if d is None or g["state"] == "running":
            continue
        if d["state"] != g["state"]:
            problems.append("goroutine %d: state %r, diagtop %r" % (gid, g["state"], d["state"]))
        at = 0
        for f in g["frames"]:
            while at < len(d["frames"]) and not (d["frames"][at]["function"] == f["function"] and
                                                 d["frames"][at]["file"] == f["file"] and
                                                 d["frames"][at]["line"] == f["line"]):
                at += 1
            if at == len(d["frames"]):
                problems.append("goroutine %d: Go's frame %s %s:%d is not among diagtop's %s" % (
                    gid, f["function"], f["file"], f["line"],
                    [(x["function"], x["line"]) for x in d["frames"]]))
                break
            at += 1
            compared += 1
        c, dc = g["created_by"], d["created_by"]
        if c and (not dc or (dc["function"], dc["file"], dc["line"]) != (c["function"], c["file"], c["line"])):
            problems.append("goroutine %d: created by %s, diagtop %s" % (gid, c, dc))
    for p in problems:
        print(p)
    if not problems:
        print("%d goroutines, %d of Go's frames found in order" % (len(go), compared))
    sys.exit(1 if problems else 0)


main()
