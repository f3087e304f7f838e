#!/usr/bin/env bash
# libFuzzer on the core reader's header, program headers and notes (tests/fuzz/fuzz_core.c, ASan and UBSan), for
# FUZZ_SECONDS (default 20): seeded with the heads of real cores (diagtop's of a 2-thread target, gcore's of the
# same) and a PN_XNUM variant of one. Any crash, leak or bad read fails, with the input that did it.
. "$(dirname "$0")/../lib.sh"
FUZZ=$ROOT/build/fuzz/fuzz_core
[ -x "$FUZZ" ] || { fail "no $FUZZ (make build/fuzz/fuzz_core)"; finish; }
mkdir -p "$TMP/seeds" "$TMP/corpus"
start_target threads "$TARGETS/threads" 1; P=$TARGET_PID
wait_ready threads || fail "threads did not start"
"$DIAGTOP" dump "$P" --stop -o "$TMP/d.core" >/dev/null 2>&1
timeout 60 gcore -o "$TMP/g" "$P" >/dev/null 2>&1
stop_pid "$P"
check "real cores to seed from" test -s "$TMP/d.core" -a -s "$TMP/g.$P"
head -c 60000 "$TMP/d.core" >"$TMP/seeds/diagtop-head"
head -c 60000 "$TMP/g.$P" >"$TMP/seeds/gcore-head"
python3 - "$TMP/seeds/diagtop-head" "$TMP/seeds/xnum" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
phnum = struct.unpack_from("<H", data, 56)[0]
shoff = len(data)
data += struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 0, 0, phnum, 0, 0)
struct.pack_into("<Q", data, 40, shoff)
struct.pack_into("<HHHH", data, 56, 0xffff, 64, 1, 0)
open(sys.argv[2], "wb").write(data)
PY
fuzz_run "$FUZZ" "the core reader"
finish
