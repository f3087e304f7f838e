#!/usr/bin/env bash
# C on a process with no agent: diagtop's sampler, live in a pane like py-spy's top: the hot functions appear and
# update, Enter on the first row shows its callers and callees, Esc goes back, t filters one thread, F draws the
# icicle, a second C stops sampling and the numbers stay; Esc closes; the target is never left traced.
. "$(dirname "$0")/../lib.sh"

start_target hot "$TARGETS/hotspots"; P=$TARGET_PID
wait_ready hot || fail "target did not start"
tui_start 150 45 "$DIAGTOP -d 1 -p $P"
[ -r /proc/pressure/cpu ] && check "header (45 lines): a Pressure line of its own, some/full" \
    tui_wait 'Pressure: cpu [0-9.]+ io [0-9.]+/[0-9.]+ mem [0-9.]+/[0-9.]+'
tui_wait "^ *$P " || fail "no row"
tui_keys C
check "C: a live profile by diagtop's sampler, the method named" tui_wait "CPU profile of $P \(hotspots\), diagtop's sampler \((perf|ptrace)\), live" 10
check "C: the hot functions appear with own and total time and percentages (pprof -top's columns)" \
    tui_wait '^ +[0-9.]+m?s +[0-9.]+% +[0-9.]+% +[0-9.]+m?s +[0-9.]+% +burn_direct ' 10
samples() { tui_screen | sed -n 's/.*": \([0-9]*\) samples in.*/\1/p' | head -1; }
A=$(samples); sleep 2.5; B=$(samples)
check "C: the numbers follow the sampling (samples grow: $A then $B)" test "${B:-0}" -gt "${A:-0}"
tui_keys Enter
check "Enter on the first row: its callers and callees" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait '^Callers:' && tui_wait 'burn_round'"
tui_keys Escape
check "Esc in the callers view goes back to the table (the pane stays)" tui_wait 'flat +flat% +sum% +cum +cum%'
tui_keys t
check "t: one thread only" tui_wait 'thread [0-9]+ only'
tui_keys t F
check "F: the icicle, outermost frames on top" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait ': icicle' && tui_wait '^start_thread' && tui_wait 'burn_direct'"
tui_keys F C
check "a second C stops the profile; the table stays" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait \"CPU profile of $P \\(hotspots\\), diagtop's sampler \\((perf|ptrace)\\), stopped\" 10 && tui_wait 'burn_direct'"
tui_keys Escape
check "Esc closes the pane" tui_wait 'PID USER'
check "the target runs, untraced" bash -c "[ \$(awk '/^TracerPid:/ {print \$2}' /proc/$P/status) = 0 ]"
# The fallback method, forced: the header says ptrace and why.
tui_keys q
tui_wait_exit
tui_start 150 45 "env DIAGTOP_PROFILE_METHOD=ptrace $DIAGTOP -d 1 -p $P"
tui_wait "^ *$P " || fail "no row"
tui_keys C
check "the ptrace fallback: the header names it and why" tui_wait '\(ptrace: asked for\)' 10
check "the ptrace fallback: the same hot function" tui_wait 'burn_direct' 10
tui_keys Escape
sleep 0.5
check "Esc ends the ptrace sampler: the target is detached" bash -c "[ \$(awk '/^TracerPid:/ {print \$2}' /proc/$P/status) = 0 ]"
tui_keys q
check "quits cleanly" tui_wait_exit
finish
