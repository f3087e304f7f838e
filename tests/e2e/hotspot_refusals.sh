#!/usr/bin/env bash
# JVMs diagtop must not or cannot attach to, each refused with the reason and left running: not a JVM, attach
# disabled (command line, JAVA_TOOL_OPTIONS; _JAVA_OPTIONS overriding back), -Xrs (its listener starts with the
# JVM and is used; without the socket diagtop never sends the SIGQUIT that would kill it), and attach disabled
# where diagtop cannot see it (an @argfile): the listener never comes, within the timeout.
. "$(dirname "$0")/../lib.sh"
java_classes Leaky || fail "javac Leaky.java"
PROBE=$ROOT/build/asan/unit/test_hotspot
mkdir -p "$TMP/cwd"
cd "$TMP/cwd" || exit 1
start_target native "$TARGETS/sleeper"; N=$TARGET_PID
start_target off java -XX:+DisableAttachMechanism -cp "$CP" Leaky 1000; OFF=$TARGET_PID
start_target tool env JAVA_TOOL_OPTIONS=-XX:+DisableAttachMechanism java -cp "$CP" Leaky 1000; TOOL=$TARGET_PID
start_target back env _JAVA_OPTIONS=-XX:-DisableAttachMechanism java -XX:+DisableAttachMechanism -cp "$CP" Leaky 1000
BACK=$TARGET_PID
cd "$ROOT" || exit 1
wait_ready off && wait_ready tool && wait_ready back || fail "targets did not start"

"$PROBE" --probe "$N" >"$TMP/native.probe"
check "a native process: the probe says it is not a JVM" grep -q 'not a JVM (no libjvm.so mapped)' "$TMP/native.probe"
"$DIAGTOP" heap "$N" >/dev/null 2>"$TMP/native.err"
check "a native process: no heap summary, exit status 1" bash -c "[ $? -eq 1 ] && grep -q 'JVM' '$TMP/native.err'"

"$DIAGTOP" heap "$OFF" --timeout 2 >/dev/null 2>"$TMP/off.err"
check "-XX:+DisableAttachMechanism: refused, saying so" grep -q 'attach disabled: the JVM runs with -XX:+DisableAttachMechanism (command line)' "$TMP/off.err"
"$DIAGTOP" memstats --json "$TOOL" >"$TMP/tool.json"
check "JAVA_TOOL_OPTIONS=-XX:+DisableAttachMechanism: memstats has the kernel's view and the reason" json_eval "$TMP/tool.json" "
    last['runtime']['provider'] == 'hotspot' and 'JAVA_TOOL_OPTIONS' in last['runtime']['error']"
"$DIAGTOP" stack --json "$BACK" >"$TMP/back.json" 2>/dev/null
check "_JAVA_OPTIONS=-XX:-DisableAttachMechanism wins over the command line: attached" json_eval "$TMP/back.json" "
    last['provider'] == 'hotspot' and any(t['name'] == 'leaky-sleeper' for t in last['threads'])"
check "the JVMs with attach disabled were never signalled: alive, no thread dump printed, no socket" bash -c "
    kill -0 $OFF && kill -0 $TOOL && ! grep -q 'Full thread dump' '$TMP/off.out' '$TMP/tool.out' &&
    [ ! -e /tmp/.java_pid$OFF ] && [ ! -e /tmp/.java_pid$TOOL ]"

# -Xrs: HotSpot starts the listener with the JVM (SIGQUIT cannot); diagtop uses it. Without the socket, diagtop
# refuses: SIGQUIT is not caught.
cd "$TMP/cwd" || exit 1
start_target xrs java -Xrs -cp "$CP" Leaky 1000; XRS=$TARGET_PID
cd "$ROOT" || exit 1
wait_ready xrs || fail "-Xrs JVM did not start"
for i in $(seq 100); do [ -S "/tmp/.java_pid$XRS" ] && break; sleep 0.05; done
check "-Xrs: SIGQUIT is not caught" bash -c "! (( 0x\$(awk '/^SigCgt/ {print \$2}' /proc/$XRS/status) & 4 ))"
"$DIAGTOP" stack --json "$XRS" >"$TMP/xrs.json" 2>/dev/null
check "-Xrs: the listener it started with answers" json_eval "$TMP/xrs.json" "last['provider'] == 'hotspot'"
rm -f "/tmp/.java_pid$XRS"
"$DIAGTOP" heap "$XRS" >/dev/null 2>"$TMP/xrs.err"
check "-Xrs without its socket: refused, saying why" grep -q 'the JVM runs with -Xrs: it does not catch SIGQUIT' "$TMP/xrs.err"
sleep 0.5
check "-Xrs: still alive (never sent SIGQUIT)" kill -0 "$XRS"

# Disabled in an @argfile: /proc/PID/cmdline shows only "@file", the JVM's hsperfdata records the expanded
# arguments (java.rt.vmArgs): refused before any signal. With -XX:-UsePerfData there is no such record: diagtop
# cannot see it, signals, waits for the timeout, and says what may be the cause.
printf '%s\n' -XX:+DisableAttachMechanism >"$TMP/args"
cd "$TMP/cwd" || exit 1
start_target argfile java @"$TMP/args" -cp "$CP" Leaky 1000; ARGF=$TARGET_PID
start_target noperf java -XX:-UsePerfData @"$TMP/args" -cp "$CP" Leaky 1000; NOPERF=$TARGET_PID
cd "$ROOT" || exit 1
wait_ready argfile && wait_ready noperf || fail "@argfile JVMs did not start"
"$DIAGTOP" heap "$ARGF" --timeout 1 >/dev/null 2>"$TMP/argf.err"
check "an @argfile disabling attach: refused, saying so, from the JVM's hsperfdata" grep -q \
    'attach disabled: the JVM runs with -XX:+DisableAttachMechanism (an @argfile: the JVM.s arguments as its hsperfdata records them)' \
    "$TMP/argf.err"
check "... never signalled: no thread dump printed, no trigger file" bash -c "
    kill -0 $ARGF && ! grep -q 'Full thread dump' '$TMP/argfile.out' &&
    ! ls '$TMP/cwd/.attach_pid$ARGF' /tmp/.attach_pid$ARGF 2>/dev/null"
T0=$(date +%s%N)
"$DIAGTOP" heap "$NOPERF" --timeout 1 >/dev/null 2>"$TMP/noperf.err"
MS=$((($(date +%s%N) - T0) / 1000000))
check "an @argfile and -XX:-UsePerfData: the listener never came, within the timeout ($MS ms)" bash -c "
    grep -q 'did not start within' '$TMP/noperf.err' && [ $MS -ge 900 ] && [ $MS -lt 4000 ]"
check "... the trigger file is removed and the JVM runs on" bash -c "
    ! ls '$TMP/cwd/.attach_pid$NOPERF' /tmp/.attach_pid$NOPERF 2>/dev/null && kill -0 $NOPERF"
finish
