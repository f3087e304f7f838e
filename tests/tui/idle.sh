#!/usr/bin/env bash
# The monitor never spins: in every state (table, each pane, help, prompts, menus, paused, after a message expired,
# after a job finished or failed, after a resize) its CPU time over a few seconds, read from /proc/PID/stat, stays
# far below a spinning loop's (~100% of a core; idle is ~1%). The bound of 20% leaves room for a loaded machine.
. "$(dirname "$0")/../lib.sh"

HZ=$(getconf CLK_TCK)
MEASURE=3
start_target threads "$TARGETS/threads" 4; T=$TARGET_PID
wait_ready threads || fail "target did not start"
mkdir "$TMP/dumps"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# idle_check STATE: the program's CPU over MEASURE seconds, after a second to settle, is below 20% of a core.
idle_check() {
    local pid a b pct
    pid=$(tui_app_pid)
    sleep 1
    a=$(cpu_ticks "$pid") || { fail "$1: program gone"; return; }
    sleep "$MEASURE"
    b=$(cpu_ticks "$pid") || { fail "$1: program gone"; return; }
    pct=$(( (b - a) * 100 / (HZ * MEASURE) ))
    if [ "$pct" -lt 20 ]; then ok "idle in $1: ${pct}% of a core"; else fail "idle in $1: ${pct}% of a core (spinning?)"; fi
}

tui_start 120 40 "env DIAGTOP_DUMP_DIR=$TMP/dumps $DIAGTOP -d 1 -p $T"
tui_wait "^ *$T " || fail "no row"
idle_check "the table"

tui_keys G
tui_wait 'not available' || fail "no message after G"
sleep 8 # the message expires (190 characters stay ~7 s): the defect was a zero poll timeout from then on
idle_check "the table after a status message expired"

tui_keys h
tui_wait 'diagtop keys' || fail "no help"
idle_check "help"
tui_keys Escape

tui_keys /
tui_wait 'Search:' || fail "no search prompt"
idle_check "the search prompt"
tui_keys Escape

tui_keys '\'
tui_wait 'Filter:' || fail "no filter prompt"
idle_check "the filter prompt"
tui_keys Escape

tui_keys k
tui_wait 'SIGTERM' || fail "no signal menu"
idle_check "the signal menu"
tui_keys Enter
tui_wait 'Send SIGTERM to' || fail "no confirmation"
idle_check "the signal confirmation"
tui_keys n
tui_wait 'no signal sent' || fail "the confirmation did not answer n"

tui_keys F2
tui_wait '\[x\] PID' || fail "no column setup"
idle_check "the column setup"
tui_keys Escape

tui_keys Z
tui_wait 'PAUSED' || fail "not paused"
idle_check "paused"
tui_keys Z

tui_keys b
tui_wait 'worker_park' 20 || fail "no stack"
idle_check "the stack pane after its capture finished"
tui_keys g
idle_check "the stack pane after a status message (g)"
tui_keys Escape

tui_keys Enter
tui_wait 'General' || fail "no details pane"
idle_check "the details pane (re-read at each refresh)"
tui_keys 2
idle_check "the details pane, memory tab"
tui_keys Escape

tui_keys D
tui_wait 'Dump [0-9]+ to' || fail "no dump confirmation"
idle_check "the dump confirmation"
tui_keys y
tui_wait 'Core file' 30 || fail "no dump written"
idle_check "the dump pane after the dump finished"
tui_keys Escape

tmux -L "$TMUX_SOCKET" resize-window -x 90 -y 30
sleep 0.5
idle_check "the table after a resize"
tui_keys q
tui_wait_exit || fail "did not quit"

# A job that fails: the dump directory is not a directory.
tui_start 120 40 "env DIAGTOP_DUMP_DIR=/dev/null/nowhere $DIAGTOP -d 1 -p $T"
tui_wait "^ *$T " || fail "no row"
tui_keys D
tui_wait 'Dump [0-9]+ to' || fail "no dump confirmation"
tui_keys y
tui_wait 'No dump' 20 || fail "the dump did not fail"
idle_check "the dump pane after the job failed"
tui_keys Escape
idle_check "the table after a failed job's message"
tui_keys q
tui_wait_exit || fail "did not quit"
finish
