#!/usr/bin/env bash
# The terminal is restored on SIGTERM, SIGHUP and SIGINT (clean exit) and on a crash (SIGSEGV: restored, then
# the process dies of the signal), as htop does.
. "$(dirname "$0")/../lib.sh"

for sig in TERM HUP INT SEGV; do
    tui_start 100 30 "$DIAGTOP -d 0.5"
    tui_wait 'PID USER' || fail "no table"
    kill -"$sig" "$(tui_app_pid)"
    check "SIG$sig: diagtop ends" tui_wait_exit
    check "SIG$sig: terminal restored" tui_restored
    if [ "$sig" = SEGV ]; then
        check "SIGSEGV: re-raised after restoring (dies of signal 11)" test "$TUI_EXIT" = 139
    else
        check "SIG$sig: exits with status 0" test "$TUI_EXIT" = 0
    fi
done
finish
