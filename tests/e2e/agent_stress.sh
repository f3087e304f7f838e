#!/usr/bin/env bash
# The agent must never break the program it lives in: a multi-threaded allocation stress (every interposed
# function, blocks freed by other threads, short-lived threads) that forks every 20 ms (children leave by _exit,
# exit, an exec of itself and of /bin/true) ends within its time, with every block intact and every child well,
# while diagtop asks for heap snapshots, memstats, trims and CPU profiles all along; the children leave no socket,
# the parent's stays until it exits normally. A process that execs itself in the middle of a 1000 Hz CPU profile
# survives (no SIGPROF left pending for the new image).
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/targets/agent/lib.sh"
agent_targets || { fail "cannot build the agent's targets"; finish; }
mkdir -p "$TMP/out"
export DIAGTOP_DUMP_DIR="$TMP/out"

start_agent stress DIAGTOP_AGENT_SAMPLE_INTERVAL=65536 "$AT/stress" 4 8; P=$TARGET_PID
wait_ready stress && wait_socket "$P" || fail "stress did not start"
: >"$TMP/asked"
i=0
START=$SECONDS
while kill -0 "$P" 2>/dev/null && ! grep -q '^done' "$TMP/stress.out"; do
    if [ $((SECONDS - START)) -gt 120 ]; then # it runs 8 s: this long is a deadlock
        fail "the stress did not end within 120 s (deadlock?)"
        kill -KILL "$P"
        break
    fi
    case $((i % 4)) in
    0) "$DIAGTOP" heap --json "$P" >"$TMP/h.json" 2>/dev/null && grep -q '"provider":"agent"' "$TMP/h.json" && echo heap >>"$TMP/asked" ;;
    1) "$DIAGTOP" memstats --json "$P" >"$TMP/m.json" 2>/dev/null && grep -q '"provider":"agent"' "$TMP/m.json" && echo memstats >>"$TMP/asked" ;;
    2) "$DIAGTOP" gc --json "$P" >"$TMP/g.json" 2>/dev/null && grep -q 'malloc_trim' "$TMP/g.json" && echo gc >>"$TMP/asked" ;;
    3) "$DIAGTOP" profile -d 1 --rate 200 --json "$P" >"$TMP/p.json" 2>/dev/null && grep -q '"samples"' "$TMP/p.json" && echo profile >>"$TMP/asked" ;;
    esac
    i=$((i + 1))
done
wait "$P"
RC=$?
check "the stress ended by itself within its time (status $RC), every check passed" bash -c "
    [ $RC = 0 ] && grep -Eq '^done forks [1-9][0-9]* execs [1-9][0-9]* threads [1-9][0-9]* bad 0 children_bad 0$' \
        '$TMP/stress.out'"
check "diagtop's requests were answered meanwhile: heap, memstats, gc and CPU profiles" bash -c "
    for r in heap memstats gc profile; do grep -qx \$r '$TMP/asked' || exit 1; done"
check "nothing on the program's stderr" test ! -s "$TMP/stress.err"
check "no socket left behind: the children's went with them, the parent's at its exit" bash -c "
    [ -z \"\$(ls -A '$AGENT_DIR')\" ]"

# exec in the middle of CPU profiles: each profile the exec cuts ends without a reply (the listener went with the
# old image), the program goes on
start_agent reexec "$AT/reexec" 60 20; E=$TARGET_PID
wait_ready reexec || fail "reexec did not start"
START=$SECONDS
tries=0
while kill -0 "$E" 2>/dev/null && [ $((SECONDS - START)) -lt 60 ]; do
    "$DIAGTOP" profile -d 1 --rate 1000 --json "$E" >/dev/null 2>&1
    tries=$((tries + 1))
done
wait "$E"
RC=$?
check "a process that execs itself 60 times while profiled at 1000 Hz goes on to its end (status $RC, $tries profiles)" \
    bash -c "[ $RC = 0 ] && grep -qx done '$TMP/reexec.out' && [ $tries -ge 2 ]"
finish
