#!/usr/bin/env bash
# A hung agent (it accepts and never answers) while the monitor is open: the request ends with a timeout error
# naming the agent, and meanwhile the screen stays live (the header keeps refreshing, keys still work).
. "$(dirname "$0")/../lib.sh"

mkdir -p "$TMP/gops" "$XDG_CONFIG_HOME/diagtop"
echo "agent_timeout=3" >"$XDG_CONFIG_HOME/diagtop/config"
start_target hung env GOPS_CONFIG_DIR="$TMP/gops" "$TARGETS/gopsy" -fail hang; G=$TARGET_PID
wait_ready hung || fail "target did not start"
tui_start 150 40 "$DIAGTOP -d 0.5 -p $G"
tui_wait "^ *$G " || fail "no row"
uptime_now() { tui_screen | sed -n 's/.*Uptime: \([0-9:]*\).*/\1/p' | head -1; }
tui_keys G
check "G on a hung agent: the request is in flight" tui_wait "GC of $G by gops" 3
A=$(uptime_now); sleep 1.5; B=$(uptime_now)
check "the header keeps refreshing while the agent hangs ($A, then $B)" test -n "$A" -a "$A" != "$B"
check "the GC fails with a timeout error naming the agent, within the configured 3 s" \
    tui_wait 'GC failed: .*no reply from the gops agent .* within 3 s' 8
tui_keys Escape b
check "b on the hung agent: its stack request times out and the OS threads are shown instead" bash -c "
    $(declare -f tui_wait tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    tui_wait 'the OS threads instead: gops: .*within 3 s' 8 && tui_wait 'Stack of $G \(gopsy\), OS threads'"
check "the target was never stopped for good: running, untraced" bash -c "
    [ \$(awk '/^TracerPid:/ {print \$2}' /proc/$G/status) = 0 ]"
tui_keys Escape q
check "quits cleanly" tui_wait_exit
finish
