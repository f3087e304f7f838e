#!/usr/bin/env python3
"""compare_auxv.py GDB_OUTPUT ANALYZE_JSON: every entry of gdb's `info auxv` is in diagtop analyze's
process.auxv, in the same order, with the same type and value, and the same string where gdb shows one; and
diagtop has no entry gdb lacks (gdb lists AT_NULL last, which diagtop leaves out)."""
import json, re, sys

gdb = []
for line in open(sys.argv[1]):
    # "31   AT_EXECFN   File name of executable   0x7ffd0d8d8fd7 \"/path\"", "27   ???   0x1c"
    m = re.match(r'^(\d+)\s+(\S+)\s.*?\s(0x[0-9a-f]+|\d+)(?:\s+"(.*)")?\s*$', line)
    if m:
        gdb.append((int(m.group(1)), int(m.group(3), 0), m.group(4)))
gdb = [e for e in gdb if e[0] != 0]
ours = []
for e in json.load(open(sys.argv[2]))["process"]["auxv"]:
    v = e["value"]
    ours.append((e["type"], int(v, 16) if isinstance(v, str) else v, e.get("string")))
ok = bool(gdb) and len(gdb) == len(ours) and all(
    g[0] == o[0] and g[1] == o[1] and (g[2] is None or g[2] == o[2]) for g, o in zip(gdb, ours))
if not ok:
    print("  gdb:     ", gdb[:25], file=sys.stderr)
    print("  diagtop: ", ours[:25], file=sys.stderr)
sys.exit(0 if ok else 1)
