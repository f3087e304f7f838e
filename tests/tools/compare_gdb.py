#!/usr/bin/env python3
"""compare_gdb.py GDB_OUTPUT DIAGTOP_JSON: the threads of `gdb -batch -ex 'thread apply all bt' EXE CORE` against
`diagtop analyze CORE --json`: the same LWPs, and in each thread diagtop's frames (each a real frame, not an
inlined call) at PCs gdb shows, in gdb's order. gdb may show more: a tail call has a frame in gdb's view and none
in the unwind tables eu-stack and diagtop follow, and gdb prints no address for a frame at the start of a line.
Prints each difference and exits 1 if there is any."""
import json, re, sys


def parse_gdb(path):
    threads, frames = {}, None
    for line in open(path, errors="replace"):
        m = re.match(r"^Thread \d+ \(.*?LWP (\d+)\)", line)
        if m:
            frames = threads.setdefault(int(m.group(1)), [])
            continue
        m = re.match(r"^#\d+\s+0x([0-9a-f]+) in ", line)
        if m and frames is not None:
            frames.append(int(m.group(1), 16))
    return threads


def main():
    gdb = parse_gdb(sys.argv[1])
    doc = json.load(open(sys.argv[2]))
    ours = {t["tid"]: t["frames"] for t in doc["threads"]}
    problems = []
    if sorted(gdb) != sorted(ours):
        problems.append("threads: gdb %s, diagtop %s" % (sorted(gdb), sorted(ours)))
    compared = 0
    for tid, addrs in sorted(gdb.items()):
        real = [int(f["pc"], 16) for f in ours.get(tid, []) if not f["inlined"]]
        pcs = real[1:]  # the innermost frame's address gdb may leave out
        at = 0
        for pc in pcs:
            while at < len(addrs) and addrs[at] != pc:
                at += 1
            if at == len(addrs):
                problems.append("thread %d: diagtop's frame at 0x%x is not in gdb's stack %s"
                                % (tid, pc, [hex(a) for a in addrs]))
                break
            at += 1
            compared += 1
    for p in problems:
        print(p)
    if not problems:
        print("%d threads, %d frames at gdb's addresses" % (len(gdb), compared))
    sys.exit(1 if problems else 0)


main()
