#!/usr/bin/env bash
# diagtop watch --signal and --exit: a process held at the moment it gets SIGABRT (abort() in a worker thread) or
# SIGSEGV (a NULL write), or at its exit, gives a core gdb loads with that thread first, the fault's address in
# its siginfo; then it dies of the signal, or exits, as it would have. The job control it does meanwhile (SIGCHLD,
# SIGSTOP and SIGCONT) is untouched; a thread ending alone is not an exit; diagtop killed leaves it untraced.
. "$(dirname "$0")/../lib.sh"

# run_crash NAME MODE ARGS...: the crasher in MODE watched with ARGS; its exit status in T_STATUS, the log $TMP/NAME.log
run_crash() {
    local name=$1 mode=$2
    shift 2
    mkdir -p "$TMP/$name"
    start_target "$name" "$TARGETS/crasher" "$mode" 1.5
    local pid=$TARGET_PID
    wait_ready "$name"
    timeout -k 5 60 "$DIAGTOP" watch "$pid" "$@" --json --dump-dir "$TMP/$name" >"$TMP/$name.log" 2>"$TMP/$name.err"
    W_STATUS=$?
    wait "$pid" 2>/dev/null
    T_STATUS=$?
    T_PID=$pid
    CORE=$(ls "$TMP/$name"/*.core 2>/dev/null | head -1)
}

run_crash abort abort --signal SEGV,ABRT
check "abort: the watch ends with status 0" test "$W_STATUS" -eq 0
check "abort: the target still dies of SIGABRT (status 134)" test "$T_STATUS" -eq 134
check "abort: its job control went through (SIGCHLD, SIGSTOP, SIGCONT)" grep -qx cont "$TMP/abort.out"
check "abort: a trigger on SIGABRT, then a core" json_eval "$TMP/abort.log" \
    "[d['event'] for d in docs if d['event'] in ('trigger','capture')] == ['trigger','capture'] and \
     [d for d in docs if d['event']=='trigger'][0]['value'] == 6"
check "abort: the core is named <comm>_<pid>_SIGABRT_<UTC>.core" \
    bash -c "[[ '$CORE' == */crasher_${T_PID}_SIGABRT_*Z.core ]]"
gdb -nx -batch "$TARGETS/crasher" "$CORE" -ex 'info threads' -ex 'bt' >"$TMP/gdb-abort.txt" 2>&1
check "abort: gdb's current thread is the worker, in abort from crash_now" \
    bash -c "grep -qE '^\* +1 +Thread .*LWP' '$TMP/gdb-abort.txt' && grep -qE '#[0-9]+ .*abort' '$TMP/gdb-abort.txt' && grep -qE '#[0-9]+ .* crash_now \(' '$TMP/gdb-abort.txt' && grep -qE '#[0-9]+ .* worker \(' '$TMP/gdb-abort.txt'"
check "abort: gdb sees the signal" grep -q 'SIGABRT' "$TMP/gdb-abort.txt"
check "abort: a snapshot (the main thread made the copy; the worker waited with its signal)" json_eval "$TMP/abort.log" \
    "[d['message'].split(',')[0] for d in docs if d['event']=='capture'] == ['snapshot'] and \
     all(0 <= d['pause_ms'] < 1000 for d in docs if d['event']=='capture')"

# A signal the main thread takes: it cannot make the copy, so the core is copied with the process held.
start_target mainsig "$TARGETS/sleeper"; MS=$TARGET_PID
wait_exec "$MS" "$TARGETS/sleeper"
"$DIAGTOP" watch "$MS" --signal TERM --json --dir "$TMP" >"$TMP/mainsig.log" 2>&1 &
WP=$!
PIDS+=("$WP")
for i in $(seq 50); do grep -q watching "$TMP/mainsig.log" && break; sleep 0.1; done
kill -TERM "$MS"
wait "$WP"; WS=$?
wait "$MS"; MST=$?
check "main thread's signal: stop-and-copy, saying why" json_eval "$TMP/mainsig.log" \
    "any(d['event']=='capture' and d['message'].startswith('stop-and-copy (a signal (15) was being delivered to the main thread)') for d in docs)"
check "main thread's signal: the watch ends 0, the target dies of SIGTERM (143)" test "$WS-$MST" = "0-143"

run_crash segv segv --signal SEGV
check "segv: the target still dies of SIGSEGV (status 139)" test "$T_STATUS" -eq 139
gdb -nx -batch "$TARGETS/crasher" "$CORE" -ex 'bt' -ex 'p $_siginfo.si_signo' \
    -ex 'p $_siginfo._sifields._sigfault.si_addr' >"$TMP/gdb-segv.txt" 2>&1
check "segv: the core's first thread faulted in crash_now" grep -qE '^#0 .* crash_now \(' "$TMP/gdb-segv.txt"
check "segv: its siginfo holds SIGSEGV and the faulting address 0x0" \
    bash -c "grep -qE '^\\\$1 = 11' '$TMP/gdb-segv.txt' && grep -qE '^\\\$2 = \(void \*\) 0x0$' '$TMP/gdb-segv.txt'"
check "segv: the trigger says the address" json_eval "$TMP/segv.log" \
    "any(d['event']=='trigger' and '(nil)' in d['message'] or d['event']=='trigger' and '0x0' in d['message'] for d in docs)"

run_crash exit exit --exit
check "exit: the target exits with its own status 7" test "$T_STATUS" -eq 7
check "exit: one trigger, value 7" json_eval "$TMP/exit.log" \
    "[d['value'] for d in docs if d['event']=='trigger'] == [7]"
gdb -nx -batch "$TARGETS/crasher" "$CORE" -ex 'bt' >"$TMP/gdb-exit.txt" 2>&1
check "exit: the core shows exit called from crash_now" grep -qE '#[0-9]+ .* crash_now \(' "$TMP/gdb-exit.txt"

run_crash join join --exit
check "join: a worker ending alone is no exit: one trigger, at main's return (3)" json_eval "$TMP/join.log" \
    "[d['value'] for d in docs if d['event']=='trigger'] == [3]"
check "join: the target exits with status 3" test "$T_STATUS" -eq 3

# diagtop killed while it holds the seize: the target is not traced any more and ends as it would
start_target killed "$TARGETS/crasher" join 2
KP=$TARGET_PID
wait_ready killed
"$DIAGTOP" watch "$KP" --signal ABRT --exit --dump-dir "$TMP" >"$TMP/killed.log" 2>&1 &
WP=$!
PIDS+=("$WP")
for i in $(seq 50); do grep -q watched "$TMP/killed.log" && break; sleep 0.1; done
check "killed: the watch holds the seize" grep -qE "^TracerPid:\s+$WP$" "/proc/$KP/status"
kill -KILL "$WP"; wait "$WP" 2>/dev/null
for i in $(seq 30); do grep -qE '^TracerPid:\s+0$' "/proc/$KP/status" 2>/dev/null && break; sleep 0.1; done
check "killed: the target is untraced at once" grep -qE '^TracerPid:\s+0$' "/proc/$KP/status"
wait "$KP"; KS=$?
check "killed: the target ran on and exited with its own status 3" test "$KS" -eq 3
check "killed: its job control went through" grep -qx joined "$TMP/killed.out"

"$DIAGTOP" watch --name x --signal SEGV >"$TMP/bad" 2>&1; rc=$?
check "--signal with --name: status 2, a PID only" bash -c "[ $rc -eq 2 ] && grep -q 'one PID' '$TMP/bad'"
"$DIAGTOP" watch 1 --signal KILL >"$TMP/bad" 2>&1; rc=$?
check "--signal KILL: refused" bash -c "[ $rc -eq 2 ] && grep -q 'not KILL, STOP' '$TMP/bad'"
finish
