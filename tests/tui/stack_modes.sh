#!/usr/bin/env bash
# The stack pane's modes say what they are, at 80x24: w (without stopping) is in the title while it holds and does
# not carry over to another process or to b again; w and v show the new content from its top line; v on a native
# process says why there is no runtime view and what would give one; an interpreter's pane is named by its script.
. "$(dirname "$0")/../lib.sh"

start_target threads "$TARGETS/threads" 6; T=$TARGET_PID
start_target leak python3 "$ROOT/tests/targets/leak.py"; PY=$TARGET_PID
wait_ready threads || fail "threads did not start"
wait_ready leak || fail "leak.py did not start"
tui_start 80 24 "$DIAGTOP -d 0.5 -p $T"
tui_wait "^ *$T " || fail "target row not shown"
tui_keys b
check "b: the title names the process and says the threads are stopped (ptrace)" \
    tui_wait "^ Stack of $T \(threads\), OS threads \(ptrace\)" 10
tui_wait "stopped for [0-9.]+ ms" 10 || fail "no stack"
tui_keys g
tui_wait "one block per thread" || fail "g did not ungroup"
tui_keys NPage NPage
sleep 0.3
check "PgDn scrolled: the first line is off screen" bash -c "! tmux -L $TMUX_SOCKET capture-pane -p | grep -q '^Process $T '"
tui_keys w
check "w: the title says the mode while it holds" tui_wait "^ Stack of $T \(threads\), OS threads \(without stopping\)" 10
check "w: the new content is shown from its first line" \
    tui_wait "^Process $T \(threads\): 7 threads, read while it ran \(nothing stopped\)" 10
tui_keys v
check "v on a native process: why there is no runtime view, and what would give one (its last word on screen)" \
    tui_wait "no runtime view: a native process \(Go with the gops agent, or a JVM, has one\)"
tui_keys Escape b
check "b again: the usual stopped capture, the title says so" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait '^ Stack of $T \(threads\), OS threads \(ptrace\)' 10 && tui_wait 'stopped for [0-9.]+ ms' 10"
tui_keys w
tui_wait "without stopping" 10 || fail "w again"
tui_keys Escape q
tui_wait_exit || fail "did not quit"

# Another process in the same pane instance: a python3 script, named by its script, read the usual way.
tui_start 80 24 "$DIAGTOP -d 0.5 -p $T,$PY"
tui_wait "^ *$PY " || fail "python row not shown"
tui_keys / t h r e a d s Enter b
tui_wait "^ Stack of $T .*" 10 && tui_wait "stopped for [0-9.]+ ms" 10 || fail "b on the threads row"
tui_keys w
tui_wait "without stopping" 10 || fail "w on the threads row"
tui_keys Escape / l e a k Enter b
check "another process's stack pane: named by its script, without the w of the last one" bash -c "
    $(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait '^ Stack of $PY \(python3(\.[0-9]+)? leak\.py\), OS threads \(ptrace\)' 10 && tui_wait 'stopped for [0-9.]+ ms' 10"
tui_keys Escape q
check "quits cleanly" tui_wait_exit
finish
