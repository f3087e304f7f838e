#!/usr/bin/env bash
# The agent in the monitor, for a native program that leaks: its row says native*; A is the leak view from the
# agent (allocation sites by growth, a second snapshot with r); Enter on a row shows its whole stack with files and
# lines, Esc goes back to the table; G is malloc_trim with RSS before and after; the Memory tab has the allocator's
# and the agent's numbers next to the kernel's.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/targets/agent/lib.sh"
agent_targets || { fail "cannot build the agent's targets"; finish; }
mkdir -p "$TMP/out"
start_agent leaky DIAGTOP_AGENT_SAMPLE_INTERVAL=32768 "$AT/leaky" --rate 4194304; L=$TARGET_PID
wait_ready leaky && wait_socket "$L" || fail "target did not start"
tui_start 150 45 "env DIAGTOP_DUMP_DIR=$TMP/out $DIAGTOP -d 1 -p $L"
check "the row is native*" tui_wait "^ *$L .* native\* " 10
tui_keys A
check "A: the leak view from the agent, its allocation sites" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait 'heap profile from agent' 10 && tui_wait 'leak_block' && tui_wait 'steady_block'"
sleep 2 # 8 MiB leaked in between: far beyond the sampling noise of the steady site (~1 MiB)
tui_keys r
check "r: a second snapshot, sorted by growth, the leak on top" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait '2 snapshots' 10 && tui_wait 'sorted by growth' && tui_screen | grep -A1 -E '^ +bytes +\+bytes' | tail -1 | grep -q 'leak_block$'"
tui_keys Enter
check "Enter: the top row's whole stack, files and lines, and its growth" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait 'Allocation site: leak_block' 5 && tui_wait 'leak_block +.*leaky\.c:[0-9]+' &&
    tui_wait 'leak_bytes +.*leaky\.c:[0-9]+' && tui_wait 'Since the first snapshot: \+' && tui_wait 'Esc: back to the table'"
tui_keys Escape
check "Esc: back to the table (the pane stays)" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait 'sorted by growth' 5 && ! tui_screen | grep -q 'Allocation site:'"
# The second row's stack: which site is second is read off the screen (the steady site's growth swings around 0);
# a snapshot taken in between (one every 30 s) may reorder the rows below the leak, never the leak itself.
SECOND=$(tui_screen | grep -A2 -E '^ +bytes +\+bytes' | sed -n 3p | awk '{print $NF}')
tui_keys Down Enter
check "Down, Enter: the second row's stack (${SECOND:-none})" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    [ -n '$SECOND' ] && tui_wait 'Allocation site: ' 5 && ! tui_screen | grep -q 'Allocation site: leak_block'"
tui_keys Escape Escape G
check "G: malloc_trim(0) by the agent, RSS before and after" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait 'GC by agent in [0-9.]+ ms' 10 && tui_wait 'malloc_trim\(0\) .*RSS .* -> '"
tui_keys Escape Enter 2
check "the Memory tab: the allocator's and the agent's numbers next to the kernel's" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait 'malloc \(agent\):' 10 && tui_wait 'in-use' && tui_wait 'agent \(agent\):' && tui_wait 'RSS'"
tui_keys Escape q
check "quits cleanly" tui_wait_exit
finish
