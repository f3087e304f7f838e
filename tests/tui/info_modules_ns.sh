#!/usr/bin/env bash
# At 80x24, the details pane of a process in a PID namespace of its own: General shows its NSpid and the
# namespaces that are not diagtop's, marked; Modules lists each of libc's mappings (r-x text, rw- data) as
# /proc/PID/maps does, never a union rwxp.
. "$(dirname "$0")/../lib.sh"

pid_namespaces_or_skip
start_in_pid_namespace; P=$NS_PID
[ -n "$P" ] || fail "no process inside the new PID namespace"
tui_start 80 24 "$DIAGTOP -d 0.5 -p $P"
tui_wait "^ *$P " || fail "no row"
tui_keys Enter
check "General: NSpid, its PID here and 1 inside" tui_wait "^NSpid +$P 1 \(PID 1 in its own PID namespace\)"
check "General: pid and mnt are apart from diagtop's" tui_wait '^Namespaces apart +mnt pid *$'
tui_keys 3
check "Modules: libc's text mapping on its own line" tui_wait '^  [0-9a-f]+-[0-9a-f]+ r-xp +[0-9.]+ [KM]iB +at offset 0x'
check "Modules: and its data mapping" tui_wait '^  [0-9a-f]+-[0-9a-f]+ rw-p '
LIBC=$(awk '$6 ~ /\/libc\.so\.6$/ && $2 == "r-xp" {print $1; exit}' "/proc/$P/maps")
check "Modules: the r-x range is the one maps says ($LIBC)" tui_wait "^  0*${LIBC%-*}-0*${LIBC#*-} r-xp "
check "Modules: no rwxp anywhere" bash -c "! tmux -L '$TMUX_SOCKET' capture-pane -p | grep -q rwxp"
tui_keys Escape q
check "quits cleanly" tui_wait_exit
finish
