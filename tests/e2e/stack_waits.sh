#!/usr/bin/env bash
# What each blocked thread waits on (issue 24): the waiters target's threads sit in known calls on known objects,
# and say what they are (its own getsockname/getpeername, the PID of the child holding the pipe's write end and
# the lock, the futex word's address, the tids). A vforking process sits in D: it is read without being stopped,
# with its kernel stack. Nothing is left traced.
. "$(dirname "$0")/../lib.sh"

LOCK=$TMP/$'lock\e[31mred'
start_target waiters "$TARGETS/waiters" lock "$LOCK"; W=$TARGET_PID
start_target vforker "$TARGETS/waiters" vfork; V=$TARGET_PID
wait_ready waiters && wait_ready vforker || { fail "targets did not start"; finish; }
read -r _ LPORT PPORT < <(grep '^port ' "$TMP/waiters.out")
WRITER=$(awk '/^pipe /{print $2}' "$TMP/waiters.out")
FUTEX=$(awk '/^futex /{print $2}' "$TMP/waiters.out")
tid() { awk -v n="$1" '$1 == "tid" && $2 == n {print $3}' "$TMP/waiters.out"; }
read -r _ DPID GRANDCHILD < <(grep '^dstate ' "$TMP/vforker.out")
PIDS+=("$GRANDCHILD" "$DPID") # stopped by PID too (they also die with their parents)

"$DIAGTOP" stack "$W" >"$TMP/text" 2>"$TMP/err"; RC=$?
check "stack: exit 0" test "$RC" -eq 0
block() { # the block of the thread named $1, from its header to the next empty line
    awk -v n="\"$1\"" 'index($0, n) && /^(Thread|[0-9]+ threads)/ {on=1} on && $0 == "" {exit} on' "$TMP/text"
}
check "a TCP read names both endpoints and the state" \
    grep -q "waiting in read(fd [0-9]*, 64 bytes) on tcp 127.0.0.1:$LPORT -> 127.0.0.1:$PPORT ESTABLISHED" <(block sockreader)
check "accept names the listening socket" \
    grep -q "waiting in accept(fd [0-9]*) on tcp 127.0.0.1:$PPORT LISTEN" <(block waiters)
check "a pipe read names the PID holding the write end" \
    grep -q "waiting in read(fd [0-9]*, 64 bytes) on pipe:\[[0-9]*\], write end held by $WRITER (waiters)" <(block pipereader)
F1=$(tid futex-1) F2=$(tid futex-2) F3=$(tid futex-3)
check "the three futex waiters are one block naming each other" \
    grep -q "^3 threads: $F1 $F2 $F3 .*" <(block futex-1)
check "the futex line has the word's address and its three waiters" \
    grep -q "waiting in futex(0x$FUTEX, wait), 3 threads wait on it: $F1 $F2 $F3, last ran" <(block futex-1)
check "nanosleep's request is decoded" grep -q "waiting in clock_nanosleep(60 min)" <(block napper)
check "poll names its eventfd" grep -q "waiting in poll(fd [0-9]*, no timeout) on eventfd, count 0" <(block evpoller)
check "flock names the file (sanitized) and the PID holding the lock" \
    grep -q "waiting in flock(fd [0-9]*) on $TMP/lock?\[31mred at offset 0, locked by $WRITER (waiters, FLOCK WRITE)" <(block locker)
check "no escape byte reaches the terminal" bash -c "! grep -q $'\e' '$TMP/text'"

# A second capture: the stop turned the sleep and the poll into restart_syscall; they are named all the same.
"$DIAGTOP" stack "$W" >"$TMP/text2" 2>&1
check "after a stop, a resumed sleep is still named" \
    grep -q "waiting in clock_nanosleep(60 min) (resumed after a stop)" "$TMP/text2"
check "after a stop, a resumed poll still names its eventfd" \
    grep -q "waiting in poll(fd [0-9]*, no timeout) (resumed after a stop) on eventfd" "$TMP/text2"

"$DIAGTOP" stack "$W" --json >"$TMP/json" 2>&1
check "JSON: every thread's wait, with the fields docs/json.md lists" python3 - "$TMP/json" "$F1,$F2,$F3" "$FUTEX" \
    "$(tid sockreader)" "$LPORT" "$PPORT" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
futex_tids = sorted(int(t) for t in sys.argv[2].split(","))
by = {t["tid"]: t for t in d["threads"]}
bad = []
keys = {"syscall", "nr", "restarted", "args", "call", "fd", "fd_kind", "object", "futex", "futex_waiters",
        "kernel_stack", "last_ran_seconds_ago"}
for t in d["threads"]:
    w = t["wait"]
    if not w or set(w) != keys or t["read_unstopped"]:
        bad.append(("wait", t["tid"], w))
        continue
    if w["last_ran_seconds_ago"] is None or not 0 <= w["last_ran_seconds_ago"] < 600:
        bad.append(("last ran", t["tid"], w["last_ran_seconds_ago"]))
for tid in futex_tids:
    w = by[tid]["wait"] or {}
    if w.get("syscall") != "futex" or w.get("futex") != "0x" + sys.argv[3] or w.get("futex_waiters") != futex_tids:
        bad.append(("futex", tid, w))
s = by[int(sys.argv[4])]["wait"] or {}
want = "tcp 127.0.0.1:%s -> 127.0.0.1:%s ESTABLISHED" % (sys.argv[5], sys.argv[6])
if s.get("syscall") != "read" or s.get("fd_kind") != "socket" or s.get("object") != want or s.get("nr") != 0:
    bad.append(("socket", s))
if bad:
    print("  ", bad, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

"$DIAGTOP" stack "$W" --no-wait >"$TMP/nowait" 2>&1
"$DIAGTOP" stack "$W" --no-wait --json >"$TMP/nowait.json" 2>&1
check "--no-wait leaves waits out" bash -c "grep -q '^Thread' '$TMP/nowait' && ! grep -q 'waiting in' '$TMP/nowait' &&
    python3 -c 'import json,sys; sys.exit(any(t[\"wait\"] for t in json.load(open(\"$TMP/nowait.json\"))[\"threads\"]))'"
"$DIAGTOP" stack "$W" --no-stop >"$TMP/nostop" 2>&1
check "--no-stop says what they wait on too" grep -q "waiting in read(fd [0-9]*, 64 bytes) on tcp 127.0.0.1:$LPORT" "$TMP/nostop"

# D state: the vfork parent cannot stop before its child exits.
check "the vforking process is in D" test "$(awk '{print $3}' "/proc/$DPID/stat")" = D
"$DIAGTOP" stack "$DPID" >"$TMP/d" 2>&1; RC=$?
check "a process whose thread is in D: its stack all the same (exit 0)" test "$RC" -eq 0
check "it says it read the thread without stopping it" grep -q "in uninterruptible sleep: not stopped" "$TMP/d"
check "the D thread's frame #0 is vfork, and its call too" \
    bash -c "grep -q '#0 .*vfork' '$TMP/d' && grep -q 'waiting in vfork()' '$TMP/d'"
if [ "$(id -u)" -eq 0 ]; then
    check "as root, its kernel stack is shown" bash -c "grep -A3 '^  kernel stack:' '$TMP/d' | grep -q 'vfork'"
else
    skip "the kernel stack needs root"
fi
"$DIAGTOP" stack "$DPID" --json >"$TMP/d.json" 2>&1
check "JSON: read_unstopped, and the kernel stack" python3 -c "
import json, os, sys
t = json.load(open('$TMP/d.json'))['threads'][0]
ks = t['wait']['kernel_stack'] if os.getuid() == 0 else ['vfork']
sys.exit(0 if t['read_unstopped'] and t['state'] == 'D' and any('vfork' in k for k in ks) else 1)"

# A frozen cgroup (v1 freezer: its tasks sleep in D): the threads target, frozen whole, thawed on every exit.
FREEZER=/sys/fs/cgroup/freezer
CG=$FREEZER/diagtop-test-$$
if [ "$(id -u)" -eq 0 ] && [ -f "$FREEZER/cgroup.procs" ] && mkdir "$CG" 2>/dev/null; then
    thaw() { echo THAWED >"$CG/freezer.state"; cat "$CG/cgroup.procs" 2>/dev/null | while read -r p; do
        echo "$p" >"$FREEZER/cgroup.procs"; done; rmdir "$CG"; }
    trap 'thaw 2>/dev/null; cleanup' EXIT
    start_target frozen "$TARGETS/threads" 3; Z=$TARGET_PID
    wait_ready frozen || fail "threads did not start"
    echo "$Z" >"$CG/cgroup.procs" && echo FROZEN >"$CG/freezer.state"
    for i in $(seq 50); do [ "$(cat "$CG/freezer.state")" = FROZEN ] && break; sleep 0.1; done
    "$DIAGTOP" stack "$Z" >"$TMP/frozen" 2>&1; RC=$?
    check "a frozen cgroup's process: every thread in D, read unstopped (exit 0)" bash -c "[ $RC -eq 0 ] &&
        [ \$(grep -c 'in uninterruptible sleep: not stopped' '$TMP/frozen') -ge 2 ] && grep -q 'worker_park' '$TMP/frozen'"
    check "its kernel stack says where it sleeps" bash -c "grep -A1 '^  kernel stack:' '$TMP/frozen' | grep -q '[a-z_]'"
    check "the frozen process is not left traced" bash -c "for t in /proc/$Z/task/*; do
        [ \$(awk '/^TracerPid:/{print \$2}' \$t/status) = 0 ] || exit 1; done"
    thaw
    trap cleanup EXIT
else
    skip "a frozen cgroup needs root and the cgroup v1 freezer"
fi

check "nothing is left traced, the D thread still sleeps" bash -c "
    for t in /proc/$W/task/*; do [ \$(awk '/^TracerPid:/{print \$2}' \$t/status) = 0 ] || exit 1; done
    [ \$(awk '/^TracerPid:/{print \$2}' /proc/$DPID/status) = 0 ] && [ \$(awk '{print \$3}' /proc/$DPID/stat) = D ]"
check "the waiters still wait (state S)" bash -c "for t in /proc/$W/task/*; do [ \$(awk '{print \$3}' \$t/stat) = S ] || exit 1; done"
finish
