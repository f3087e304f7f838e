#!/usr/bin/env bash
# The table at 80x24 shows sizes with their unit: a 64 MiB target's RES reads 6x.xM and a leaking target's
# RES/min reads +NN.NM, never a bare number of KiB.
. "$(dirname "$0")/../lib.sh"

start_target hog "$TARGETS/hog" 64; HOG=$TARGET_PID
wait_ready hog || fail "hog never allocated its memory"
start_target leaker "$TARGETS/leaker" 1; LEAKER=$TARGET_PID

tui_start 80 24 "$DIAGTOP -d 0.5 -p $HOG,$LEAKER"
check "the titles show RES and RES/min at 80 columns" tui_wait ' RES .*RES/min'
check "RES of a 64 MiB target reads 6x.xM" tui_wait "^ *$HOG .* 6[0-9]\.[0-9]M "
check "RES/min of a target leaking 1 MiB/s reads +NN.NM" tui_wait "^ *$LEAKER .* \+[0-9]+(\.[0-9])?M " 15
check "no size cell of the two rows is a bare number of KiB" bash -c "
    ! tmux -L '$TMUX_SOCKET' capture-pane -p | grep -E '^ *($HOG|$LEAKER) ' | sed -E 's/^ *[0-9]+ //' | grep -qE ' [0-9]{4,} '"
tui_keys q
check "q exits" tui_wait_exit
finish
