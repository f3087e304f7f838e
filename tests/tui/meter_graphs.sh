#!/usr/bin/env bash
# The header meters' graph mode in a real terminal: g turns the CPU, Mem and Swp bars into graphs of their recent
# past (a CPU kept busy by a burner draws high blocks), the setting is saved and read back at the next start, and g
# again brings the bars back. ASCII blocks where the locale is not UTF-8.
. "$(dirname "$0")/../lib.sh"

start_target burner taskset -c 0 "$TARGETS/burner"; B=$TARGET_PID
wait_exec "$B" "$TARGETS/burner" || fail "burner did not start"
tui_start 120 30 "$DIAGTOP -d 0.3"
tui_wait "PID USER" || fail "no table"
check "bars by default" tui_wait '^ +0\[\|+'
sleep 2 # a few values in every meter's past
tui_keys g
check "g: a status names the graph mode" tui_wait 'header meters: graphs'
check "g: CPU 0 (the burner's) is a graph of high blocks" tui_wait '^ +0\[ *[▁▂▃▄▅▆▇█]*[▆▇█]{4,} +[0-9.]+%\]'
check "g: Mem is a graph too" tui_wait '^Mem\[ *[▁▂▃▄▅▆▇█]+ +[0-9.]+[KMGT]?/'
check "the setting is saved" grep -qx 'meters=graph' "$XDG_CONFIG_HOME/diagtop/config"
tui_keys q
tui_wait_exit
tui_start 120 30 "$DIAGTOP -d 0.3"
check "the next start keeps the graph mode" tui_wait '^ +0\[ *[▁▂▃▄▅▆▇█]+ +[0-9.]+%\]'
tui_keys g
check "g again: the bars are back" tui_wait '^ +0\[\|+'
check "and saved" grep -qx 'meters=bar' "$XDG_CONFIG_HOME/diagtop/config"
tui_keys q
check "quits cleanly" tui_wait_exit
tui_start 120 30 "LANG=C LC_ALL=C $DIAGTOP -d 0.3"
tui_keys g
check "a non-UTF-8 locale draws ASCII blocks" tui_wait '^ +0\[ *[_.=+*#@-]*[#@]{4,} +[0-9.]+%\]'
tui_keys g q
check "quits cleanly (ASCII)" tui_wait_exit
stop_pid "$B"
finish
