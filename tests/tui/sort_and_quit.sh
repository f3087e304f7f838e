#!/usr/bin/env bash
# The TUI in a real terminal (tmux 160x40: every column fits beside a command of 40% of the width): P puts the CPU
# burner on top, M the memory hog, q restores the terminal.
. "$(dirname "$0")/../lib.sh"

start_target burner "$TARGETS/burner"; BURNER=$TARGET_PID
start_target hog "$TARGETS/hog" 384; HOG=$TARGET_PID
wait_ready hog || fail "hog never allocated its memory"

# Other tests run burners and hogs in parallel: show this test's targets and a few others only.
tui_start 160 40 "$DIAGTOP -d 0.5 -p $BURNER,$HOG,1,$$"
check "the screen shows the header and the titles" tui_wait 'PID USER +PRI +NI +VIRT +RES +SHR S +%CPU'
check "the function-key bar is at the bottom" bash -c "tmux -L '$TMUX_SOCKET' capture-pane -p | tail -1 | grep -q 'F1Help.*F10Quit'"
first_row() { tui_screen | awk '/PID USER/ {getline; print $1; exit}'; }
wait_first() { # wait_first PID: waits until the top row is PID
    local i
    for i in $(seq 50); do [ "$(first_row)" = "$1" ] && return 0; sleep 0.1; done
    echo "top row is $(first_row), expected $1" >&2
    return 1
}
tui_keys M
check "M: the hog is the top row" wait_first "$HOG"
tui_keys P
check "P: the burner is the top row" wait_first "$BURNER"
check "the header has a CPU bar per core, memory and swap" bash -c "
    [ \$(tmux -L '$TMUX_SOCKET' capture-pane -p | grep -cE '^ *[0-9]+\[') -eq $(nproc) ] &&
    tmux -L '$TMUX_SOCKET' capture-pane -p | grep -q '^Mem\[' && tmux -L '$TMUX_SOCKET' capture-pane -p | grep -q '^Swp\['"
check "sort choice persists in the config file" bash -c "sleep 0.3; grep -qx 'sort=cpu' '$XDG_CONFIG_HOME/diagtop/config'"

tui_keys q
check "q exits" tui_wait_exit
check "q: exit status 0, no sanitizer report" bash -c "[ '$TUI_EXIT' = 0 ] &&
    ! tmux -L '$TMUX_SOCKET' capture-pane -p -S - | grep -q 'Sanitizer'"
check "q: terminal restored (normal screen, cursor shown, keypad and mouse off)" tui_restored
finish
