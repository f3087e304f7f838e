#!/usr/bin/env bash
# The details pane in a real terminal: Enter on the row, tabs, the secret masked until m, the RSS sparkline,
# sockets with their state, the environment filter; Esc back to the table.
. "$(dirname "$0")/../lib.sh"

start_target details env -i KNOWN_VAR=hello SECRET_TOKEN=s3cr3t PATH=/usr/bin:/bin "$TARGETS/details" 8 4 2; D=$TARGET_PID
wait_ready details || fail "target did not start"
PORT=$(sed -n 's/^ready port=\([0-9]*\).*/\1/p' "$TMP/details.out")
tui_start 140 45 "$DIAGTOP -d 0.4 -p $D"
tui_wait "^ *$D " || fail "no row"
tui_keys Enter
check "Enter opens General with tabs" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait '\[1 General\]' && tui_wait 'Executable +.*/details'"
tui_keys 6
check "Environment: the known value is shown" tui_wait '^KNOWN_VAR=hello'
check "Environment: the secret is masked" tui_wait '^SECRET_TOKEN=\*\*\*\*\*\*\*\*'
check "the secret's value is nowhere on screen" bash -c "! tmux -L '$TMUX_SOCKET' capture-pane -p | grep -q s3cr3t"
tui_keys m
check "m shows secret values" tui_wait '^SECRET_TOKEN=s3cr3t'
tui_keys m
tui_keys -l '\'
tui_keys -l KNOWN
check "\\ filters the environment" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait '^Filter: KNOWN' && ! tmux -L '$TMUX_SOCKET' capture-pane -p | grep -q '^SECRET_TOKEN'"
tui_keys Enter 4
check "FDs: the listening socket with its port" tui_wait "socket +tcp 127.0.0.1:$PORT LISTEN"
tui_keys 2
sleep 1.5
check "Memory: the RSS sparkline over the time kept" tui_wait 'RSS, last [0-9]+ s \([0-9]+ samples\): [▁▂▃▄▅▆▇█]+'
tui_keys Escape
check "Esc returns to the table" tui_wait 'PID USER'
tui_keys q
check "quits cleanly" tui_wait_exit
check "exit status 0" test "$TUI_EXIT" = 0
finish
