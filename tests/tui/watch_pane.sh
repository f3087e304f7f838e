#!/usr/bin/env bash
# W in a real terminal: the form arms a watch of the selected process that runs while the user browses; the row is
# marked, the header counts watches and captures, each capture is announced and lands in the dump directory; w
# lists the watches with their events and x disarms one; a bad form is refused with the reason; q with a watch
# armed asks first; the target runs on, untraced.
. "$(dirname "$0")/../lib.sh"

start_target s "$TARGETS/sleeper" "watched-one"; S=$TARGET_PID
wait_exec "$S" "$TARGETS/sleeper" || fail "target did not start"
mkdir "$TMP/dumps"
export DIAGTOP_DUMP_DIR="$TMP/dumps"
tui_start 200 45 "$DIAGTOP -d 0.5 -p $S"
tui_wait "^ *$S " || fail "no row"
check "no mark column and no watch count before anything is armed" bash -c "
    $(declare -f tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    ! tui_screen | grep -q 'watches:' && tui_screen | grep -qE '^ *$S '"

tui_keys W
check "W opens the form on the selected process, filled with a default" \
    tui_wait "Watch $S \(sleeper\) when: cpu PCT.*: cpu 90:5 then dump count 1"
tui_keys C-u
tui_keys -l "cpu abc then dump"
tui_keys Enter
check "a bad form is refused with its reason" tui_wait "watch: --cpu: 'abc' is not PERCENT"
tui_keys W C-u
tui_keys -l "threads 1 then exec:touch $TMP/ran"
tui_keys Enter
check "exec is refused in the monitor (its output would write over the screen)" \
    bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
        tui_wait \"watch: exec's output would write over the screen\" && [ ! -e '$TMP/ran' ]"
tui_keys W C-u
tui_keys -l "signal SEGV then dump"
tui_keys Enter
check "a signal trigger is refused in the monitor (it holds the process traced)" \
    bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
        tui_wait 'watch: a signal or exit trigger holds a ptrace seize' &&
        grep -qE '^TracerPid:\s+0$' /proc/$S/status"

# threads >= 1 holds at the first sample: two stacks, a second apart, then the watch ends.
tui_keys W C-u
tui_keys -l "threads 1 then stack count 2 every 1"
tui_keys Enter
check "the watch is armed, its files going to the dump directory" \
    tui_wait "watch 1 armed on $S: threads 1 then stack count 2 every 1; files go to $TMP/dumps"
check "the first capture is announced in the status line" \
    tui_wait "watch 1: [0-9:]+ +capture +$S sleeper +stack +$TMP/dumps/sleeper_${S}_threads_" 15
check "the header counts them: two captures, the watch ended" tui_wait "watches: 0 armed, 2 captures" 15
check "two stack files of the process, each naming its main thread" bash -c "
    [ \$(ls '$TMP'/dumps/sleeper_${S}_threads_* | wc -l) = 2 ] &&
    for f in '$TMP'/dumps/sleeper_${S}_threads_*; do grep -q 'main' \"\$f\" || exit 1; done"

# A watch that does not fire: the row is marked while it runs.
tui_keys W C-u
tui_keys -l "cpu 99:60 then dump"
tui_keys Enter
check "a running watch marks its row in the mark column" tui_wait "^W +$S "
check "the header says one is armed" tui_wait "watches: 1 armed, 2 captures"
tui_keys w
check "w lists the watches: the ended one with its events" bash -c "
    $(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait '#1  pid $S  threads 1 then stack count 2 every 1  -- ended, 2 firings, 2 of 2 captures' &&
    tui_wait 'trigger +$S sleeper +threads >= 1' && tui_wait 'capture +$S sleeper +stack'"
check "and the armed one" tui_wait "#2  pid $S  cpu 99:60 then dump  -- armed, 0 firings, 0 of 1 capture"
tui_keys End x
check "x disarms the watch under the cursor" tui_wait "watch 2 disarmed"
check "it is gone from the list" bash -c "$(declare -f tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    sleep 1; ! tui_screen | grep -q '#2  pid'"
tui_keys Escape
check "no row is marked once no watch runs" bash -c "$(declare -f tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    sleep 1; tui_screen | grep -qE '^ *$S ' && ! tui_screen | grep -qE '^W +$S '"

# q with a watch armed asks first.
tui_keys W C-u
tui_keys -l "rss 100G then dump"
tui_keys Enter
tui_wait "watch 3 armed" || fail "third watch not armed"
tui_keys q
check "q with a watch armed asks first" tui_wait "1 watch is armed: quit and disarm it\? \[y/N\]"
tui_keys n
check "n keeps watching" tui_wait "still watching"
tui_keys q y
check "y quits cleanly" tui_wait_exit
check "no core was written by the watches that did not fire" bash -c "! ls '$TMP/dumps' | grep -qv '_threads_'"
check "the target runs on, untraced" bash -c "
    [ \$(awk '/^TracerPid:/ {print \$2}' /proc/$S/status) = 0 ] && kill -0 $S"
finish
