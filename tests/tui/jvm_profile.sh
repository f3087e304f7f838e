#!/usr/bin/env bash
# C on a JVM at 80x24: the JVM's own JFR recording, shown live in the CPU profile pane like diagtop's sampler's
# profile: within a JFR.dump or two (every 5 s) the top table names the method the Java target burns CPU in
# (Burner.spin, tests/targets/Burner.java); F shows the icicle with it; a second C stops the recording, the last
# numbers stay, and the .jfr is saved in the dump directory (the status says where); no recording is left running.
. "$(dirname "$0")/../lib.sh"
java_classes Burner || fail "javac Burner.java"
export DIAGTOP_DUMP_DIR=$TMP/dumps
mkdir -p "$DIAGTOP_DUMP_DIR"
start_target burner java -cp "$CP" Burner; J=$TARGET_PID
wait_ready burner || fail "Burner did not start"

tui_start 80 24 "$DIAGTOP -d 1 -p $J"
tui_wait "^ *$J .* java" 10 || fail "no row for the JVM"
tui_keys C
check "C on a JVM: the CPU profile pane, from hotspot's JFR, live" tui_wait "CPU profile of $J .*from hotspot \(JFR\), live" 10
check "the live top table names the Java target's busy method, Burner.spin" tui_wait "Burner\.spin" 40
tui_keys F
check "F: the icicle, with Burner.spin in it" tui_wait "icicle" 10
check "... Burner.spin in the icicle" tui_wait "Burner\.spin" 10
tui_keys F C
check "a second C stops it: the recording is saved in the dump directory, the status says so" \
    tui_wait "recording saved to" 30
check "... naming the file in full (wrapped as it needs)" bash -c "$(declare -f tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_screen | tr -d '\n' | grep -q 'recording saved to *$DIAGTOP_DUMP_DIR/cpu\.java\.$J\.[0-9-]*\.jfr'"
check "... the top table stays, stopped" bash -c "$(declare -f tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_screen | grep -q 'stopped' && tui_screen | grep -q 'Burner\.spin'"
check "the saved recording is 0600 and a JFR file" bash -c "
    f=\$(ls '$DIAGTOP_DUMP_DIR'/cpu.java.$J.*.jfr) && [ \"\$(stat -c %a \"\$f\")\" = 600 ] && [ \"\$(head -c 3 \"\$f\")\" = FLR ]"
check "no recording of diagtop's is left running in the JVM" bash -c "
    ! jcmd $J JFR.check 2>/dev/null | grep -q 'diagtop$J-'"
tui_keys Escape q
check "quits cleanly" tui_wait_exit
stop_pid "$J"
finish
