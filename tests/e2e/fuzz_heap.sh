#!/usr/bin/env bash
# libFuzzer on the heap walker and the goroutine reader (tests/fuzz/fuzz_heap.c, ASan and UBSan), for FUZZ_SECONDS
# (default 20): seeded with a memory image built here holding glibc 2.36's main_arena and mp_, a heap with a tcache,
# chunks in use, a fastbin chunk and the top, and a Go runtime's allgs with two goroutines and their wait reasons.
# Any crash, hang, leak or bad read fails, with the input that did it.
. "$(dirname "$0")/../lib.sh"
FUZZ=$ROOT/build/fuzz/fuzz_heap
[ -x "$FUZZ" ] || { fail "no $FUZZ (make build/fuzz/fuzz_heap)"; finish; }
mkdir -p "$TMP/seeds" "$TMP/corpus"
python3 - "$TMP/seeds/heap-and-goroutines" <<'PY'
import struct, sys
BASE = 0x10000000
mem = bytearray(0x8000)
def q(off, v): struct.pack_into("<Q", mem, off, v)
def chunk(off, size, in_use_prev=1): q(off + 8, size | in_use_prev)
# the heap at 0x2000: a tcache (0x290), a chunk in use, a 32-byte chunk in fastbin 0, another in use, the top
h = 0x2000
chunk(h, 0x290); struct.pack_into("<H", mem, h + 16 + 2 * 1, 1)     # tcache bin 1 (48 bytes): one entry
c1 = h + 0x290; chunk(c1, 0x30)                                     # in use (then freed into the tcache)
q(h + 16 + 128 + 8 * 1, BASE + c1 + 16)                              # entries[1] -> c1's user pointer
q(c1 + 16, ((BASE + c1 + 16) >> 12) ^ 0)                             # its next, safe-linked: NULL
c2 = c1 + 0x30; chunk(c2, 0x20)                                     # in fastbin 0
q(c2 + 16, ((BASE + c2 + 16) >> 12) ^ 0)
c3 = c2 + 0x20; chunk(c3, 0x40); mem[c3 + 16:c3 + 28] = b"hello, heap!"
top = c3 + 0x40; chunk(top, 0x1000)
q(16, BASE + c2)            # main_arena.fastbinsY[0]
q(96, BASE + top)           # .top
q(2160, BASE)               # .next: itself, the only arena
q(2184, 0x3000)             # .system_mem
q(0x900 + 96, BASE + h)     # mp_.sbrk_base
# Go: allgs {ptr, len, cap} at 0x5000, allglen at 0x5018, two g's, a wait reason's string
q(0x5000, BASE + 0x5100); q(0x5008, 2); q(0x5010, 2); q(0x5018, 2)
for i, g in enumerate((0x5200, 0x5400)):
    q(0x5100 + 8 * i, BASE + g)
    q(g + 152, i + 1); struct.pack_into("<I", mem, g + 144, 4); mem[g + 176] = 1
    q(g + 56, BASE + 0x6000); q(g + 64, 0x401000); q(g + 200, 0x401234)
q(0x5800 + 16, BASE + 0x5900); q(0x5800 + 24, 12); mem[0x5900:0x590c] = b"chan receive"
head = struct.pack("<16H", 0x5000, 0x5018, 0x5800, 0x5820, 8, 400, 152, 144, 176, 168, 200, 208, 48, 56, 64, 104)
head += bytes(64 - len(head))
open(sys.argv[1], "wb").write(head + mem)
PY
fuzz_run "$FUZZ" "the heap walker and the goroutine reader"
finish
