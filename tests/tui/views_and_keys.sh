#!/usr/bin/env bash
# Tree, threads, help, column setup (persisted), delay, pause, user filter, and tiny or resized terminals.
. "$(dirname "$0")/../lib.sh"

start_target threads "$TARGETS/threads" 3; THREADS=$TARGET_PID
wait_ready threads || fail "threads target did not start"

tui_start 120 40 "$DIAGTOP -d 0.5 -p $THREADS"
tui_wait 'PID USER' || fail "no table"
tui_keys H
check "H shows the 3 named threads" tui_wait 'worker-2'
tui_keys t
check "t: tree view draws branches (UTF-8 locale)" tui_wait '└─ worker-'
tui_keys F1
check "F1 lists every key" bash -c "sleep 0.5; s=\$(tmux -L '$TMUX_SOCKET' capture-pane -p);
    for k in 'F6' 'F3 /' 'F4 ' 'F5 t' 'F9 k' 'F2' 'Space' 'Z' 'F10 q' 'Enter' 'u'; do
        grep -qF -- \"\$k\" <<<\"\$s\" || { echo \"missing \$k\"; exit 1; }; done"
tui_keys Escape F2
check "F2 opens the column setup" tui_wait '\[x\] PID'
# Hide the first column (PID): Space on the first line, then close.
tui_keys Space Escape
sleep 0.5
check "the hidden column is gone from the titles" bash -c "! tmux -L '$TMUX_SOCKET' capture-pane -p | grep -q ' PID USER'"
check "the column choice persists in the config file" grep -q '^columns=user,' "$XDG_CONFIG_HOME/diagtop/config"
tui_keys d BSpace BSpace BSpace 0 . 2 5 Enter
check "d sets a decimal delay" tui_wait 'refreshing every 0.25 s'
check "the delay persists" bash -c "sleep 0.3; grep -qx 'delay=0.25' '$XDG_CONFIG_HOME/diagtop/config'"
tui_keys Z
check "Z pauses updates" tui_wait 'PAUSED'
tui_keys Z u
check "u offers the users owning processes" tui_wait 'All users'
tui_keys Escape

# Tiny and resized terminals: nothing crashes, and it still quits cleanly.
tmux -L "$TMUX_SOCKET" resize-window -x 10 -y 5 2>/dev/null || tmux -L "$TMUX_SOCKET" resize-pane -x 10 -y 5
sleep 0.6
tmux -L "$TMUX_SOCKET" resize-window -x 80 -y 24 2>/dev/null
sleep 0.6
check "after resizing to 10x5 and back to 80x24 the table is drawn" tui_wait 'worker-'
tui_keys q
check "quits cleanly after resizes" tui_wait_exit
check "and restores the terminal" tui_restored
check "exit status 0" test "$TUI_EXIT" = 0

# Starting in a 10x5 terminal.
tui_start 10 5 "$DIAGTOP -d 0.3"
sleep 1.2
check "a 10x5 terminal: running, no crash" bash -c "! tmux -L '$TMUX_SOCKET' capture-pane -p | grep -q 'exit'"
tui_keys q
check "a 10x5 terminal: q exits" tui_wait_exit
check "a 10x5 terminal: exit status 0" test "$TUI_EXIT" = 0

# A non-UTF-8 locale and no colours: ASCII tree.
tui_start 120 40 "env LANG=C LC_ALL=C NO_COLOR=1 $DIAGTOP -d 0.5 -p $THREADS -t -H"
check "C locale: the tree is drawn in ASCII" tui_wait '`- worker-'
tui_keys q
finish
