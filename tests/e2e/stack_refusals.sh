#!/usr/bin/env bash
# diagtop stack refuses clearly and touches nothing: no such process, a zombie, a kernel thread, a process already
# under a debugger, bad arguments, another user's process (EPERM naming what is missing), and a signal during
# the capture.
. "$(dirname "$0")/../lib.sh"

expect() { # expect WHAT STATUS REGEX CMD...
    local what=$1 want=$2 re=$3
    shift 3
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    if [ "$rc" -eq "$want" ] && grep -Eq -- "$re" "$TMP/err"; then ok "$what"
    else fail "$what: status $rc, stderr: $(cat "$TMP/err")"; fi
}
expect "no PID" 2 "which process" "$DIAGTOP" stack
expect "not a PID" 2 "not a process id" "$DIAGTOP" stack abc
expect "bad -t" 2 "not a thread id" "$DIAGTOP" stack -t x 1
expect "no such process" 1 "no process 999999" "$DIAGTOP" stack 999999
expect "kernel thread" 1 "kernel thread" "$DIAGTOP" stack 2

# A zombie: its parent never reaps it.
start_target zparent bash -c 'sleep 0.01 & exec sleep 600'; ZP=$TARGET_PID
sleep 0.5
Z=$(ps -o pid=,stat= --ppid "$ZP" | awk '$2 ~ /^Z/ {print $1}' | head -1)
if [ -n "$Z" ]; then expect "zombie" 1 "is a zombie" "$DIAGTOP" stack "$Z"; else fail "no zombie was made"; fi

start_target threads "$TARGETS/threads" 2; T=$TARGET_PID
wait_ready threads
expect "-t of another process's thread" 1 "is not a thread of process" "$DIAGTOP" stack -t "$ZP" "$T"

# Already traced by gdb.
gdb -nx -batch -p "$T" -ex 'shell sleep 4' >/dev/null 2>&1 &
GDB=$!
PIDS+=("$GDB")
for i in $(seq 50); do [ "$(awk '/^TracerPid:/ {print $2}' /proc/$T/status)" != 0 ] && break; sleep 0.1; done
expect "already traced: names the debugger" 1 "already traced by process $GDB \(gdb\)" "$DIAGTOP" stack "$T"
wait "$GDB"

# EPERM as another user, with the reason.
if [ "$(id -u)" -eq 0 ]; then
    expect "another user's process: permission denied, naming uid and CAP_SYS_PTRACE" 1 \
        "permission denied .*uid 0.*CAP_SYS_PTRACE" \
        env XDG_CONFIG_HOME=/nonexistent setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
        "$DIAGTOP" stack "$T"
    check "after EPERM the target is untouched" test "$(awk '/^TracerPid:/ {print $2}' /proc/$T/status)" = 0
else
    skip "EPERM check needs root"
fi

# SIGTERM during the capture (in its CPU sampling): it stops at once, nothing attached.
"$DIAGTOP" stack --cpu-sample 5 "$T" >"$TMP/int.out" 2>"$TMP/int.err" &
D=$!
PIDS+=("$D")
sleep 0.5
kill -TERM "$D"
wait "$D"
rc=$?
check "SIGTERM during a capture: ends with an error, says cancelled" bash -c "[ $rc -eq 1 ] && grep -q cancelled '$TMP/int.err'"
check "SIGTERM during a capture: the target runs, untraced" bash -c \
    "[ \$(awk '/^TracerPid:/ {print \$2}' /proc/$T/status) = 0 ] && [ \$(awk '{print \$3}' /proc/$T/stat) = S ]"
finish
