#!/usr/bin/env bash
# diagtop watch: a CPU spike, a size and a growth rate of resident memory, thread and descriptor counts fire the
# captures asked, once per firing and no more than --count; the core loads in gdb; exec gets the firing in its
# environment; --name catches a process started later; a cgroup's processes are watched; the disk guard holds;
# a process that exits ends the watch; bad options are refused with a clear line.
. "$(dirname "$0")/../lib.sh"

# watch_json NAME ARGS...: runs diagtop watch --json ARGS in the background, its log in $TMP/NAME.log; W_PID.
watch_bg() {
    local name=$1
    shift
    "$DIAGTOP" watch --json "$@" >"$TMP/$name.log" 2>"$TMP/$name.err" &
    W_PID=$!
    PIDS+=("$W_PID")
}
# wait_exit PID SECONDS: waits for a background watch to end; its status in W_STATUS (124: still running).
wait_exit() {
    local i
    for i in $(seq $(($2 * 10))); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$1" 2>/dev/null; then W_STATUS=124; stop_pid "$1"; return 1; fi
    wait "$1"
    W_STATUS=$?
}

# ---- a CPU spike: fires once, after the spike held its seconds; the core loads in gdb ----
mkdir -p "$TMP/cpu"
start_target spin "$TARGETS/idlespin" 1 30
SPIN=$TARGET_PID
wait_ready spin
# The threshold leaves room for a loaded machine (tests run side by side on two cores): a spinning thread gets
# a quarter of one even then. How soon it fires is measured by bench/watch, not asserted here.
watch_bg cpu "$SPIN" --cpu 25:2 --interval 0.5 --dump-dir "$TMP/cpu"
wait_exit "$W_PID" 40
check "cpu: the watch ends with status 0 once it fired" test "$W_STATUS" -eq 0
check "cpu: one trigger, after the spike held 2 s, with the value" json_eval "$TMP/cpu.log" \
    "[d['trigger'] for d in docs if d['event']=='trigger'] == ['cpu'] and \
     all(d['value'] >= 25 and d['held_seconds'] >= 1.95 for d in docs if d['event']=='trigger')"
SPIN_AT=$(awk '/^spin/ {print $2}' "$TMP/spin.out")
# The trigger's wall time against the spin's start (monotonic in the target: compared through the uptime clock):
# never before the spike held its 2 s, and while it lasts (30 s). The first interval counted may have begun before
# the spike: at 25% it counts once the spike filled a quarter of it, so the run can start up to 0.75 of an
# interval (0.375 s) early.
check "cpu: the trigger came after the spike held its 2 s, while it lasted" python3 - "$TMP/cpu.log" "$SPIN_AT" <<'PY'
import json, sys, time
docs = [json.loads(l) for l in open(sys.argv[1])]
trig = [d for d in docs if d["event"] == "trigger"][0]
mono_now, wall_now = time.clock_gettime(time.CLOCK_MONOTONIC), time.time()
at = trig["unix_time"] - wall_now + mono_now      # the trigger on the monotonic clock
after = at - float(sys.argv[2])
print("  trigger %.2f s after the spike began" % after, file=sys.stderr)
sys.exit(0 if 2 - 0.375 - 0.05 <= after <= 30 else 1)
PY
CORE=$(ls "$TMP"/cpu/idlespin_"$SPIN"_cpu_*Z.core 2>/dev/null | head -1)
check "cpu: the core is named <comm>_<pid>_<trigger>_<UTC time>.core, 0600" \
    test -n "$CORE" -a "$(stat -c %a "$CORE" 2>/dev/null)" = 600
check "cpu: the capture event names that file, with its pause" json_eval "$TMP/cpu.log" \
    "[d['file'] for d in docs if d['event']=='capture'] == ['$CORE'] and \
     all(d['action']=='dump' and d['pause_ms'] >= 0 for d in docs if d['event']=='capture')"
gdb -nx -batch "$TARGETS/idlespin" "$CORE" -ex 'bt' >"$TMP/gdb.txt" 2>&1
check "cpu: gdb loads the core: main is on the stack" grep -qE '#[0-9]+ .*main \(' "$TMP/gdb.txt"
check "cpu: the target runs on after the capture, untraced" \
    bash -c "grep -qE '^State:\s+[RS]' /proc/$SPIN/status && grep -qE '^TracerPid:\s+0$' /proc/$SPIN/status"
stop_pid "$SPIN"

# ---- resident memory: a size and a growth rate (leaker grows 8 MiB a second) ----
start_target leak "$TARGETS/leaker" 8
LEAK=$TARGET_PID
watch_bg rss "$LEAK" --rss 40M --interval 0.5 --then stack --dump-dir "$TMP"
watch_bg growth "$LEAK" --rss-growth 100M/min:5 --interval 0.5 --then stack --dir "$TMP"
G_PID=$W_PID
wait_exit "${PIDS[-2]}" 40
check "rss: fires at 40 MiB, not before" json_eval "$TMP/rss.log" \
    "[d for d in docs if d['event']=='trigger'][0]['value'] >= 40*2**20 and \
     [d for d in docs if d['event']=='trigger'][0]['value'] < 64*2**20"
check "rss: its stack file was written" json_eval "$TMP/rss.log" \
    "[d['action'] for d in docs if d['event']=='capture'] == ['stack']"
wait_exit "$G_PID" 40
check "rss-growth: fires with a rate within 25% of 480 MiB/min" json_eval "$TMP/growth.log" \
    "abs([d for d in docs if d['event']=='trigger'][0]['value'] / (480*2**20) - 1) < 0.25"
STACK=$(ls "$TMP"/leaker_"$LEAK"_rss-growth_*Z.stack.txt 2>/dev/null | head -1)
check "rss-growth: the stack file names main" grep -q 'main' "${STACK:-/dev/null}"
stop_pid "$LEAK"

# ---- --count 2 --every 2: exactly two firings, about 2 s apart; threads and fds ----
start_target threads "$TARGETS/threads" 4
THR=$TARGET_PID
wait_ready threads
mkdir -p "$TMP/count"
"$DIAGTOP" watch "$THR" --threads 5 --fds 3 --count 2 --every 2 --interval 0.25 --then stack --json \
    --dump-dir "$TMP/count" >"$TMP/count.log" 2>"$TMP/count.err"
check "count: exactly two stack files" test "$(ls "$TMP"/count/*.stack.txt | wc -l)" -eq 2
check "count: two triggers 1.9 to 3 s apart, on threads (5 threads)" json_eval "$TMP/count.log" \
    "(lambda t: len(t) == 2 and 1.9 <= t[1]['unix_time'] - t[0]['unix_time'] <= 3.0 and \
      all(x['trigger']=='threads' and x['value']==5 for x in t))([d for d in docs if d['event']=='trigger'])"
"$DIAGTOP" watch "$THR" --fds 3 --interval 0.25 --then 'exec:env >"$DIAGTOP_DIR/env.txt"' \
    --dump-dir "$TMP/count" >"$TMP/exec.log" 2>&1
check "exec: the command ran with the PID, the trigger and the value" \
    grep -qx "DIAGTOP_PID=$THR" "$TMP/count/env.txt"
check "exec: DIAGTOP_TRIGGER=fds and DIAGTOP_VALUE" \
    bash -c "grep -qx 'DIAGTOP_TRIGGER=fds' '$TMP/count/env.txt' && grep -qE '^DIAGTOP_VALUE=[0-9]+$' '$TMP/count/env.txt'"
check "exec: the text log says it ran and its exit status" grep -q 'exec done (exit status 0)' "$TMP/exec.log"

# ---- the disk guard: a dump larger than --max-disk is not taken, and the log says so ----
"$DIAGTOP" watch "$THR" --threads 2 --max-disk 4K --interval 0.25 --dump-dir "$TMP/count" >"$TMP/guard.log" 2>&1
check "max-disk: the dump is not taken, with the reason" grep -q 'dump not taken: about .* left of --max-disk' "$TMP/guard.log"
check "max-disk: no core written" test -z "$(ls "$TMP"/count/*.core 2>/dev/null)"
stop_pid "$THR"

# ---- --name: a process started after the watch, under a name of this test's own ----
NAME=wspin$$
cp "$TARGETS/burner" "$TMP/$NAME"
watch_bg name --name "$NAME" --cpu 20 --interval 0.25 --then stack --dir "$TMP" # low: the burner shares 2 cores with the other tests
for i in $(seq 50); do grep -q '"waiting"' "$TMP/name.log" && break; sleep 0.1; done
check "name: waits for the process, and says so" grep -q '"event":"waiting"' "$TMP/name.log"
start_target named "$TMP/$NAME"
NAMED=$TARGET_PID
wait_exit "$W_PID" 30
check "name: the process started later is watched and fires" json_eval "$TMP/name.log" \
    "[d['pid'] for d in docs if d['event']=='trigger'] == [$NAMED]"
stop_pid "$NAMED"

# ---- a process that exits ends its watch: status 1 and a clear line ----
start_target short "$TARGETS/sleeper"
SHORT=$TARGET_PID
watch_bg gone "$SHORT" --cpu 90 --interval 0.25
sleep 0.5
stop_pid "$SHORT"
wait_exit "$W_PID" 10
check "exit: the watch ends with status 1" test "$W_STATUS" -eq 1
check "exit: and says the process is gone" json_eval "$TMP/gone.log" \
    "any(d['event']=='exited' and d['pid']==$SHORT and 'gone' in d['message'] for d in docs) and last['event']=='done'"

# ---- a cgroup: every process in it (one of this test's own: cgroup v2, else v1's pids hierarchy) ----
CGREL=diagtop-test-$$
[ -f /sys/fs/cgroup/cgroup.controllers ] || CGREL=pids/diagtop-test-$$
CG=/sys/fs/cgroup/$CGREL
if mkdir "$CG" 2>/dev/null && [ -f "$CG/cgroup.procs" ]; then
    start_target cg "$TARGETS/burner"
    CGP=$TARGET_PID
    echo "$CGP" >"$CG/cgroup.procs"
    "$DIAGTOP" watch --cgroup "$CGREL" --cpu 50 --interval 0.25 --then stack --json --dump-dir "$TMP" \
        >"$TMP/cg.log" 2>&1
    check "cgroup: its process is watched and fires" json_eval "$TMP/cg.log" \
        "[d['pid'] for d in docs if d['event']=='trigger'] == [$CGP]"
    stop_pid "$CGP"
    for i in $(seq 30); do rmdir "$CG" 2>/dev/null && break; sleep 0.1; done
else
    rmdir "$CG" 2>/dev/null
    skip "cgroup: no cgroup of its own can be made here"
fi

# ---- bad input ----
"$DIAGTOP" watch 1 >"$TMP/bad1" 2>&1; rc=$?
check "no condition: status 2 and the conditions named" bash -c "[ $rc -eq 2 ] && grep -q 'no condition' '$TMP/bad1'"
"$DIAGTOP" watch 1 --cpu lots >"$TMP/bad2" 2>&1; rc=$?
check "a bad --cpu: status 2 and the form wanted" bash -c "[ $rc -eq 2 ] && grep -q 'PERCENT\[:SECONDS\]' '$TMP/bad2'"
"$DIAGTOP" watch 1 --name x --cpu 5 >"$TMP/bad3" 2>&1; rc=$?
check "two targets: status 2" bash -c "[ $rc -eq 2 ] && grep -q 'one target' '$TMP/bad3'"
"$DIAGTOP" watch 4194304 --cpu 5 >"$TMP/bad4" 2>&1; rc=$?
check "a PID that is not there: 'no process N'" bash -c "[ $rc -eq 1 ] && grep -q 'no process 4194304' '$TMP/bad4'"
"$DIAGTOP" watch 1 --cpu 5 --then core >"$TMP/bad5" 2>&1; rc=$?
check "an unknown action: status 2, the actions named" bash -c "[ $rc -eq 2 ] && grep -q 'exec:COMMAND' '$TMP/bad5'"
finish
