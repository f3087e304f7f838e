#!/usr/bin/env bash
# diagtop dump of a process with more mappings than e_phnum can count (70,000 > 65,535): e_phnum is PN_XNUM and
# section header 0 (at e_shoff, after the data) holds the real count in sh_info, as the kernel writes it; gdb loads
# the core and reads a known string from the highest of the target's mappings; the dump takes a reasonable time.
# vm.max_map_count is raised for the test and restored in the exit trap (a lock keeps two runs from mixing them).
. "$(dirname "$0")/../lib.sh"

# runs_untraced PID: within 3 s every thread of PID is back asleep in its wait (S: a thread just detached may
# still be waiting for a CPU on a loaded machine) and none is traced. Says what it saw otherwise.
runs_untraced() {
    local i t st tp bad
    for i in $(seq 30); do
        bad=""
        for t in /proc/"$1"/task/*; do
            st=$(awk '{print $3}' "$t/stat") tp=$(awk '/^TracerPid:/ {print $2}' "$t/status")
            [ "$st" = S ] && [ "$tp" = 0 ] || bad="$bad ${t##*/}:$st/tracer=$tp"
        done
        [ -z "$bad" ] && return 0
        sleep 0.1
    done
    echo "  threads not running untraced:$bad" >&2
    return 1
}

if [ "$(id -u)" -ne 0 ]; then
    skip "raising vm.max_map_count needs root"
    finish
fi
exec 9>/tmp/diagtop-test-max_map_count.lock
flock 9
OLD_MAX=$(cat /proc/sys/vm/max_map_count)
restore() {
    cleanup # the target first: it holds the mappings
    echo "$OLD_MAX" >/proc/sys/vm/max_map_count
}
trap restore EXIT
[ "$OLD_MAX" -ge 200000 ] || echo 200000 >/proc/sys/vm/max_map_count

start_target manymaps "$TARGETS/manymaps" 70000; P=$TARGET_PID
wait_ready manymaps || fail "target did not start: $(cat "$TMP/manymaps.err")"
ADDR=$(sed -n 's/.*string=\(0x[0-9a-f]*\).*/\1/p' "$TMP/manymaps.out")
check "the target has more than 65,535 mappings" test "$(wc -l <"/proc/$P/maps")" -gt 70000
CORE=$TMP/core.manymaps

"$DIAGTOP" dump --json -o "$CORE" "$P" >"$TMP/dump.json" 2>"$TMP/dump.err"
check "exit 0, every mapping has a program header" json_eval "$TMP/dump.json" "
    last['path'] == '$CORE' and last['mappings_written'] + last['mappings_skipped'] > 70000"
# Nothing here grows with the square of the mappings: ~1 s in all and ~0.3 s stopped on 2 cores without
# sanitizers; the bounds leave room for AddressSanitizer and a loaded machine, not for quadratic work.
check "a reasonable time: under 20 s in all, under 10 s stopped" json_eval "$TMP/dump.json" "
    last['duration_ms'] < 20000 and last['stopped_ms'] < 10000"
sed -n 's/.*"duration_ms":\([0-9.]*\),"stopped_ms":\([0-9.]*\).*/  dump of 70,000 mappings: \1 ms, stopped \2 ms/p' "$TMP/dump.json"
check "the target runs again, untraced" runs_untraced "$P"
check "ELF header: e_phnum PN_XNUM, one section header whose sh_info is the real count; layout consistent" \
    python3 - "$CORE" "$ADDR" "$TMP/dump.json" <<'PY'
import json, os, struct, sys
core, addr = sys.argv[1], int(sys.argv[2], 16)
s = json.load(open(sys.argv[3]))
with open(core, "rb") as f:
    eh = f.read(64)
    phoff, shoff = struct.unpack_from("<QQ", eh, 32)
    phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from("<HHHHH", eh, 54)
    assert phnum == 0xFFFF, phnum
    assert (shentsize, shnum, shstrndx) == (64, 1, 0), (shentsize, shnum, shstrndx)
    f.seek(shoff)
    sh = f.read(64)
    sh_type, sh_size, sh_link, sh_info = struct.unpack_from("<I", sh, 4)[0], struct.unpack_from("<Q", sh, 32)[0], \
        *struct.unpack_from("<II", sh, 40)
    count = 1 + s["mappings_written"] + s["mappings_skipped"]
    assert (sh_type, sh_size, sh_link, sh_info) == (0, 1, 0, count), (sh_type, sh_size, sh_link, sh_info, count)
    assert os.fstat(f.fileno()).st_size == shoff + 64, "the section header ends the file"
    f.seek(phoff)
    ph = f.read(phentsize * sh_info)
phs = [struct.unpack_from("<IIQQQQQQ", ph, 56 * i) for i in range(sh_info)]
assert phs[0][0] == 4 and all(p[0] == 1 for p in phs[1:]), "PT_NOTE, then PT_LOADs"
assert all(p[2] + p[5] <= shoff for p in phs), "the data ends where the section header starts"
seg = [p for p in phs if p[0] == 1 and p[3] <= addr < p[3] + p[6]]
assert seg and seg[0][5] > 0, ("the highest mapping has its bytes", seg)
PY
gdb -nx -batch "$TARGETS/manymaps" "$CORE" -ex 'bt' -ex "x/s $ADDR" >"$TMP/gdb.txt" 2>&1
check "gdb: the known string in the highest mapping" grep -q "$ADDR:.*\"DIAGTOP-MANYMAPS-STRING-7007\"" "$TMP/gdb.txt"
check "gdb: the backtrace reaches main" grep -qE '#[0-9]+ +0x[0-9a-f]+ in main \(' "$TMP/gdb.txt"
finish
