#!/usr/bin/env bash
# `diagtop analyze CORE` on real cores: diagtop's own (snapshot and stop-and-copy, of C and of Go), gcore's and the
# kernel's (a crash on SIGSEGV, an abort). A Go program's goroutines are checked against what it printed of itself
# (runtime.Stack) just before the dump, and a Go program without DWARF says why it has none. Every thread's stack is compared frame by frame with `eu-stack --core` and with
# gdb's `thread apply all bt`, the auxiliary vector with gdb's `info auxv`; the crash names its signal, address and
# thread first. Then the files: a program
# moved away (missing, named once), found again with --exe and with --sysroot, and a different program at the
# core's path (refused: its build-id is not the core's). Then bad input: a truncated core, one cut before its
# notes, an executable, a core of another architecture, a core with PN_XNUM program headers, hostile bytes in
# the command line.
. "$(dirname "$0")/../lib.sh"

# compare NAME CORE EXE: eu-stack and gdb against diagtop's JSON of CORE.
compare() {
    local name=$1 core=$2 exe=$3
    timeout 60 eu-stack -i -s --core="$core" >"$TMP/$name.eu" 2>"$TMP/$name.eu.err"
    timeout 120 gdb -nx -batch -ex 'set backtrace past-main on' -ex 'set backtrace past-entry on' \
        -ex 'thread apply all bt' "$exe" "$core" >"$TMP/$name.gdb" 2>&1
    check "$name: analyze --json reads it" bash -c "'$DIAGTOP' analyze '$core' --json >'$TMP/$name.json' 2>'$TMP/$name.err' ||
        { cat '$TMP/$name.err'; false; }"
    check "$name: at least eu-stack's frames, names and file:line, in every thread" \
        python3 "$ROOT/tests/tools/compare_eustack.py" "$TMP/$name.eu" "$TMP/$name.json"
    check "$name: gdb's threads, and every frame at one of gdb's addresses in gdb's order" \
        python3 "$ROOT/tests/tools/compare_gdb.py" "$TMP/$name.gdb" "$TMP/$name.json"
    timeout 60 gdb -nx -batch -ex 'info auxv' "$exe" "$core" >"$TMP/$name.auxv" 2>&1
    check "$name: the auxiliary vector is gdb's info auxv, entry for entry, strings too" \
        python3 "$ROOT/tests/tools/compare_auxv.py" "$TMP/$name.auxv" "$TMP/$name.json"
}

# two_cores NAME PID: diagtop's and gcore's cores of the running PID, $TMP/NAME-diagtop.core and
# $TMP/NAME-gcore.core; then PID is stopped.
two_cores() {
    "$DIAGTOP" dump "$2" -o "$TMP/$1-diagtop.core" >/dev/null 2>&1
    timeout 60 gcore -o "$TMP/$1-gcore" "$2" >/dev/null 2>&1 && mv "$TMP/$1-gcore.$2" "$TMP/$1-gcore.core"
    stop_pid "$2"
}

# has_chain JSON TID_EXPR FUNCTIONS...: a thread (tid == TID_EXPR, or any when "any") has these functions in a row
has_chain() {
    python3 - "$@" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1])); which = sys.argv[2]; want = sys.argv[3:]
for t in doc["threads"]:
    if which != "any" and t["tid"] != int(which):
        continue
    got = [f["function"] for f in t["frames"]]
    if any(got[i:i + len(want)] == want for i in range(len(got))):
        sys.exit(0)
print("  no thread with", want, [[f["function"] for f in t["frames"]] for t in doc["threads"]][:4], file=sys.stderr)
sys.exit(1)
PY
}

# ---- diagtop's cores and gcore's, of the threads target ----
start_target threads "$TARGETS/threads" 6; P=$TARGET_PID
wait_ready threads || fail "threads did not start"
sleep 0.2
"$DIAGTOP" dump "$P" -o "$TMP/snap.core" >"$TMP/snap.out" 2>&1
"$DIAGTOP" dump "$P" --stop -o "$TMP/stop.core" >"$TMP/stop.out" 2>&1
timeout 60 gcore -o "$TMP/gcore" "$P" >"$TMP/gcore.out" 2>&1
stop_pid "$P"
for kind in snap stop; do
    compare "diagtop $kind core" "$TMP/$kind.core" "$TARGETS/threads"
    check "diagtop $kind core: 7 threads" json_eval "$TMP/diagtop $kind core.json" "len(last['threads']) == 7"
    check "diagtop $kind core: the worker chain, inlined call included" \
        has_chain "$TMP/diagtop $kind core.json" any __libc_pause worker_park worker_inlined_wait worker_middle worker_outer worker
    check "diagtop $kind core: no signal (a live process's dump), pid $P" json_eval "$TMP/diagtop $kind core.json" \
        "last['signal'] is None and last['process']['pid'] == $P and last['process']['name'] == 'threads' and not last['truncated']"
done
check "gcore wrote a core" test -s "$TMP/gcore.$P"
compare "gcore core" "$TMP/gcore.$P" "$TARGETS/threads"
check "gcore core: the main thread in main_wait" has_chain "$TMP/gcore core.json" "$P" main_wait main
# a Go program: its unwind tables only in .debug_frame; goroutine stacks end at runtime.goexit
start_target go "$TARGETS/gostacks"; G=$TARGET_PID
wait_ready go || fail "gostacks did not start"
"$DIAGTOP" dump "$G" -o "$TMP/go.core" >/dev/null 2>&1
stop_pid "$G"
compare "Go core" "$TMP/go.core" "$TARGETS/gostacks"
check "Go core: the blocked reader goroutine's chain, to runtime.goexit" \
    has_chain "$TMP/Go core.json" any main.blockedRead main.reader main.main.func2 runtime.goexit
# a Go program's goroutines, read from the runtime's structures in the core, against its own runtime.Stack
GO_T0=$(date +%s.%N)
start_target goparked env GOPARKED_TRACE="$TMP/goparked.trace" "$TARGETS/goparked"; GP=$TARGET_PID
wait_ready goparked || fail "goparked did not start"
GO_T1=$(date +%s.%N)
two_cores goparked "$GP"
for kind in diagtop gcore; do
    core=$TMP/goparked-$kind.core
    "$DIAGTOP" analyze "$core" --json >"$TMP/goparked-$kind.json" 2>"$TMP/goparked-$kind.err"
    check "Go goroutines from $kind's core: the ids, states, frames and creators the program printed of itself" \
        python3 "$ROOT/tests/tools/compare_goroutines.py" "$TMP/goparked.trace" "$TMP/goparked-$kind.json"
done
check "Go goroutines: diagtop's core says when it was taken, and how long each parked goroutine had waited then" \
    json_eval "$TMP/goparked-diagtop.json" "
    $GO_T1 - 1 <= last['process']['taken_unix_seconds'] <= $GO_T1 + 30 and
    all(g['waited_s'] is not None and 0 <= g['waited_s'] <= last['process']['taken_unix_seconds'] - $GO_T0
        for g in last['goroutines']['list'] if g['state'] in ('chan receive', 'select', 'semacquire') and not g['system'])"
check "... gcore's core has no such note: no taken time, no waited_s (since-after-start only)" \
    json_eval "$TMP/goparked-gcore.json" "
    last['process']['taken_unix_seconds'] is None and all(g['waited_s'] is None for g in last['goroutines']['list'])"
check "Go goroutines: the runtime's own goroutines are there too, marked system" json_eval "$TMP/goparked-diagtop.json" \
    "any(g['system'] for g in last['goroutines']['list']) and last['goroutines']['error'] is None"
"$DIAGTOP" analyze "$TMP/goparked-diagtop.core" >"$TMP/goparked.txt" 2>&1
check "Go goroutines text: grouped by state and stack, with the frames and where they were created" bash -c "
    grep -Eq '^5 goroutines \[chan receive(, since [0-9.]+ s after start|, up to [0-9.]+ s when dumped)?\]: [0-9]+ [0-9]+ [0-9]+ [0-9]+ [0-9]+$' '$TMP/goparked.txt' &&
    grep -Eq '^3 goroutines \[select' '$TMP/goparked.txt' && grep -Eq '^2 goroutines \[semacquire' '$TMP/goparked.txt' &&
    grep -Eq '^Goroutine [0-9]+ \[IO wait' '$TMP/goparked.txt' &&
    grep -A8 '^5 goroutines \[chan receive' '$TMP/goparked.txt' | grep -q 'main.waitRecv+0x[0-9a-f]* *.*goparked/main.go:18' &&
    grep -A8 '^5 goroutines \[chan receive' '$TMP/goparked.txt' | grep -q '^  created by main.main  .*goparked/main.go:' &&
    grep -q '^Goroutines: .* (the runtime.s own hidden' '$TMP/goparked.txt' && grep -q '^Threads: ' '$TMP/goparked.txt' &&
    grep -Eq '^  Taken: 20[0-9-]+ [0-9:]+ UTC, by diagtop$' '$TMP/goparked.txt'"
"$DIAGTOP" analyze "$TMP/goparked-diagtop.core" --all-goroutines >"$TMP/goparked-all.txt" 2>&1
check "--all-goroutines: the runtime's own shown too (more blocks)" bash -c "
    [ \$(grep -Ec '^(Goroutine [0-9]+|[0-9]+ goroutines) ' '$TMP/goparked-all.txt') -gt \$(grep -Ec '^(Goroutine [0-9]+|[0-9]+ goroutines) ' '$TMP/goparked.txt') ]"
check "a C program's core has no goroutines (null)" json_eval "$TMP/diagtop snap core.json" "last['goroutines'] is None"
# the same program without its DWARF: it says so, and the thread stacks stand alone
mkdir -p "$TMP/nodwarf"
objcopy --strip-debug "$TARGETS/goparked" "$TMP/nodwarf/goparked"
start_target nodwarf "$TMP/nodwarf/goparked"; ND=$TARGET_PID
wait_ready nodwarf || fail "goparked without DWARF did not start"
"$DIAGTOP" dump "$ND" -o "$TMP/nodwarf.core" >/dev/null 2>&1
stop_pid "$ND"
"$DIAGTOP" analyze "$TMP/nodwarf.core" --json >"$TMP/nodwarf.json" 2>"$TMP/nodwarf.err"
check "Go without DWARF: says why there are no goroutines, and shows every thread's stack" json_eval "$TMP/nodwarf.json" \
    "'stripped' in last['goroutines']['error'] and not last['goroutines']['list'] and len(last['threads']) >= 2 and all(t['frames'] for t in last['threads'])"
"$DIAGTOP" analyze "$TMP/snap.core" >"$TMP/snap.txt" 2>&1
check "text: the six workers grouped in one block" grep -q '^6 threads: ' "$TMP/snap.txt"
check "text: the main thread named so, and file:line" bash -c "grep -q '^Thread $P (main)$' '$TMP/snap.txt' &&
    grep -q 'main_wait+0x[0-9a-f]* *tests/targets/threads.c:[0-9]*  \[threads\]' '$TMP/snap.txt'"
check "text: says it is a live process's dump, with its command line" bash -c "
    grep -q '^  Signal: none (a dump of a live process)' '$TMP/snap.txt' &&
    grep -q '^  Command: $TARGETS/threads 6$' '$TMP/snap.txt'"
check "text: the files with frames, each with its build-id and found" bash -c "
    grep -Eq '^  [0-9a-f]{16}-[0-9a-f]{16} $TARGETS/threads +build-id [0-9a-f]{40}  [0-9]+ frames, found' '$TMP/snap.txt' &&
    grep -Eq 'libc.so.6 +build-id [0-9a-f]{40}  [0-9]+ frames, (found|read from)' '$TMP/snap.txt' && ! grep -q MISSING '$TMP/snap.txt'"
"$DIAGTOP" analyze "$TMP/snap.core" --no-source --no-group >"$TMP/snap-plain.txt" 2>&1
check "--no-group --no-source: one block per thread, no file:line" bash -c "
    [ \$(grep -c '^Thread ' '$TMP/snap-plain.txt') = 7 ] && ! grep -q 'threads.c:' '$TMP/snap-plain.txt'"

# ---- the kernel's cores: a crash and an abort ----
pattern=$(cat /proc/sys/kernel/core_pattern)
case "$pattern" in
'|'* | /*) skip "kernel cores: core_pattern is '$pattern' (a pipe or another directory), not a file in the cwd" ;;
*)
    for what in segv abort; do
        mkdir -p "$TMP/k$what"
        (cd "$TMP/k$what" && ulimit -c unlimited && exec "$TARGETS/crasher" "$what" 0.3) >"$TMP/k$what.out" 2>&1 &
        K=$!
        PIDS+=("$K")
        wait "$K" 2>/dev/null
        kcore=$(ls "$TMP/k$what"/core* 2>/dev/null | head -1)
        if [ -z "$kcore" ]; then
            fail "kernel $what: no core written in the cwd (core_pattern '$pattern')"
            continue
        fi
        compare "kernel $what core" "$kcore" "$TARGETS/crasher"
        "$DIAGTOP" analyze "$kcore" >"$TMP/k$what.txt" 2>&1
        if [ "$what" = segv ]; then
            check "kernel segv: SIGSEGV at 0x0, address not mapped, taken by the worker" json_eval "$TMP/kernel segv core.json" \
                "last['signal']['name'] == 'SIGSEGV' and last['signal']['address'] == '0x0' and last['signal']['code'] == 1 and last['signal']['tid'] == last['threads'][0]['tid'] and last['signal']['tid'] != $K"
            check "kernel segv: the faulting thread first, in crash_now < worker" \
                has_chain "$TMP/kernel segv core.json" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["threads"][0]["tid"])' "$TMP/kernel segv core.json")" crash_now worker
            check "kernel segv text: signal, address and thread first" bash -c "
                grep -q '^  Signal: SIGSEGV (address not mapped) at 0x0 (a NULL pointer' '$TMP/ksegv.txt' &&
                sed -n '/^Thread /{p;q}' '$TMP/ksegv.txt' | grep -q ': took SIGSEGV (address not mapped) at 0x0' &&
                grep -A1 ': took SIGSEGV' '$TMP/ksegv.txt' | grep -q '#0   crash_now+0x[0-9a-f]*  *tests/targets/crasher.c:'"
        else
            check "kernel abort: SIGABRT sent by tkill from the process itself, no address" json_eval "$TMP/kernel abort core.json" \
                "last['signal']['name'] == 'SIGABRT' and last['signal']['address'] is None and last['signal']['sender_pid'] == $K and last['threads'][0]['tid'] == last['signal']['tid']"
            check "kernel abort: the aborting thread first, in abort" \
                has_chain "$TMP/kernel abort core.json" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["threads"][0]["tid"])' "$TMP/kernel abort core.json")" __GI_abort crash_now worker
        fi
    done
    ;;
esac

# ---- files that moved, were rebuilt, or live under a sysroot ----
mkdir -p "$TMP/app" "$TMP/root$TMP/app"
cp "$TARGETS/threads" "$TMP/app/prog"
start_target prog "$TMP/app/prog" 2; Q=$TARGET_PID
wait_ready prog || fail "prog did not start"
"$DIAGTOP" dump "$Q" -o "$TMP/prog.core" >/dev/null 2>&1
stop_pid "$Q"
mv "$TMP/app/prog" "$TMP/moved-prog"
"$DIAGTOP" analyze "$TMP/prog.core" >"$TMP/gone.txt" 2>&1
check "program moved: named MISSING once, with its build-id, its frames as file+offset" bash -c "
    [ \$(grep -c 'MISSING' '$TMP/gone.txt') = 1 ] &&
    grep -Eq '$TMP/app/prog +build-id [0-9a-f]{40}  [0-9]+ frames, MISSING: its frames show as file\+offset' '$TMP/gone.txt' &&
    grep -q '^1 file with frames in it is missing: pass --sysroot DIR or --exe PATH' '$TMP/gone.txt' &&
    grep -q 'prog+0x[0-9a-f]* *\[prog\]' '$TMP/gone.txt' && ! grep -q worker_park '$TMP/gone.txt'"
"$DIAGTOP" analyze "$TMP/prog.core" --exe "$TMP/moved-prog" --json >"$TMP/exe.json" 2>"$TMP/exe.err"
check "--exe: the moved program's frames named again" has_chain "$TMP/exe.json" any worker_park worker_inlined_wait worker_middle
check "--exe: nothing missing" json_eval "$TMP/exe.json" "last['missing_files'] == 0"
cp "$TMP/moved-prog" "$TMP/root$TMP/app/prog"
"$DIAGTOP" analyze "$TMP/prog.core" --sysroot "$TMP/root" --json >"$TMP/sysroot.json" 2>"$TMP/sysroot.err"
check "--sysroot: frames named from the copy under it, and the file says so" bash -c "
    python3 - '$TMP/sysroot.json' '$TMP/root$TMP/app/prog' <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = [f['function'] for t in d['threads'] for f in t['frames']]
prog = [m for m in d['modules'] if m['name'].endswith('/app/prog')]
ok = 'worker_park' in names and prog and prog[0]['file'] == sys.argv[2] and d['missing_files'] == 0
print('  ', prog, d['missing_files'], file=sys.stderr) if not ok else None
sys.exit(0 if ok else 1)
PY"
cp "$TARGETS/ticker" "$TMP/app/prog" # another program at the core's path: its symbols would all be wrong
"$DIAGTOP" analyze "$TMP/prog.core" --json >"$TMP/rebuilt.json" 2>&1
check "a different program at the core's path: not used (build-id differs), said missing" json_eval "$TMP/rebuilt.json" \
    "last['missing_files'] == 1 and not any(f['function'] and f['module'] == 'prog' for t in last['threads'] for f in t['frames'])"

# ---- the native heap, and two cores compared ----
start_target heapshape "$TARGETS/heapshape"; HS=$TARGET_PID
wait_ready heapshape || fail "heapshape did not start"
two_cores heap "$HS"
for kind in diagtop gcore; do
    core=$TMP/heap-$kind.core
    # the first run on a box: libc's debug file inflated only as far as the lookups (malloc's unit among them) need
    mkdir -p "$TMP/fresh-heap-$kind"
    XDG_CACHE_HOME=$TMP/fresh-heap-$kind "$DIAGTOP" analyze "$core" --json >"$TMP/heap-$kind.json" 2>"$TMP/heap-$kind.err"
    check "heap of $kind's core: to the block, the chunks in use of each size the target holds, freed ones left out" \
        json_eval "$TMP/heap-$kind.json" "(lambda h, c: h['walked'] and h['allocator'] == 'glibc' and c.get(1008) == 995 and c.get(96) == 30 and c.get(1808) == 296)(last['heap'], {k['chunk_size']: k['count'] for k in last['heap']['classes']})"
    check "heap of $kind's core: three arenas, the 3 mmapped blocks (as malloc counts them), 25 in the tcache and a fastbin" \
        json_eval "$TMP/heap-$kind.json" "last['heap']['arenas'] == 3 and last['heap']['mmapped_chunks'] == 3 and last['heap']['mmapped_expected'] == 3 and last['heap']['cached_chunks'] == 25 and last['heap']['warning'] is None"
done
check "the layout kept per libc build-id; read from it the next time, the same heap" bash -c "
    ls '$TMP/fresh-heap-diagtop/diagtop/debug/'*.malloc >/dev/null &&
    XDG_CACHE_HOME='$TMP/fresh-heap-diagtop' '$DIAGTOP' analyze '$TMP/heap-diagtop.core' --json >'$TMP/heap-again.json' &&
    python3 -c 'import json, sys; a, b = (json.load(open(p))[\"heap\"] for p in sys.argv[1:3]); sys.exit(a != b)' '$TMP/heap-diagtop.json' '$TMP/heap-again.json'"
check "heap: samples of the biggest sizes with their first bytes (the blocks' own text)" json_eval "$TMP/heap-diagtop.json" \
    "any(bytes.fromhex(s['head_hex']).startswith(b'heapshape block ') for k in last['heap']['classes'] if k['chunk_size'] == 1008 for s in k['samples'])"
"$DIAGTOP" analyze "$TMP/heap-diagtop.core" >"$TMP/heap.txt" 2>&1
check "heap text: totals, then sizes by bytes, with a block's text" bash -c "
    grep -Eq '^Native heap \(glibc malloc, 3 arenas\): .* in use in [0-9]+ chunks; .* free in [0-9]+ chunks \(25 in the tcache and fastbins\)' '$TMP/heap.txt' &&
    grep -Eq '^ +1008 +995 +979.5 KiB  0x[0-9a-f]+: \"heapshape block [0-9]+\"' '$TMP/heap.txt' &&
    grep -q '^  mmapped: 3 chunks, ' '$TMP/heap.txt'"
check "--no-heap: no heap walked" bash -c "'$DIAGTOP' analyze '$TMP/heap-diagtop.core' --no-heap --json | python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)[\"heap\"] is not None)'"
check "a Go program: its heap is said to be the Go runtime's" json_eval "$TMP/goparked-diagtop.json" \
    "not last['heap']['walked'] and 'Go runtime' in last['heap']['error']"
start_target leaker "$TARGETS/heapshape" leak; HL=$TARGET_PID
wait_ready leaker || fail "heapshape leak did not start"
"$DIAGTOP" dump "$HL" -o "$TMP/leak1.core" >/dev/null 2>&1
sleep 2
"$DIAGTOP" dump "$HL" -o "$TMP/leak2.core" >/dev/null 2>&1
stop_pid "$HL"
"$DIAGTOP" analyze "$TMP/leak1.core" "$TMP/leak2.core" --json >"$TMP/diff.json" 2>"$TMP/diff.err"
check "two cores 2 s apart of a leaking program: the leaking size (720) on top of the diff, grown by hundreds" \
    json_eval "$TMP/diff.json" "last['same_program'] and last['heap']['sizes'][0]['chunk_size'] == 720 and last['heap']['sizes'][0]['new_count'] - last['heap']['sizes'][0]['old_count'] > 100 and all(s['new_count'] == s['old_count'] for s in last['heap']['sizes'][1:] if s['chunk_size'] in (1008, 1808, 96))"
"$DIAGTOP" analyze "$TMP/leak1.core" "$TMP/leak2.core" >"$TMP/diff.txt" 2>&1
check "diff text: the leak's size first, with its growth" bash -c "
    grep -q '^Cores .*leak1.core -> .*leak2.core: process $HL (heapshape) -> $HL$' '$TMP/diff.txt' &&
    grep -A2 '^       CHUNK' '$TMP/diff.txt' | sed -n 2p | grep -Eq '^ +720 +[0-9]+ +\+[0-9]{3,} '"
"$DIAGTOP" analyze "$TMP/snap.core" "$TMP/heap-diagtop.core" --json >"$TMP/diff2.json" 2>&1
check "diff of two programs: said not the same; the stacks that differ listed" json_eval "$TMP/diff2.json" \
    "not last['same_program'] and any(s['kind'] == 'thread' and s['old_count'] == 6 and s['new_count'] == 0 for s in last['stacks'])"

# ---- bad input ----
size=$(stat -c %s "$TMP/stop.core")
head -c $((size / 2)) "$TMP/stop.core" >"$TMP/half.core"
check "a core cut in half: read, and says it is truncated" bash -c "
    '$DIAGTOP' analyze '$TMP/half.core' >'$TMP/half.txt' 2>&1 && grep -q '^  Truncated: .* of .* (a dump cut short?)' '$TMP/half.txt' &&
    '$DIAGTOP' analyze '$TMP/half.core' --json | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(not d[\"truncated\"] or d[\"needed_size\"] <= d[\"file_size\"])'"
head -c 3000 "$TMP/stop.core" >"$TMP/head.core"
check "a core cut before its notes end: one clear line, exit 1" bash -c "
    '$DIAGTOP' analyze '$TMP/head.core' >'$TMP/head.out' 2>'$TMP/head.err'; [ \$? = 1 ] && [ \$(wc -l <'$TMP/head.err') = 1 ] &&
    grep -q 'head.core: the notes run past the end of the file: the core is truncated' '$TMP/head.err'"
check "an executable: not a core" bash -c "
    '$DIAGTOP' analyze '$TARGETS/threads' 2>&1 >/dev/null | grep -q 'threads: an ELF shared object or PIE executable, not a core'"
cp "$TMP/stop.core" "$TMP/arm.core"
printf '\xb7\x00' | dd of="$TMP/arm.core" bs=1 seek=18 conv=notrunc status=none
check "another architecture: said so in one line" bash -c "
    '$DIAGTOP' analyze '$TMP/arm.core' 2>&1 >/dev/null | grep -q 'arm.core: a core of aarch64 (ELF machine 183): diagtop reads x86-64 cores'"
python3 - "$TMP/stop.core" "$TMP/xnum.core" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
phnum = struct.unpack_from("<H", data, 56)[0]
shoff = len(data)
data += struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 0, 0, phnum, 0, 0)  # section 0: sh_info holds the count
struct.pack_into("<Q", data, 40, shoff)       # e_shoff
struct.pack_into("<HHHH", data, 56, 0xffff, 64, 1, 0)  # e_phnum = PN_XNUM, e_shentsize, e_shnum, e_shstrndx
open(sys.argv[2], "wb").write(data)
PY
"$DIAGTOP" analyze "$TMP/xnum.core" --json >"$TMP/xnum.json" 2>"$TMP/xnum.err"
check "PN_XNUM program headers (counted in section 0): the same threads and frames" bash -c "
    python3 - '$TMP/xnum.json' '$TMP/diagtop stop core.json' <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda d: sorted((t['tid'], [f['pc'] for f in t['frames']]) for t in d['threads'])
sys.exit(0 if key(a) == key(b) and a['threads'] else 1)
PY"
check "random bytes with an ELF magic: one line, exit 1, no crash" bash -c "
    { printf '\177ELF'; head -c 4000 /dev/urandom; } >'$TMP/noise.core'
    '$DIAGTOP' analyze '$TMP/noise.core' >/dev/null 2>'$TMP/noise.err'; [ \$? = 1 ] && [ \$(wc -l <'$TMP/noise.err') = 1 ]"

# hostile bytes in the command line the core recorded
start_target hostile bash -c "exec -a \$'\\e]0;owned\\a\\e[31mred' '$TARGETS/sleeper' \$'\\e[2Jarg'"; H=$TARGET_PID
wait_exec "$H" "$TARGETS/sleeper" || fail "hostile sleeper did not start"
"$DIAGTOP" dump "$H" -o "$TMP/hostile.core" >/dev/null 2>&1
stop_pid "$H"
"$DIAGTOP" analyze "$TMP/hostile.core" >"$TMP/hostile.txt" 2>&1
check "escape sequences in the recorded command line: shown, not sent to the terminal" bash -c "
    grep -q '^  Command: ' '$TMP/hostile.txt' && ! grep -q \$'\\x1b' '$TMP/hostile.txt' && ! grep -q \$'\\x07' '$TMP/hostile.txt'"
check "... and kept as bytes in JSON" bash -c "
    '$DIAGTOP' analyze '$TMP/hostile.core' --json | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(\"\\x1b[2Jarg\" not in d[\"process\"][\"args\"])'"
finish
