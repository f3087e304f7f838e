#!/usr/bin/env bash
# Every text prompt edits as readline does (Ctrl-U clears the line, Ctrl-W removes a word, Backspace a character,
# Esc cancels, Enter accepts; the cursor moves with Left/Right, Home/End, Ctrl-A/E/B/F and Alt-B/F, characters go
# in at it, Delete and Ctrl-D remove the one under it, and the terminal's cursor is shown there), and the line
# under the meters says which filter and search hold. At 80x24.
. "$(dirname "$0")/../lib.sh"

start_target a "$TARGETS/sleeper" "lined-aaa"; A=$TARGET_PID
start_target b "$TARGETS/sleeper" "lined-bbb"; B=$TARGET_PID

tui_start 80 24 "$DIAGTOP -d 0.5 -s pid"
tui_wait 'PID USER' || fail "no table"
rows() { tui_screen | awk '/PID USER/ {on=1; next} on && $1 ~ /^[0-9]+$/ {print $1}' | sort -n | tr '\n' ' '; }
# rows_are PIDS...: the table shows exactly these rows (waits for a refresh).
rows_are() {
    local want i
    want=$([ $# -eq 0 ] || printf '%s\n' "$@" | sort -n | tr '\n' ' ')
    for i in $(seq 30); do [ "$(rows)" = "$want" ] && return 0; sleep 0.1; done
    echo "  rows: $(rows), expected $want" >&2
    return 1
}
# The line under the meters (above the titles).
state_line() { tui_screen | awk '/PID USER/ {print prev; exit} {prev = $0}'; }
state_is() {
    local i
    for i in $(seq 30); do [ "$(state_line | sed 's/ *$//')" = "$1" ] && return 0; sleep 0.1; done
    echo "  state line: '$(state_line)', expected '$1'" >&2
    return 1
}

check "no filter: the line under the meters is empty" state_is ""
tui_keys F4 l i n e d - a a a Enter
check "the header shows the filter that holds" state_is "filter: lined-aaa"
check "and the rows match it" rows_are "$A"

tui_keys F4
check "F4 reopens with the filter" tui_wait '^Filter: lined-aaa *$'
tui_keys C-u
check "Ctrl-U clears the old text" tui_wait '^Filter: *$'
tui_keys l i n e d - b b b
check "typing after Ctrl-U starts afresh (nothing appended)" tui_wait '^Filter: lined-bbb *$'
check "the filter follows as it is typed" rows_are "$B"
tui_keys Enter
check "Enter keeps it; the header says so" state_is "filter: lined-bbb"

tui_keys F4 C-u s l e e p e r Space l i n e d - x C-w
check "Ctrl-W removes one word, not the line" tui_wait '^Filter: sleeper *$'
check "the rows follow the shortened filter" rows_are "$A" "$B"
tui_keys BSpace BSpace
check "Backspace removes one character" tui_wait '^Filter: sleepe *$'
tui_keys r Space l i n e d - a a a Enter
check "the edited filter holds" state_is "filter: sleeper lined-aaa"
check "its rows" rows_are "$A"

# The cursor: where the terminal shows it (x y, visible), and typing in the middle of the line.
cursor_at() {
    local i got
    for i in $(seq 30); do
        got=$(tmux -L "$TMUX_SOCKET" display -p '#{cursor_x} #{cursor_y} #{cursor_flag}')
        [ "$got" = "$1 $2 1" ] && return 0
        sleep 0.1
    done
    echo "  cursor (x y shown): $got, expected $1 $2 1" >&2
    return 1
}
tui_keys F4
tui_wait '^Filter: sleeper lined-aaa *$' || fail "F4 did not reopen"
check "the terminal cursor is shown after the text" cursor_at 25 23
tui_keys Home
check "Home: the cursor at the text's start" cursor_at 8 23
tui_keys Right Right C-f x
check "Right and Ctrl-F move; a character goes in at the cursor" tui_wait '^Filter: slexeper lined-aaa *$'
check "the cursor after what was typed" cursor_at 12 23
tui_keys DC C-d
check "Delete and Ctrl-D remove the character under the cursor" tui_wait '^Filter: slexer lined-aaa *$'
tui_keys End Left C-b M-b
check "End, Left, Ctrl-B and Alt-B: the start of the last word" cursor_at 21 23
tui_keys M-b M-b y M-f z
check "Alt-B back two words, Alt-F forward over one" tui_wait '^Filter: yslexerz lined-aaa *$'
tui_keys C-e q C-a w
check "Ctrl-E and Ctrl-A go to the ends" tui_wait '^Filter: wyslexerz lined-aaaq *$'
check "the filter follows edits in the middle" state_is "filter: wyslexerz lined-aaaq"
tui_keys Escape
check "Esc after moving the cursor still cancels" state_is "filter: sleeper lined-aaa"
check "the cursor is hidden again in the table" bash -c "[ \"\$(tmux -L '$TMUX_SOCKET' display -p '#{cursor_flag}')\" = 0 ]"

tui_keys F4 C-u z z z
check "a filter matching nothing shows no rows" rows_are
tui_keys Escape
check "Esc cancels the edit: the filter from before F4 holds again" state_is "filter: sleeper lined-aaa"
check "with its rows" rows_are "$A"

tui_keys F4 C-u Enter
check "Ctrl-U Enter removes the filter: the header no longer shows it" state_is ""
check "and every process is back" bash -c "$(declare -f rows); TMUX_SOCKET=$TMUX_SOCKET; tui_screen() { tmux -L \$TMUX_SOCKET capture-pane -p; }
    [ \$(rows | wc -w) -gt 2 ]"

tui_keys / l i n e d - b
check "a search shows in the header while it is typed" state_is "search: lined-b"
tui_keys C-w
check "Ctrl-W in the search prompt" tui_wait '^Search: *$'
tui_keys l i n e d - b b b Enter
check "the header no longer shows a search that ended" state_is ""

# A pane's prompts use the same editor: the details pane's search.
tui_keys / l i n e d - a a a Enter Enter
check "the details pane opens" tui_wait 'lined-aaa'
tui_keys / f o o Space b a r C-w
check "Ctrl-W in a pane's search prompt" tui_wait '^Search: foo *$'
tui_keys C-u
check "Ctrl-U in a pane's search prompt" tui_wait '^Search: *$'
tui_keys f o o Home x M-f y
check "a pane's prompt moves its cursor too" tui_wait '^Search: xfooy *$'
check "and shows it there" cursor_at 13 23
tui_keys C-u
tui_keys Escape Escape q
tui_wait_exit
check "q quits" test "$TUI_EXIT" = 0
finish
