#!/usr/bin/env bash
# diagtop stack against real targets: 1, 8 and 100 threads parked in named nested functions (-g -O2), a stripped
# copy, a stopped process, threads that come and go; every thread appears with the right names and file:line,
# and the target is running (not traced) afterwards.
. "$(dirname "$0")/../lib.sh"

SRC=$ROOT/tests/targets/threads.c
line_of() { grep -n -- "$1" "$SRC" | head -1 | cut -d: -f1; }
PARK_LINE=$(line_of 'for (;;) pause();')
INLINE_LINE=$(line_of '    worker_park();')
MIDDLE_LINE=$(line_of '    worker_inlined_wait();')

untraced_and_running() { # PID [expected state letters]
    local st tracer
    st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)
    tracer=$(awk '/^TracerPid:/ {print $2}' "/proc/$1/status" 2>/dev/null)
    [ "$tracer" = 0 ] && [[ "$st" =~ ^[${2:-RS}]$ ]] || { echo "  state $st, tracer $tracer" >&2; return 1; }
}

for n in 1 8 100; do
    start_target "t$n" "$TARGETS/threads" "$n"; T=$TARGET_PID
    wait_ready "t$n" || fail "threads $n did not start"
    "$DIAGTOP" stack --json "$T" >"$TMP/s$n.json" 2>"$TMP/s$n.err"
    check "$n threads: exit 0" test $? -eq 0
    check "$n threads: every thread appears, named" json_eval "$TMP/s$n.json" "
        len(last['threads']) == $n + 1 and last['pid'] == $T and
        sorted(t['name'] for t in last['threads'] if t['tid'] != $T) == sorted('worker-%d' % k for k in range($n))"
    check "$n threads: workers show park <- inlined wait <- middle <- outer with file:line" json_eval "$TMP/s$n.json" "
        all([(f['function'], f['inlined'], f['file'].endswith('tests/targets/threads.c') if f['file'] else None,
              f['line']) for f in t['frames'] if f['module'] == 'threads'][:5] ==
            [('worker_park', False, True, $PARK_LINE), ('worker_inlined_wait', True, True, $INLINE_LINE),
             ('worker_middle', False, True, $MIDDLE_LINE), ('worker_outer', False, True, $(line_of '    worker_middle(k);')),
             ('worker', False, True, $(line_of '    worker_outer((int)(long)arg);'))]
            for t in last['threads'] if t['tid'] != $T)"
    check "$n threads: libc frames are named (libc6-dbg) and the main thread is in main_wait <- main" json_eval "$TMP/s$n.json" "
        [f['function'] for f in last['threads'][0]['frames'] if f['module'] == 'threads'][:2] == ['main_wait', 'main']
        and all(f['function'] for t in last['threads'] for f in t['frames'] if f['module'] == 'libc.so.6')"
    check "$n threads: addresses are hex strings, the stop is measured" json_eval "$TMP/s$n.json" "
        all(f['pc'].startswith('0x') for t in last['threads'] for f in t['frames']) and 0 < last['stopped_ms'] < 1000"
    check "$n threads: running and untraced afterwards" untraced_and_running "$T"
done

BID=$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 | awk '/Build ID/ {print $3}')
# The copy is written by a detached child after the answer: give it a moment.
cache_written() { # CACHE_HOME: libc's inflated copy is there, uncompressed, and no temporary file is left
    local f="$1/diagtop/debug/$BID.debug"
    for _ in $(seq 100); do [ -s "$f" ] && break; sleep 0.1; done
    [ -s "$f" ] && readelf -S -W "$f" 2>/dev/null | grep -q '\.debug_info ' &&
        ! readelf -S -W "$f" 2>/dev/null | grep -E '\.debug_(info|line) ' | grep -q ' C ' &&
        [ "$(ls -A "$1/diagtop/debug" | grep -c '\.tmp\.')" = 0 ]
}
check "libc's compressed debug info was decompressed once into the cache" cache_written "$XDG_CACHE_HOME"
same_frames() { # A.json B.json
    python3 -c "
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
strip = lambda d: sorted([(f['function'], f['file'], f['line']) for f in t['frames']] for t in d['threads'])
sys.exit(strip(a) != strip(b))" "$1" "$2"
}
# Two first runs at once on an empty cache (two targets: one tracer each): both answer, with the frames of a warm
# run; one copy is left, byte for byte the one made alone, and no temporary file.
start_target "twin" "$TARGETS/threads" 100; T2=$TARGET_PID
wait_ready "twin" || fail "the second threads target did not start"
mkdir -p "$TMP/race"
XDG_CACHE_HOME=$TMP/race "$DIAGTOP" stack --json "$T" >"$TMP/race1.json" 2>"$TMP/race1.err" & R1=$!
XDG_CACHE_HOME=$TMP/race "$DIAGTOP" stack --json "$T2" >"$TMP/race2.json" 2>"$TMP/race2.err" & R2=$!
wait "$R1"; rc1=$?; wait "$R2"; rc2=$?
check "two cold runs at once: both exit 0, silently" bash -c "
    [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ ! -s '$TMP/race1.err' ] && [ ! -s '$TMP/race2.err' ]"
check "two cold runs at once: the frames of a warm run" bash -c "
    $(declare -f same_frames); same_frames '$TMP/race1.json' '$TMP/s100.json' && same_frames '$TMP/race2.json' '$TMP/s100.json'"
check "two cold runs at once: one copy, no temporary file left" cache_written "$TMP/race"
check "two cold runs at once: the copy is the one a single run makes" \
    cmp -s "$TMP/race/diagtop/debug/$BID.debug" "$XDG_CACHE_HOME/diagtop/debug/$BID.debug"
# A read-only or a full cache directory: the answer is the same and nothing alarming is said.
if [ "$(id -u)" -eq 0 ] && mkdir -p "$TMP/rocache" "$TMP/fullcache" && mount -t tmpfs -o ro,size=1m tmpfs "$TMP/rocache" &&
    mount -t tmpfs -o size=64k tmpfs "$TMP/fullcache"; then
    for c in rocache fullcache; do
        XDG_CACHE_HOME=$TMP/$c "$DIAGTOP" stack --json "$T" >"$TMP/$c.json" 2>"$TMP/$c.err"
        check "a $c directory: exit 0, nothing on stderr" bash -c "[ $? -eq 0 ] && [ ! -s '$TMP/$c.err' ]"
        check "a $c directory: the same frames" same_frames "$TMP/$c.json" "$TMP/s100.json"
    done
    sleep 0.5
    check "a full cache directory: no debug copy, nothing half-written" bash -c "
    ! find '$TMP/fullcache' -type f | grep -Eq '\.debug$|\.tmp\.'"
    umount "$TMP/rocache" "$TMP/fullcache"
fi
DIAGTOP_NO_DEBUG_CACHE=1 "$DIAGTOP" stack --json "$T" >"$TMP/nocache.json"
check "frames are the same with and without the cache" same_frames "$TMP/s100.json" "$TMP/nocache.json"
check "the frames learnt are kept per build-id, next to the debug copies" bash -c "
    ls '$XDG_CACHE_HOME/diagtop/debug/$BID.sep.v1.frames' >/dev/null"
for f in "$XDG_CACHE_HOME"/diagtop/debug/*.frames; do head -c 300 /dev/urandom >"$f"; done
"$DIAGTOP" stack --json "$T" >"$TMP/garbled.json" 2>"$TMP/garbled.err"
check "kept frames garbled: the same frames, nothing said" bash -c "
    $(declare -f same_frames); same_frames '$TMP/garbled.json' '$TMP/nocache.json' && [ ! -s '$TMP/garbled.err' ]"
"$DIAGTOP" stack "$T" >"$TMP/text.txt"
check "text: grouped identical stacks and a header with the stop time" bash -c "
    grep -Eq '^Process $T \(threads\): 101 threads, stopped for [0-9.]+ ms' '$TMP/text.txt' &&
    grep -Eq '^100 threads: ' '$TMP/text.txt' &&
    grep -Eq '^  #2 +worker_inlined_wait \(inlined\) +.*threads.c:$INLINE_LINE +\[threads\]' '$TMP/text.txt'"
"$DIAGTOP" stack --no-group "$T" >"$TMP/nogroup.txt"
check "--no-group: one block per thread" test "$(grep -c '^Thread ' "$TMP/nogroup.txt")" -eq 101
WORKER=$(python3 -c "import json; print([t['tid'] for t in json.load(open('$TMP/s100.json'))['threads'] if t['name'] == 'worker-7'][0])")
"$DIAGTOP" stack --json -t "$WORKER" "$T" >"$TMP/one.json"
check "-t TID: only that thread" json_eval "$TMP/one.json" "[t['name'] for t in last['threads']] == ['worker-7']"
"$DIAGTOP" stack --json --no-source "$T" >"$TMP/nosrc.json"
check "--no-source: names without file:line" json_eval "$TMP/nosrc.json" "
    'file' not in last['threads'][1]['frames'][0] and last['threads'][1]['frames'][1]['function'] == 'worker_park'"

start_target stripped "$TARGETS/threads-stripped" 2; S=$TARGET_PID
wait_ready stripped || fail "stripped target did not start"
"$DIAGTOP" stack --json "$S" >"$TMP/stripped.json"
"$DIAGTOP" stack "$S" >"$TMP/stripped.txt"
check "stripped binary: frames unwind through .eh_frame and show module+offset" json_eval "$TMP/stripped.json" "
    all(len([f for f in t['frames'] if f['module'] == 'threads-stripped']) >= 4 and
        all(f['function'] is None and f['module_offset'].startswith('0x')
            for f in t['frames'] if f['module'] == 'threads-stripped')
        for t in last['threads'] if t['tid'] != $S)"
check "stripped binary: text shows threads-stripped+0x..." grep -Eq '#[0-9]+ +threads-stripped\+0x[0-9a-f]+ +\[threads-stripped\]' "$TMP/stripped.txt"

# A stopped target is inspected and stays stopped.
start_target stopped "$TARGETS/threads" 3; P=$TARGET_PID
wait_ready stopped || fail "target did not start"
kill -STOP "$P"
sleep 0.2
"$DIAGTOP" stack --json "$P" >"$TMP/stopped.json"
check "SIGSTOPped target: captured" json_eval "$TMP/stopped.json" "len(last['threads']) == 4 and last['target_was_stopped']"
sleep 0.2
check "SIGSTOPped target: still stopped (T), not traced" untraced_and_running "$P" T
kill -CONT "$P"
sleep 0.2
check "after SIGCONT it runs" untraced_and_running "$P"

# Threads appear and exit during captures: every capture succeeds or fails cleanly; nothing stays traced.
start_target churn "$TARGETS/churn"; C=$TARGET_PID
wait_ready churn
bad=0
for i in $(seq 25); do
    "$DIAGTOP" stack --cpu-sample 0 "$C" >"$TMP/churn.out" 2>&1 || { bad=$((bad + 1)); tail -3 "$TMP/churn.out" >&2; }
done
check "threads coming and going: 25 captures succeed" test "$bad" -eq 0
check "threads coming and going: running and untraced afterwards" untraced_and_running "$C"

# A target that exits while being captured: repeated captures of a short-lived process end cleanly.
exit_bad=0
for i in $(seq 5); do
    "$TARGETS/threads" 4 >/dev/null & E=$!
    PIDS+=("$E")
    (sleep 0.0$((i + 1)); kill -KILL "$E") &
    "$DIAGTOP" stack --cpu-sample 0 "$E" >"$TMP/exit.out" 2>"$TMP/exit.err"
    rc=$?
    wait "$E" 2>/dev/null
    if [ $rc -ne 0 ] && ! grep -Eq 'no process|exited|no threads' "$TMP/exit.err"; then
        fail "capture of an exiting process: status $rc, $(cat "$TMP/exit.err")"
        exit_bad=$((exit_bad + 1))
    fi
done
[ "$exit_bad" -eq 0 ] && ok "a target that exits during capture gives a clean result or a clear error"
finish
