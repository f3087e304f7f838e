#!/usr/bin/env bash
# A real JVM whose one attach listener thread is stalled by another client (it sent part of a request and holds
# the connection, which blocks HotSpot's listener until that client goes): diagtop's request times out within
# its timeout, the helper is reaped, and once the other client goes the JVM answers diagtop again, unharmed.
. "$(dirname "$0")/../lib.sh"
java_classes Leaky || fail "javac Leaky.java"
start_target leaky java -cp "$CP" Leaky 1000; J=$TARGET_PID
wait_ready leaky || fail "Leaky did not start"
"$DIAGTOP" heap "$J" >/dev/null 2>&1 # the listener is up
check "the listener is up" test -S "/proc/$J/root/tmp/.java_pid$J"

# Two of the five strings, then silence: HotSpot's listener waits for the rest.
start_target staller python3 -c "
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect('/proc/$J/root/tmp/.java_pid$J')
s.sendall(b'1\0jcmd\0')
print('ready', flush=True)
time.sleep(60)
"
STALLER=$TARGET_PID
wait_ready staller || fail "the staller did not connect"
sleep 0.3
T0=$(date +%s%N)
"$DIAGTOP" heap --timeout 1 "$J" >/dev/null 2>"$TMP/stalled.err"
RC=$?
MS=$((($(date +%s%N) - T0) / 1000000))
check "stalled listener: diagtop gives up within its timeout ($MS ms), saying so" bash -c "
    [ $RC -eq 1 ] && [ $MS -ge 900 ] && [ $MS -lt 4000 ] && grep -q 'no complete reply from the JVM within' '$TMP/stalled.err'"
T0=$(date +%s%N)
"$DIAGTOP" stack --timeout 1 --json "$J" >"$TMP/fallback.json" 2>"$TMP/fallback.err"
MS=$((($(date +%s%N) - T0) / 1000000))
check "stalled listener: diagtop stack falls back to the OS threads after the timeout ($MS ms)" bash -c "
    [ $MS -lt 6000 ] && grep -q 'showing the OS threads' '$TMP/fallback.err'"
stop_pid "$STALLER"
for i in $(seq 50); do "$DIAGTOP" heap --json --timeout 2 "$J" >"$TMP/after.json" 2>/dev/null && break; sleep 0.1; done
check "once the other client goes, the JVM answers again" json_eval "$TMP/after.json" "
    any(r['name'] == 'LeakedThing' for r in last['rows'])"
check "the JVM runs on" kill -0 "$J"
finish
