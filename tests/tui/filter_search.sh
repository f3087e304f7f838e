#!/usr/bin/env bash
# Filter hides other rows, search moves the selection, the escape-sequence command line is shown sanitized,
# signals go to the selected process after confirmation.
. "$(dirname "$0")/../lib.sh"

start_target s1 "$TARGETS/sleeper" "needle-one"; S1=$TARGET_PID
# Started as ./sleeper so the arguments fit on screen beside the other columns.
start_target s2 bash -c 'cd "$0" && exec ./sleeper "$@"' "$TARGETS" "needle-two" $'\e[31mred\e[0m' "café"; S2=$TARGET_PID
start_target other "$TARGETS/sleeper" "haystack"; OTHER=$TARGET_PID

tui_start 160 40 "$DIAGTOP -d 0.5 -s pid"
tui_wait 'PID USER' || fail "no table"
rows() { tui_screen | awk '/PID USER/ {on=1; next} on && $1 ~ /^[0-9]+$/ {print $1}'; }

tui_keys -l '\'
tui_keys n e e d l e
check "filter prompt is shown while typing" tui_wait '^Filter: needle'
tui_keys Enter
sleep 0.7
check "filter: only the two matching rows remain" test "$(rows | sort -n | tr '\n' ' ')" = "$(printf '%s\n' "$S1" "$S2" | sort -n | tr '\n' ' ')"
check "the escape sequence is sanitized on screen, UTF-8 kept" tui_wait "sleeper needle-two \\?\\[31mred\\?\\[0m café"
tui_keys Right Right
check "Right scrolls the command line: its start is off screen, its end on" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait ' -two \\?\\[31m' && ! tmux -L '$TMUX_SOCKET' capture-pane -p | grep -q './sleeper needle-two'"
tui_keys Left Left
check "Left scrolls back" tui_wait './sleeper needle-two'
tui_keys F4 C-u Enter
sleep 0.7
check "Ctrl-U Enter in the filter prompt removes the filter" bash -c "[ \$(tmux -L '$TMUX_SOCKET' capture-pane -p | awk '/PID USER/ {on=1; next} on && \$1 ~ /^[0-9]+\$/' | wc -l) -gt 5 ]"

# Search: / types incrementally and moves the selection; the signal prompt names the selected process.
tui_keys / h a y s t a c k
check "search prompt" tui_wait '^Search: haystack'
tui_keys Enter k
check "the signal menu offers SIGTERM" tui_wait 'SIGTERM'
tui_keys Enter
check "search moved the selection to the haystack sleeper (the confirmation names it)" tui_wait "Send SIGTERM to $OTHER \(sleeper\)\? \[y/N\]"
tui_keys y
for i in $(seq 30); do kill -0 "$OTHER" 2>/dev/null || break; [ "$(ps -o stat= -p "$OTHER" | cut -c1)" = Z ] && break; sleep 0.1; done
wait "$OTHER"
check "the confirmed SIGTERM ended that process (status 143)" test $? -eq 143
check "and says so" tui_wait 'sent SIGTERM to 1 process'

tui_keys / n o - s u c h - t h i n g
check "a search without match says so" tui_wait 'not found'
tui_keys Escape
tui_keys G
check "G on a process without a runtime says what would make a GC available" tui_wait 'GC is not available for this process'
tui_keys q
finish
