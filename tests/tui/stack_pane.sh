#!/usr/bin/env bash
# The stack pane in a real terminal: b on the selected row shows every thread's stack (grouped), / searches,
# g ungroups, S saves the pane (0600, never overwriting), r takes a new snapshot, Esc closes; the target runs on.
. "$(dirname "$0")/../lib.sh"

start_target threads "$TARGETS/threads" 6; T=$TARGET_PID
wait_ready threads || fail "target did not start"
cd "$TMP" || exit 1
tui_start 140 45 "$DIAGTOP -d 0.5 -p $T"
tui_wait "^ *$T " || fail "target row not shown"
tui_keys b
check "b: the pane shows the process, its thread count and stop time" tui_wait "Process $T \(threads\): 7 threads, stopped for [0-9.]+ ms"
check "b: identical worker stacks are grouped, inlined frames marked" bash -c "
    $(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait '^6 threads: ' && tui_wait 'worker_inlined_wait \(inlined\) +.*threads.c' && tui_wait 'main_wait\+0x'"
check "b: a parked thread says what it waits in" tui_wait 'waiting in pause\(\)'
check "the target runs again while the pane is open" test "$(awk '{print $3}' /proc/$T/stat)" = S
tui_keys /
tui_keys -l worker_outer
tui_keys Enter
check "/ finds a frame" tui_wait 'worker_outer\+0x'
tui_keys g
check "g: one block per thread" tui_wait 'one block per thread'
tui_keys S
check "S proposes a file name in the dump directory, in full" tui_wait "^Save to: $TMP/stack\.$T\.[0-9]{8}-[0-9]{6}\.txt"
tui_keys Enter
check "S saves the pane and says its absolute path" tui_wait "saved [0-9]+ lines to $TMP/stack\."
SAVED=$(ls "$TMP"/stack."$T".*.txt 2>/dev/null | head -1)
check "the saved file has the stacks, mode 0600" bash -c "[ -n '$SAVED' ] && [ \$(stat -c %a '$SAVED') = 600 ] &&
    grep -q 'worker_middle' '$SAVED' && [ \$(grep -c '^Thread ' '$SAVED') -eq 7 ]"
echo "keep" >"$TMP/taken.txt"
# The prompt starts with the proposed name: erase it, then type an existing file's name.
tui_keys S
tui_keys $(printf 'BSpace %.0s' $(seq 120))
tui_keys -l "$TMP/taken.txt"
tui_keys Enter
check "S never overwrites an existing file" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait 'cannot create .*taken.txt: File exists' && [ \"\$(cat '$TMP/taken.txt')\" = keep ]"
tui_keys r
check "r takes a new snapshot" tui_wait "Process $T \(threads\): 7 threads"
tui_keys Escape
check "Esc closes the pane: the table is back" tui_wait 'PID USER'
sleep 0.3
check "the target is running and untraced after Esc" bash -c \
    "[ \$(awk '{print \$3}' /proc/$T/stat) = S ] && [ \$(awk '/^TracerPid:/ {print \$2}' /proc/$T/status) = 0 ]"
tui_keys b
tui_wait "stopped for" || fail "second capture"
tui_keys q q
check "q in the pane closes it, q again quits" tui_wait_exit
check "exit status 0, terminal restored" bash -c "[ '$TUI_EXIT' = 0 ]"
check "terminal restored" tui_restored
finish
