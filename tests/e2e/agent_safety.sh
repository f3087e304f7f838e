#!/usr/bin/env bash
# The agent runs safely or not at all: DIAGTOP_AGENT=0 leaves a program untouched (no socket, no thread); a socket
# directory that is not private (open mode, a symlink, another user's) or a socket path too long for sockaddr_un
# stops it with one line on stderr while the program runs on with the same output and status; the heap profile's
# tables stay under DIAGTOP_AGENT_MAX_MB (samples beyond it are dropped and counted); idle, the agent is one thread
# blocked in accept that uses no CPU; a program linked with it starts it with one call (diagtop_agent_start) and
# stops it (diagtop_agent_stop removes the socket), and without the call has none.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/targets/agent/lib.sh"
agent_targets || { fail "cannot build the agent's targets"; finish; }

# ---- the switch ----
start_target off env DIAGTOP_AGENT=0 DIAGTOP_AGENT_DIR="$AGENT_DIR" LD_PRELOAD="$AGENT_LIB" "$AT/leaky"; O=$TARGET_PID
wait_ready off || fail "off target did not start"
sleep 0.5
check "DIAGTOP_AGENT=0: no socket, no agent thread" bash -c "
    [ ! -e '$AGENT_DIR/agent.$O.sock' ] && ! grep -qx diagtop-agent /proc/$O/task/*/comm"
"$DIAGTOP" heap "$O" >/dev/null 2>"$TMP/off.err"
check "... and diagtop says a heap profile needs the agent" grep -q 'native program with the diagtop agent' "$TMP/off.err"
stop_pid "$O"

# ---- refusals: one line on stderr, the program untouched ----
refused() { # DESCRIPTION EXPECTED-WORDS DIR
    local out=$TMP/refused.out err=$TMP/refused.err
    env DIAGTOP_AGENT_DIR="$3" LD_PRELOAD="$AGENT_LIB" /bin/echo hello >"$out" 2>"$err"
    local rc=$?
    check "$1: echo runs (status $rc, its output), one line on stderr says why" bash -c "
        [ $rc = 0 ] && [ \"\$(cat '$out')\" = hello ] && [ \$(wc -l <'$err') = 1 ] &&
        grep -q '^libdiagtop-agent: not started: .*$2.*; the program runs on without it$' '$err'"
}
mkdir -m 755 "$TMP/open"
refused "a directory of mode 0755" "mode 0755: not private" "$TMP/open"
mkdir -m 700 "$TMP/real" && ln -s "$TMP/real" "$TMP/link"
refused "a symlink to a directory" "is a symlink" "$TMP/link"
mkdir -m 700 "$TMP/theirs" && chown nobody "$TMP/theirs"
refused "another user's directory" "owned by uid $(id -u nobody)" "$TMP/theirs"
LONG=$TMP/$(printf 'd%.0s' $(seq 90))
mkdir -m 700 "$LONG"
refused "a socket path over 107 bytes" "too long for a Unix socket" "$LONG"
refused "a relative directory" "not an absolute path" "relative/dir"
check "nothing was left in the refused directories" bash -c "[ -z \"\$(find '$TMP/open' '$TMP/real' '$LONG' -mindepth 1)\" ]"

# ---- the memory cap ----
start_agent capped DIAGTOP_AGENT_MAX_MB=1 DIAGTOP_AGENT_SAMPLE_INTERVAL=4096 "$AT/leaky" --burst 134217728; C=$TARGET_PID
wait_ready capped && wait_socket "$C" || fail "capped target did not start"
kill -USR1 "$C"
wait_line capped '^leaked ' 60 || fail "no burst"
"$DIAGTOP" memstats --json "$C" >"$TMP/cap.json"
check "DIAGTOP_AGENT_MAX_MB=1: 128 MiB sampled every 4 KiB (32768 samples) fill the cap: samples dropped, counted" \
    json_eval "$TMP/cap.json" "
    last['runtime']['sections']['agent']['samples_dropped'] > 0 and
    last['runtime']['sections']['agent']['table_cap'] == 1 << 20 and
    0 < last['runtime']['sections']['agent']['table_bytes'] <= 1 << 20"
check "... the program went on allocating (its burst is done)" bash -c "kill -0 $C && grep -q '^leaked 1342' '$TMP/capped.out'"
"$DIAGTOP" heap --json "$C" >"$TMP/caph.json"
check "... and its heap profile still names the leak (what fits is kept)" json_eval "$TMP/caph.json" "
    last['rows'][0]['name'] == 'leak_block'"
stop_pid "$C"

# ---- idle ----
start_agent idle "$AT/linked" nostart; I=$TARGET_PID # preloaded: the agent starts by itself
wait_ready idle && wait_socket "$I" || fail "idle target did not start"
AGENT_TID=$(grep -lx diagtop-agent /proc/$I/task/*/comm | cut -d/ -f5)
cpu_of() { awk '{print $14 + $15}' "/proc/$I/task/$1/stat"; }
sleep 0.5
T0=$(cpu_of "$AGENT_TID")
sleep 2
T1=$(cpu_of "$AGENT_TID")
check "idle: one extra thread, diagtop-agent, blocked in accept4, no CPU in 2 s ($T0 -> $T1 ticks)" bash -c "
    [ \$(ls /proc/$I/task | wc -l) = 2 ] && [ -n '$AGENT_TID' ] &&
    [ \"\$(cut -d' ' -f1 /proc/$I/task/$AGENT_TID/syscall)\" = 288 ] && [ '$T0' = '$T1' ]"
check "... which blocks the program's signals (they are not for it): INT, TERM, HUP, CHLD, USR1, PROF, ALRM" \
    python3 -c "
import sys
m = int([l for l in open('/proc/$I/task/$AGENT_TID/status') if l.startswith('SigBlk:')][0].split()[1], 16)
sys.exit(0 if all(m >> (s - 1) & 1 for s in (2, 15, 1, 17, 10, 27, 14)) else 1)"
stop_pid "$I"

# ---- linked, started with one call ----
start_target linked env DIAGTOP_AGENT_DIR="$AGENT_DIR" DIAGTOP_AGENT_SAMPLE_INTERVAL=4096 "$AT/linked"; K=$TARGET_PID
wait_ready linked || fail "linked target did not start"
check "linked: diagtop_agent_start() listens, diagtop_agent_socket_path says where" bash -c "
    grep -qx 'ready $AGENT_DIR/agent.$K.sock 0' '$TMP/linked.out' && [ -S '$AGENT_DIR/agent.$K.sock' ]"
"$DIAGTOP" heap --json "$K" >"$TMP/linked.json"
check "... its heap profile has keep_block's 1 MiB (every 4 KiB block of it)" json_eval "$TMP/linked.json" "
    any(r['name'] == 'keep_block' and 0.5 * (1 << 20) < r['bytes'] < 2 * (1 << 20) for r in last['rows'])"
stop_pid "$K"
check "... diagtop_agent_stop() at the end removed the socket" test ! -e "$AGENT_DIR/agent.$K.sock"
start_target nostart env DIAGTOP_AGENT_DIR="$AGENT_DIR" "$AT/linked" nostart; N=$TARGET_PID
wait_ready nostart || fail "nostart target did not start"
check "linked without the call: no socket, no agent thread" bash -c "
    [ ! -e '$AGENT_DIR/agent.$N.sock' ] && ! grep -qx diagtop-agent /proc/$N/task/*/comm"
stop_pid "$N"
finish
