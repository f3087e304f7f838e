#!/usr/bin/env bash
# D in a real terminal: a confirmation with the path and size, a progress line, the result, a reads the core in the
# pane; Esc during a big dump cancels it (no file, the target runs); n at the confirmation writes nothing.
. "$(dirname "$0")/../lib.sh"

start_target dumpme "$TARGETS/dumpme" 16 0 0; P=$TARGET_PID
wait_ready dumpme || fail "target did not start"
start_target big "$TARGETS/dumpme" 1536 0 0; B=$TARGET_PID
wait_ready big || fail "big target did not start"
mkdir "$TMP/dumps"
export DIAGTOP_DUMP_DIR="$TMP/dumps"
tui_start 160 40 "$DIAGTOP -d 0.5 -p $P,$B -s pid"
tui_wait "^ *$P " || fail "no row"
# The first row is the smaller pid: select the small target explicitly with a search.
tui_keys /
tui_keys -l "$P"
tui_keys Enter D
check "D asks first, naming the file, the size and the mode" tui_wait "Dump $P to $TMP/dumps/core\.dumpme\.$P\.[0-9-]+ \(up to [0-9]+ MiB, a snapshot: paused only to clone a copy\)\? \[y/N\]"
tui_keys n
check "n writes nothing" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait 'no dump written' && [ -z \"\$(ls -A '$TMP/dumps')\" ]"
tui_keys D y
check "y writes it: the pane shows the path, size, threads and the stop" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait 'Core file +$TMP/dumps/core\.dumpme\.$P\.' 20 && tui_wait 'Threads +4' && tui_wait 'Stopped for +[0-9.]+ ms' &&
    tui_wait 'Mode +snapshot' && tui_wait 'Paused +[0-9.]+ ms to clone the copy, [0-9.]+ ms \(main thread\) to reap it'"
CORE=$(ls "$TMP"/dumps/core.dumpme."$P".* | head -1)
check "the core loads in gdb with 4 threads" bash -c "gdb -nx -batch '$TARGETS/dumpme' '$CORE' -ex 'info threads' 2>&1 |
    grep -cE '^[* ] +[0-9]+ +Thread ' | grep -qx 4"
check "the target runs" test "$(awk '{print $3}' /proc/$P/stat)" = S
check "the pane offers to read the core here" tui_wait 'a: read it here \(the stacks, goroutines, the native heap by size\)'
tui_keys a
check "a reads the core in the pane, as diagtop analyze: the process, its main thread's stack, the heap" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait 'Core .*core\.dumpme\.$P\..*: process $P \(dumpme\), 4 threads' 20 && tui_wait 'Signal: none \(a dump of a live process\)' &&
    tui_wait '^Thread $P \(main\)' && tui_wait 'core analyzed: '"
tui_keys End
check "... scrolled to its end: the native heap and the mapped files" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait 'More offline: diagtop analyze .*core\.dumpme' && tui_wait 'Mapped files: '"
tui_keys Escape

# Esc during the dump of 1.5 GiB.
tui_keys /
tui_keys -l "$B"
tui_keys Enter D y
check "progress is shown while dumping" tui_wait 'Dumping [0-9]+ to .*MiB .*MB/s'
tui_keys Escape
sleep 1
check "Esc cancels: no core and no partial file of the big target" bash -c "! ls -a '$TMP/dumps' | grep -q '\.$B\.'"
check "Esc cancels: the target runs, untraced, its copy gone" bash -c \
    "[ \$(awk '{print \$3}' /proc/$B/stat) = S ] && [ \$(awk '/^TracerPid:/ {print \$2}' /proc/$B/status) = 0 ] &&
     [ -z \"\$(cat /proc/$B/task/*/children)\" ]"
tui_keys q
check "quits cleanly" tui_wait_exit
check "exit status 0" test "$TUI_EXIT" = 0
finish
