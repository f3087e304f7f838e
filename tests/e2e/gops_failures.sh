#!/usr/bin/env bash
# The gops agent as an untrusted peer: one that accepts and never answers (the real agent when a handler fails),
# one that answers garbage, one that sends without end, a stale port file, no port file, and another user's
# process. Each gives a clear one-line reason and exit status 1, never a hang beyond the timeout.
. "$(dirname "$0")/../lib.sh"

mkdir -p "$TMP/gops" "$TMP/out"
export DIAGTOP_DUMP_DIR="$TMP/out"
start_target hang env GOPS_CONFIG_DIR="$TMP/gops" "$TARGETS/gopsy" -fail hang; HANG=$TARGET_PID
start_target garbage env GOPS_CONFIG_DIR="$TMP/gops" "$TARGETS/gopsy" -fail garbage; GARBAGE=$TARGET_PID
start_target huge env GOPS_CONFIG_DIR="$TMP/gops" "$TARGETS/gopsy" -fail huge; HUGE=$TARGET_PID
start_target plain env GOPS_CONFIG_DIR="$TMP/gops" "$TARGETS/gopsy" -no-agent; PLAIN=$TARGET_PID
start_target profiling env GOPS_CONFIG_DIR="$TMP/gops" "$TARGETS/gopsy" -app-profiling; PROFILING=$TARGET_PID
wait_ready hang && wait_ready garbage && wait_ready huge && wait_ready plain && wait_ready profiling ||
    fail "targets did not start"

# elapsed_ms CMD...: runs CMD (output in $TMP/run.out, $TMP/run.err), sets ELAPSED_MS and STATUS.
run_timed() {
    local t0=$(date +%s%N)
    "$@" >"$TMP/run.out" 2>"$TMP/run.err"
    STATUS=$?
    ELAPSED_MS=$(( ($(date +%s%N) - t0) / 1000000 ))
}
err_has() { grep -q -- "$1" "$TMP/run.err" || { echo "  stderr: $(cat "$TMP/run.err")" >&2; return 1; }; }

# ---- hung: accepts, reads the command, never replies, never closes ----
run_timed "$DIAGTOP" gc "$HANG" --timeout 1 --json
check "hung agent: gc fails with status 1 after about the timeout (${ELAPSED_MS} ms)" \
    test "$STATUS" -eq 1 -a "$ELAPSED_MS" -ge 1000 -a "$ELAPSED_MS" -lt 8000
check "hung agent: the reason names the timeout" err_has "no reply from the gops agent on 127.0.0.1:[0-9]* within 1 s"
check "hung agent: one line of JSON with the error" json_eval "$TMP/run.out" "
    last['provider'] == 'gops' and 'within 1 s' in last['error']"
run_timed "$DIAGTOP" memstats "$HANG" --timeout 1 --json
check "hung agent: memstats shows the kernel's view and the runtime's reason (${ELAPSED_MS} ms)" json_eval "$TMP/run.out" "
    last['memory']['rss_bytes'] > 0 and 'within 1 s' in last['runtime']['error'] and $ELAPSED_MS < 8000"
run_timed "$DIAGTOP" stack "$HANG" --timeout 1 --json
check "hung agent: stack says so and shows the OS threads instead" bash -c "
    grep -q 'within 1 s' '$TMP/run.err' && grep -q 'OS threads' '$TMP/run.err' && grep -q '\"tid\"' '$TMP/run.out'"

# ---- garbage ----
run_timed "$DIAGTOP" gc "$GARBAGE"
check "garbage: gc refuses a reply that is not ok" test "$STATUS" -eq 1
check "garbage: gc's reason (its memstats before the GC)" err_has 'memstats: the reply has no "key: value" line'
run_timed "$DIAGTOP" heap "$GARBAGE"
check "garbage: heap says the profile is not gzip, and saves nothing" bash -c "
    [ $STATUS -eq 1 ] && grep -q 'heap profile: not valid gzip\|heap profile: not a' '$TMP/run.err' &&
    [ -z \"\$(ls '$TMP/out')\" ]" 
run_timed "$DIAGTOP" memstats "$GARBAGE" --json
check "garbage: memstats' runtime part says what is wrong" json_eval "$TMP/run.out" "
    'key: value' in last['runtime']['error']"
check "garbage: the terminal never sees the agent's escape bytes" bash -c "
    '$DIAGTOP' gc '$GARBAGE' 2>&1 | grep -q \$'\\x1b' && exit 1; exit 0"

# ---- endless ----
run_timed "$DIAGTOP" gc "$HUGE" --timeout 5
check "endless reply: gc stops at 1 MiB (${ELAPSED_MS} ms)" bash -c "[ $STATUS -eq 1 ] && [ $ELAPSED_MS -lt 8000 ]"
check "endless reply: the reason" err_has "exceeds 1 MiB: refused"
run_timed "$DIAGTOP" heap "$HUGE" --timeout 20
check "endless reply: heap stops at 64 MiB (${ELAPSED_MS} ms)" bash -c "[ $STATUS -eq 1 ] && [ $ELAPSED_MS -lt 25000 ]"
check "endless reply: heap's reason" err_has "exceeds 64 MiB: refused"

# ---- a CPU profile the agent never sends (its program profiles already), cancelled by SIGINT ----
"$DIAGTOP" profile "$PROFILING" >"$TMP/prof.out" 2>"$TMP/prof.err" &
PROF=$!
PIDS+=("$PROF")
for i in $(seq 100); do grep -q accepted "$TMP/profiling.out" && break; sleep 0.1; done
sleep 0.5
T0=$(date +%s%N)
kill -INT "$PROF"
wait "$PROF"
STATUS=$?
ELAPSED_MS=$(( ($(date +%s%N) - T0) / 1000000 ))
check "profile: SIGINT cancels the wait at once (${ELAPSED_MS} ms), status 1, 'cancelled'" bash -c "
    [ $STATUS -eq 1 ] && [ $ELAPSED_MS -lt 3000 ] && grep -q cancelled '$TMP/prof.err'"
check "profile: the agent logged its failure (it never replies then)" grep -q "cpu profiling already in use" \
    "$TMP/profiling.err"

# ---- discovery ----
run_timed "$DIAGTOP" gc "$PLAIN"
check "no port file: the directory from the target's environment" err_has "no gops port file in $TMP/gops"
PORT=$(sed -n 's/^ready port=//p' "$TMP/hang.out")
printf '%s' "$PORT" >"$TMP/gops/$PLAIN" # a port someone else listens on: stale for this process
run_timed "$DIAGTOP" gc "$PLAIN" --json
check "stale port file: says the port is not this process's LISTEN socket" \
    err_has "names port $PORT, which this process does not LISTEN on (stale"
check "stale port file: nothing connected to the port's real owner" bash -c "[ \$(grep -c accepted '$TMP/hang.out') = 3 ]"
printf 'x1' >"$TMP/gops/$PLAIN"
run_timed "$DIAGTOP" gc "$PLAIN"
check "a port file without a port" err_has "does not hold a port number"

if [ "$(id -u)" -eq 0 ]; then
    # The executable of another user's process is unreadable too, so the runtime is not known; the registry says
    # what would make GC available.
    run_timed setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all env XDG_CONFIG_HOME=/nonexistent \
        "$DIAGTOP" gc "$GARBAGE"
    check "another user's process: status 1, a reason, no connection" bash -c "
        [ $STATUS -eq 1 ] && grep -q 'not available' '$TMP/run.err' && [ \$(grep -c accepted '$TMP/garbage.out') = 4 ]"
else
    skip "another user's process (needs root)"
fi
finish
