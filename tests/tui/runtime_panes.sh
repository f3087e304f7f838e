#!/usr/bin/env bash
# The runtime's answers in the monitor, for a Go program with the gops agent: b shows goroutines (from gops) and v
# switches to the OS threads; G runs a GC and shows the heap before and after; A is the leak view (a heap profile,
# then r for a second snapshot with its changes); the Memory tab shows gops' memstats next to the kernel's; C takes
# the runtime's CPU profile with a progress bar while the table stays live; every pane names who answered.
. "$(dirname "$0")/../lib.sh"

mkdir -p "$TMP/gops" "$TMP/out"
start_target gopsy env GOPS_CONFIG_DIR="$TMP/gops" GOPSY_CPU_SECONDS=3 "$TARGETS/gopsy"; G=$TARGET_PID
wait_ready gopsy || fail "target did not start"
tui_start 150 45 "env DIAGTOP_DUMP_DIR=$TMP/out $DIAGTOP -d 1 -p $G"
tui_wait "^ *$G .* go\* " || fail "no row marked go*"
tui_keys b
check "b: goroutines from gops, grouped" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait 'Goroutines of $G \(gopsy\), from gops' 10 && tui_wait 'main.parkedReceive'"
tui_keys v
check "v: the OS threads through ptrace" tui_wait "Stack of $G \(gopsy\), OS threads \(ptrace\)" 10
tui_keys v
check "v again: back to the goroutines" tui_wait "Goroutines of $G \(gopsy\), from gops"
tui_keys Escape G
check "G: a GC by gops with the heap before and after" tui_wait 'GC by gops in [0-9.]+ ms: heap in use .* -> ' 10
tui_keys Escape A
check "A: the heap profile's allocation sites, from gops" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait 'heap profile from gops' 10 && tui_wait 'main.growHeap'"
tui_keys r
check "r: a second snapshot, shown with its changes since the first" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait '2 snapshots' 10 && tui_wait 'changes since the first snapshot'"
tui_keys Escape Enter 2
check "the Memory tab: gops' memstats next to the kernel's" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait 'memstats \(gops\):' 10 && tui_wait 'heap-alloc' && tui_wait 'RSS'"
tui_keys Escape C
check "C: the runtime's CPU profile with a progress bar" tui_wait "CPU profile of $G by gops +\[[#.]+\]" 5
check "C: the meters keep refreshing meanwhile (the header stays drawn)" tui_wait 'Load average'
check "C: the top functions from the saved pprof, and where it was saved" bash -c "$(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait 'CPU profile from gops' 20 && tui_wait 'saved as $TMP/out/cpu\.gopsy\.$G\.'"
tui_keys Escape q
check "quits cleanly" tui_wait_exit
finish
