#!/usr/bin/env bash
# libFuzzer on the HPROF reader and every question `diagtop analyze` asks (tests/fuzz/fuzz_hprof.c, ASan and
# UBSan), for FUZZ_SECONDS (default 45): seeded with the head of a real JVM's heap dump (strings, class loads, class
# dumps, the first objects) and a whole small dump built here (classes, instances, arrays, roots, a weak
# reference). Any crash, leak or bad read fails, with the input that did it.
. "$(dirname "$0")/../lib.sh"
FUZZ=$ROOT/build/fuzz/fuzz_hprof
[ -x "$FUZZ" ] || { fail "no $FUZZ (make build/fuzz/fuzz_hprof)"; finish; }
java_classes Sleeper || fail "javac Sleeper.java"
mkdir -p "$TMP/seeds" "$TMP/corpus"
start_target sleeper java -Xmx64m -cp "$CP" Sleeper; J=$TARGET_PID
for i in $(seq 100); do jcmd "$J" VM.version >/dev/null 2>&1 && break; sleep 0.1; done
jcmd "$J" GC.heap_dump "$TMP/real.hprof" >/dev/null 2>&1
stop_pid "$J"
check "a real dump to seed from" test -s "$TMP/real.hprof"
head -c 60000 "$TMP/real.hprof" >"$TMP/seeds/real-head"
python3 - "$TMP/seeds/built" <<'PY'
import struct, sys
def u(v, n): return v.to_bytes(n, "big")
out = bytearray(b"JAVA PROFILE 1.0.2\0" + u(8, 4) + u(0, 8))
def rec(tag, body): out.extend(u(tag, 1) + u(0, 4) + u(len(body), 4) + body)
names = ["java/lang/Object", "java/lang/Class", "Node", "Holder", "java/lang/ref/Reference", "WeakThing",
         "next", "other", "v", "ROOT", "referent", "queue", "java/lang/String", "value", "coder", "[B"]
for i, s in enumerate(names, 1): rec(1, u(i, 8) + s.encode())
classes = {0x100: 1, 0x110: 2, 0x120: 3, 0x130: 4, 0x140: 5, 0x150: 6, 0x160: 13}
for cid, nid in classes.items(): rec(2, u(1, 4) + u(cid, 8) + u(0, 4) + u(nid, 8))
h = bytearray()
def cdump(cid, sup, size, statics, fields):
    h.extend(u(0x20, 1) + u(cid, 8) + u(0, 4) + u(sup, 8) + u(0, 40) + u(size, 4) + u(0, 2) + u(len(statics), 2))
    for n, t, v in statics: h.extend(u(n, 8) + u(t, 1) + u(v, 8 if t == 2 else 4))
    h.extend(u(len(fields), 2))
    for n, t in fields: h.extend(u(n, 8) + u(t, 1))
cdump(0x100, 0, 0, [], []); cdump(0x110, 0x100, 0, [], [])
cdump(0x120, 0x100, 20, [], [(7, 2), (8, 2), (9, 10)]); cdump(0x130, 0x100, 0, [(10, 2, 0x1000)], [])
cdump(0x140, 0x100, 16, [], [(11, 2), (12, 2)]); cdump(0x150, 0x140, 16, [], [])
cdump(0x160, 0x100, 9, [], [(14, 2), (15, 8)])
def node(i, nxt, oth, v): h.extend(u(0x21, 1) + u(i, 8) + u(0, 4) + u(0x120, 8) + u(20, 4) + u(nxt, 8) + u(oth, 8) + u(v, 4))
node(0x1000, 0x1100, 0x1200, 1); node(0x1100, 0x1300, 0, 2); node(0x1200, 0x1300, 0, 3); node(0x1300, 0, 0x1800, 4)
h.extend(u(0x21, 1) + u(0x1700, 8) + u(0, 4) + u(0x150, 8) + u(16, 4) + u(0x1300, 8) + u(0, 8))
h.extend(u(0x21, 1) + u(0x1800, 8) + u(0, 4) + u(0x160, 8) + u(9, 4) + u(0x1900, 8) + u(0, 1))
h.extend(u(0x23, 1) + u(0x1900, 8) + u(0, 4) + u(5, 4) + u(8, 1) + b"hello")
h.extend(u(0x22, 1) + u(0x1a00, 8) + u(0, 4) + u(2, 4) + u(0x100, 8) + u(0x1000, 8) + u(0x1700, 8))
h.extend(u(0x01, 1) + u(0x1700, 8) + u(0, 8))
h.extend(u(0x08, 1) + u(0x1a00, 8) + u(1, 4) + u(0, 4))
h.extend(u(0x03, 1) + u(0x1200, 8) + u(1, 4) + u(0, 4))
rec(0x1c, bytes(h)); rec(0x2c, b"")
open(sys.argv[1], "wb").write(out)
PY
FUZZ_SECONDS=${FUZZ_SECONDS:-45} fuzz_run "$FUZZ" "the HPROF reader and every question analyze asks"
finish
