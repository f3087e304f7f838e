#!/usr/bin/env bash
# diagtop killed with SIGKILL during snapshot dumps never harms the process: it is never killed and never left
# stopped or traced, and no copy keeps running (each ends a zombie under the process, never a running or stopped
# copy). First at every step of the protocol in turn (DIAGTOP_TEST_SNAPSHOT_KILL makes diagtop kill itself
# there: while the main thread runs the injected clone or wait4, before and after its registers are back, while
# the copy is held or being reaped), then at random instants, a few hundred times. The target is snapcheck, whose
# threads check their own registers (general and SSE) all along: one restored wrongly exits with "BAD".
. "$(dirname "$0")/../lib.sh"

start_target snapcheck "$TARGETS/snapcheck" 32; P=$TARGET_PID
wait_ready snapcheck || fail "target did not start"

# The checks after each kill, in Python (hundreds of times): the process lives, runs (within 2 s: a thread just
# detached may wait for a CPU), is traced by nobody, and has no child but zombies.
cat >"$TMP/kill.py" <<'PY'
import glob, os, random, signal, subprocess, sys, time
diagtop, target, tmp, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def state(path):
    try:
        s = open(path + "/stat").read()
        return s[s.rindex(")") + 2]
    except OSError:
        return None
def problems():
    bad = []
    if state("/proc/%d" % target) is None:
        return ["the process is gone"]
    for t in glob.glob("/proc/%d/task/*" % target):
        st = state(t)
        try:
            tracer = [l for l in open(t + "/status") if l.startswith("TracerPid:")][0].split()[1]
        except (OSError, IndexError):
            continue
        if st in ("t", "T") or tracer != "0":
            bad.append("thread %s: state %s, traced by %s" % (t.rsplit("/", 1)[1], st, tracer))
    for f in glob.glob("/proc/%d/task/*/children" % target):
        for c in open(f).read().split():
            st = state("/proc/" + c)
            if st not in (None, "Z"):
                bad.append("child %s (a copy?) in state %s" % (c, st))
    return bad
def settle():
    end = time.time() + 2
    while True:
        bad = problems()
        if not bad or time.time() > end:
            return bad
        time.sleep(0.01)
def one(env, delay):
    core = os.path.join(tmp, "kill.core")
    d = subprocess.Popen([diagtop, "dump", "--snapshot", "-o", core, str(target)], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if delay is not None:
        time.sleep(delay)
        d.send_signal(signal.SIGKILL)  # the diagtop this loop started, by its PID
    rc = d.wait()
    for f in glob.glob(os.path.join(tmp, "*kill.core*")):
        os.unlink(f)
    return rc
failures, killed = 0, 0
if mode == "steps":
    for step in sys.argv[5:]:
        rc = one(dict(os.environ, DIAGTOP_TEST_SNAPSHOT_KILL=step), None)
        bad = settle()
        print("%s %s: diagtop %s%s" % ("FAIL" if bad or rc != -9 else "ok", step,
              "killed itself" if rc == -9 else "ended with %d" % rc, "; " + "; ".join(bad) if bad else ""))
        failures += bool(bad) or rc != -9
else:
    def zombies():
        return sum(state("/proc/" + c) == "Z" for f in glob.glob("/proc/%d/task/*/children" % target)
                   for c in open(f).read().split())
    runs, longest, before = int(mode), float(sys.argv[5]), zombies()
    for i in range(runs):
        rc = one(dict(os.environ), random.uniform(0, longest))
        killed += rc == -9
        bad = settle()
        if bad:
            print("FAIL run %d: %s" % (i, "; ".join(bad)))
            failures += 1
    print("random: %d runs, %d killed mid-dump (%d of them after the clone: a zombie copy), %d with a problem"
          % (runs, killed, zombies() - before, failures))
sys.exit(1 if failures else 0)
PY

STEPS="clone-armed clone-entry clone-cloned clone-exit clone-continued clone-unmasked clone-restored copy-stopped
       copy-held copy-killed reap-armed reap-entry reap-exit reap-continued reap-unmasked reap-restored copy-released"
python3 "$TMP/kill.py" "$DIAGTOP" "$P" "$TMP" steps $STEPS >"$TMP/steps.txt" 2>&1
cat "$TMP/steps.txt" | sed 's/^/  /'
check "killed at each of the $(echo $STEPS | wc -w) steps: the process lives on, untraced, every copy dead" \
    test "$(grep -c '^ok ' "$TMP/steps.txt")" -eq "$(echo $STEPS | wc -w)"

# The same steps with a Go program, whose frames go to the bottom of [stack] (its main thread runs goroutines).
start_target go "$TARGETS/gostacks"; G=$TARGET_PID
wait_ready go || fail "Go target did not start"
python3 "$TMP/kill.py" "$DIAGTOP" "$G" "$TMP" steps $STEPS >"$TMP/gosteps.txt" 2>&1
check "a Go program killed at each step: it lives on, untraced, every copy dead" \
    test "$(grep -c '^ok ' "$TMP/gosteps.txt")" -eq "$(echo $STEPS | wc -w)"
grep '^FAIL' "$TMP/gosteps.txt" | sed 's/^/  /'
"$DIAGTOP" dump --snapshot --json -o "$TMP/goafter.core" "$G" >"$TMP/goafter.json" 2>&1
check "Go: a snapshot still works afterwards" json_eval "$TMP/goafter.json" "last['mode'] == 'snapshot'"
rm -f "$TMP/goafter.core"
stop_pid "$G"

# How long a dump takes here, so that the kills fall inside it: the quickest of three (one slowed by a busy
# machine would put most kills after the dump's end).
LONGEST=
for i in 1 2 3; do
    T0=$(date +%s%N)
    "$DIAGTOP" dump --snapshot -o "$TMP/timing.core" "$P" >/dev/null 2>&1
    MS=$(( ($(date +%s%N) - T0) / 1000000 ))
    rm -f "$TMP/timing.core"
    [ -z "$LONGEST" ] || [ "$MS" -lt "$LONGEST" ] && LONGEST=$MS
done
python3 "$TMP/kill.py" "$DIAGTOP" "$P" "$TMP" "${KILL_RUNS:-250}" "$(echo "$LONGEST" | awk '{print $1 / 1000 * 1.1}')" \
    >"$TMP/random.txt" 2>&1
tail -3 "$TMP/random.txt" | sed 's/^/  /'
check "killed at random instants: the process lives on, untraced, every copy dead" bash -c "
    grep -q ', 0 with a problem' '$TMP/random.txt' && [ \$(sed -n 's/.* runs, \([0-9]*\) killed.*/\1/p' '$TMP/random.txt') -gt \$(( ${KILL_RUNS:-250} / 3 )) ]"
check "the threads' own checks never failed (registers restored exactly every time)" bash -c \
    "kill -0 $P && ! grep -q BAD '$TMP/snapcheck.out'"
"$DIAGTOP" dump --snapshot --json -o "$TMP/after.core" "$P" >"$TMP/after.json" 2>&1
check "a snapshot still works afterwards" json_eval "$TMP/after.json" "last['mode'] == 'snapshot' and last['zombie'] is None"
finish
