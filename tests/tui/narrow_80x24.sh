#!/usr/bin/env bash
# At exactly 80x24: the command keeps at least 40% of the width (32 columns) while lower-priority columns give
# way, so a target started from a long path reads whole; every tab of the details pane can be reached and its name
# is on screen when selected (the bar scrolls, < and > mark tabs left out); each pane's bottom bar shows all its
# keys (labels shorten first) and the table's function bar reaches F10.
. "$(dirname "$0")/../lib.sh"

# A path as short as the issue's, /tmp/bar.XXXXXX/memhog 64 (before, the command got 17 columns of it).
HOGDIR=$(mktemp -d /tmp/bar.XXXXXX)
trap 'cleanup; rm -rf "$HOGDIR"' EXIT
HOG=$HOGDIR/memhog
cp "$TARGETS/sleeper" "$HOG"
start_target memhog "$HOG" 64; M=$TARGET_PID
tui_start 80 24 "$DIAGTOP -d 0.5 -p $M"
tui_wait "^ *$M " || fail "no row"

check "the table's titles end with COMMAND, 32 columns or more from the right edge" command_column_wide
check "the long path of the target reads whole, with its argument" tui_wait " $HOG 64\$"
check "the function bar reaches F10 Quit" tui_wait 'F9Kill +F10Quit'

# footer_has KEY...: the bottom line holds each key (a word of its own, label or not).
footer_has() {
    local bar k
    bar=$(tui_screen | tail -1)
    for k in "$@"; do
        grep -qE -- "(^| )$k( |\$)" <<<"$bar" || { echo "  key $k not in the bar: $bar" >&2; return 1; }
    done
}
GENERIC=(Esc / n r S PgUp/PgDn)

tui_keys Enter
tui_wait '\[1 General\]' || fail "the details pane did not open"
check "details: the bar shows every key" footer_has "${GENERIC[@]}" 1-8 m '\\'
TABS=(General Memory Modules FDs Threads Environment "I/O" History)
for i in 1 2 3 4 5 6 7 8; do
    tui_keys Right
    [ "$i" = 8 ] && n=1 || n=$((i + 1))
    check "Right reaches tab $n, its name on screen" tui_wait "\[$n ${TABS[$((n - 1))]}\]" 3
done
tui_keys 8
check "tab 8 by its number: on screen, < marks tabs left out" tui_wait '^ Process [0-9]+ +< .*\[8 History\] *$' 3
tui_keys 1
check "tab 1: > marks tabs left out on the right" tui_wait '^ Process [0-9]+ +\[1 General\] .* >$' 3
tui_keys Escape

tui_keys b
tui_wait "Stack of $M" 10 || fail "the stack pane did not open"
check "stack: the bar shows every key" footer_has "${GENERIC[@]}" g v w
tui_keys Escape C
tui_wait "CPU profile of $M" 10 || fail "the CPU pane did not open"
check "cpu: the bar shows every key" footer_has "${GENERIC[@]}" Enter s t F C
tui_keys C Escape
tui_keys q
check "quits cleanly" tui_wait_exit
check "exit status 0" test "$TUI_EXIT" = 0

# The heap pane's keys, on a Go program's heap profile (gops), when Go built the target.
if [ -x "$TARGETS/gopsy" ]; then
    mkdir -p "$TMP/gops"
    start_target gopsy env GOPS_CONFIG_DIR="$TMP/gops" "$TARGETS/gopsy"; G=$TARGET_PID
    wait_ready gopsy || fail "gopsy did not start"
    tui_start 80 24 "$DIAGTOP -d 1 -p $G"
    tui_wait "^ *$G .* go\* " 10 || fail "no row marked go*"
    tui_keys A
    tui_wait 'heap profile' 15 || fail "the heap pane did not open"
    check "heap: the bar shows every key" footer_has "${GENERIC[@]}" Enter a e z
    tui_keys Escape q
    tui_wait_exit
else
    skip "the heap pane's bar: no Go target (build/targets/gopsy)"
fi
finish
