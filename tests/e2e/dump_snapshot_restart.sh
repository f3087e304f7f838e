#!/usr/bin/env bash
# Snapshots make the main thread run system calls (clone, later wait4): it must go on as if it had only been
# stopped. A 3 s clock_nanosleep interrupted half-way ends on time, without EINTR (restarted through its restart
# block, not from scratch); a blocked read() returns the data written later; a waitpid(-1) loop, and a thread
# polling waitpid(-1, WNOHANG), never see the copy, and no zombie remains; a pipe the process closes while the copy
# exists reaches EOF at once (the copy shares the descriptor table, it holds no descriptor of its own); signals
# that arrive during the pauses all reach the process (the main thread runs the calls with every signal blocked:
# they wait, then are delivered).
. "$(dirname "$0")/../lib.sh"

mkfifo "$TMP/data" "$TMP/control" "$TMP/hold"
children() { local c; for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do echo "$c:$(awk '{print $3}' /proc/$c/stat)"; done; }
# next_line NAME PATTERN COUNT: waits (up to 10 s) until the target's output has COUNT lines matching PATTERN.
lines() { grep -c "$2" "$TMP/$1.out" 2>/dev/null; }
wait_lines() {
    local i
    for i in $(seq 100); do [ "$(lines "$1" "$2")" -ge "$3" ] && return 0; sleep 0.1; done
    return 1
}

# ---- the main thread in clock_nanosleep: dumps 1.5 s into a 3 s sleep ----
start_target hold cat "$TMP/hold"; HOLD=$TARGET_PID
start_target sleep "$TARGETS/snaprestart" sleep "$TMP/data" "$TMP/control" "$TMP/hold" 256; P=$TARGET_PID
wait_ready sleep || fail "target did not start"
for i in 1 2; do
    wait_lines sleep '^slept' "$i" || fail "no sleep ended"
    sleep 1.5
    "$DIAGTOP" dump --snapshot --json -o "$TMP/sleep$i.core" "$P" >"$TMP/sleep$i.json" 2>&1
    check "sleeping: snapshot $i written" json_eval "$TMP/sleep$i.json" "last['mode'] == 'snapshot' and last['zombie'] is None"
    rm -f "$TMP/sleep$i.core"
done
wait_lines sleep '^slept' 3 || fail "the sleeps stopped"
check "sleeping: every 3 s sleep ended on time, none with EINTR (restarted, not redone)" python3 -c "
import re, sys
s = [tuple(map(int, m)) for m in re.findall(r'^slept (\d+) rc=(\d+)', open('$TMP/sleep.out').read(), re.M)]
bad = [x for x in s if x[1] != 0 or not 2990 <= x[0] < 3600]
print('  sleeps (ms, rc):', s, file=sys.stderr) if bad else None
sys.exit(1 if bad or len(s) < 3 else 0)"
echo x >"$TMP/data"
check "sleeping: the other thread's blocked read returns the data" wait_lines sleep '^read 2 rc=0' 1

# The pipe the process closes while a copy exists: diagtop is stopped (SIGSTOP) while it holds the copy (a
# Python helper starts it, finds the copy among the process's children, traced by it, and stops it).
python3 - "$DIAGTOP" "$P" "$TMP/held.core" >"$TMP/held.pids" <<'PY' &
import glob, os, signal, subprocess, sys, time
diagtop, target, core = sys.argv[1:4]
d = subprocess.Popen([diagtop, "dump", "--snapshot", "-o", core, target], stdout=subprocess.DEVNULL)
print(d.pid, flush=True)
end = time.time() + 20
while time.time() < end and d.poll() is None:
    for f in glob.glob("/proc/%s/task/*/children" % target):
        for c in open(f).read().split():
            try:
                st = open("/proc/%s/status" % c).read()
            except OSError:
                continue
            if "\nTracerPid:\t%d\n" % d.pid in st:
                # The copy appears while the process is still stopped for the clone: stop diagtop only once it
                # has let the process go (every thread untraced), so that the process runs while the copy exists.
                while time.time() < end and any("\nTracerPid:\t0\n" not in open(t).read()
                                                for t in glob.glob("/proc/%s/task/*/status" % target)):
                    time.sleep(0.0005)
                os.kill(d.pid, signal.SIGSTOP)
                print(c, flush=True)
                sys.exit(d.wait())  # until the test continues it
sys.exit(100)
PY
H=$!
PIDS+=("$H")
for i in $(seq 100); do [ "$(wc -l <"$TMP/held.pids")" -ge 2 ] && break; kill -0 "$H" 2>/dev/null || break; sleep 0.1; done
D=$(sed -n 1p "$TMP/held.pids") COPY=$(sed -n 2p "$TMP/held.pids")
[ -n "$D" ] && PIDS+=("$D")
check "a copy exists, held by a stopped diagtop" bash -c "[ -n '$COPY' ] && [ -e /proc/$COPY ]"
echo c >"$TMP/control"
check "the pipe the process closed reaches EOF while the copy exists" bash -c "
    for i in \$(seq 20); do kill -0 $HOLD 2>/dev/null || break; sleep 0.1; done
    ! kill -0 $HOLD 2>/dev/null && [ -e /proc/$COPY ] && grep -q '^closed' '$TMP/sleep.out'"
[ -n "$D" ] && kill -CONT "$D"
wait "$H"
rc=$?
check "the dump goes on once diagtop continues; the copy is gone" bash -c "[ $rc -eq 0 ] && [ -s '$TMP/held.core' ] &&
    [ ! -e /proc/$COPY ]"
stop_pid "$P"

# ---- the main thread blocked in read() ----
start_target hold2 cat "$TMP/hold"
start_target read "$TARGETS/snaprestart" read "$TMP/data" "$TMP/control" "$TMP/hold" 16; P=$TARGET_PID
wait_ready read || fail "target did not start"
for i in 1 2 3; do
    "$DIAGTOP" dump --snapshot --json -o "$TMP/read$i.core" "$P" >"$TMP/read$i.json" 2>&1
    check "reading: snapshot $i written" json_eval "$TMP/read$i.json" "last['mode'] == 'snapshot' and last['zombie'] is None"
    rm -f "$TMP/read$i.core"
done
echo hello >"$TMP/data"
check "reading: the blocked read returns the data, no EINTR" wait_lines read '^read 6 rc=0' 1
check "reading: nothing else came out of read" test "$(lines read '^read [0-9-]')" -eq 1
stop_pid "$P"

# ---- the main thread in waitpid(-1), another polling it ----
start_target hold3 cat "$TMP/hold"
start_target wait "$TARGETS/snaprestart" wait "$TMP/data" "$TMP/control" "$TMP/hold" 16; P=$TARGET_PID
wait_ready wait || fail "target did not start"
CHILD=$(sed -n 's/^ready child=\([0-9]*\).*/\1/p' "$TMP/wait.out")
for i in 1 2 3; do
    "$DIAGTOP" dump --snapshot --json -o "$TMP/wait$i.core" "$P" >"$TMP/wait$i.json" 2>&1
    check "waiting: snapshot $i written, its copy reaped" json_eval "$TMP/wait$i.json" "last['mode'] == 'snapshot' and last['zombie'] is None"
    rm -f "$TMP/wait$i.core"
done
sleep 0.3
check "waiting: waitpid(-1) and the WNOHANG poll never saw a copy" bash -c "! grep -Eq '^(waited|polled)' '$TMP/wait.out'"
check "waiting: no zombie, only the process's own child" test "$(children "$P")" = "$CHILD:S"
stop_pid "$P"

# ---- signals arriving during the pauses ----
start_target sigcount "$TARGETS/sigcount"; P=$TARGET_PID
wait_ready sigcount || fail "target did not start"
(for i in $(seq 10000); do kill -s RTMIN "$P"; done) &
SENDER=$!
PIDS+=("$SENDER")
bad=0 snaps=0
for i in $(seq 15); do
    "$DIAGTOP" dump --json -o "$TMP/sig.core" "$P" >"$TMP/sig.json" 2>&1 || bad=$((bad + 1))
    grep -q '"mode":"snapshot"' "$TMP/sig.json" && snaps=$((snaps + 1))
    rm -f "$TMP/sig.core"
done
wait "$SENDER"
sleep 0.3
kill -USR2 "$P"
for i in $(seq 30); do grep -q '^count' "$TMP/sigcount.out" && break; sleep 0.1; done
check "15 dumps while signals arrive succeed, mostly snapshots ($snaps)" test "$bad" -eq 0 -a "$snaps" -ge 8
check "all 10000 signals reached the process ($(grep '^count' "$TMP/sigcount.out"))" grep -qx 'count 10000' "$TMP/sigcount.out"
check "no copy left" test -z "$(children "$P")"
finish
