#!/usr/bin/env bash
# Java threads: who holds the lock (issue 24). tests/targets/Locks.java deadlocks two threads on monitors and two
# on ReentrantLocks, blocks a pool of ten on a monitor "holder" keeps and three on a ReentrantLock "juc-holder"
# keeps. diagtop's view is compared with `jcmd PID Thread.print -l`, read here on its own: every waiter's lock
# and holder, each thread's held locks, the JVM's deadlock cycles; the JVM runs on.
. "$(dirname "$0")/../lib.sh"
java_classes Locks || fail "javac Locks.java"
start_target locks java -Xmx64m -cp "$CP" Locks; J=$TARGET_PID
wait_ready locks || { fail "Locks did not start"; finish; }

"$DIAGTOP" stack "$J" --json >"$TMP/stack.json" 2>"$TMP/stack.err"
jcmd "$J" Thread.print -l >"$TMP/jcmd.txt" 2>&1
check "jcmd saw the deadlocks (the reference is real)" grep -q "Found one Java-level deadlock" "$TMP/jcmd.txt"
check "every waiter's lock and holder, held locks and deadlocks agree with jcmd Thread.print -l" \
    python3 - "$TMP/stack.json" "$TMP/jcmd.txt" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
threads_part, _, tail = text.partition("JNI global refs")
# jcmd's view: per thread, the first wait line and the locks held (monitors and ownable synchronizers)
ref, cur = {}, None
for line in threads_part.split("\n"):
    m = re.match(r'^"(.*)" #\d+', line)
    if m:
        cur = ref.setdefault(m.group(1), {"wait": None, "holds": set()})
        continue
    if cur is None:
        continue
    m = re.match(r'^\t- (waiting to lock|parking to wait for|waiting on) +<(0x[0-9a-f]+)>', line)
    if m and not cur["wait"]:
        cur["wait"] = (m.group(1), m.group(2))
    m = re.match(r'^\t- (?:locked )?<(0x[0-9a-f]+)>', line)
    if m:
        cur["holds"].add(m.group(1))
for t in ref.values(): # in Object.wait() the monitor is released
    if t["wait"] and t["wait"][0] == "waiting on":
        t["holds"].discard(t["wait"][1])
holder = {a: n for n, t in ref.items() for a in t["holds"]}
cycles = [sorted(re.findall(r'^"(.*)":$', c.split("Java stack information")[0], re.M))
          for c in tail.split("Found one Java-level deadlock:")[1:]]
ours = {t["name"]: t for t in d["threads"]}
bad = []
if d["provider"] != "hotspot" or not d["lock_holders"]:
    bad.append(("provider", d["provider"], d.get("lock_holders")))
waiters = 0
for name, t in ref.items():
    o = ours.get(name)
    if o is None:
        bad.append(("missing", name)); continue
    w = o["waiting_for"]
    if (w and (w["how"], w["address"])) != (t["wait"] or None):
        bad.append(("wait", name, w, t["wait"])); continue
    if {h["address"] for h in o["holds"]} != t["holds"]:
        bad.append(("holds", name, o["holds"], t["holds"]))
    if t["wait"] and t["wait"][0] != "waiting on":
        waiters += 1
        want = holder.get(t["wait"][1])
        got = w["held_by"]["name"] if w["held_by"] else None
        if got != want:
            bad.append(("holder", name, got, want))
if waiters < 17: # 10 pool, 3 juc, 4 deadlocked
    bad.append(("waiters", waiters))
ourcycles = sorted(sorted(e["thread"] for e in c) for c in d["deadlocks"])
if ourcycles != sorted(cycles) or ourcycles != [["dl-a", "dl-b"], ["jdl-a", "jdl-b"]]:
    bad.append(("cycles", ourcycles, cycles))
for c in d["deadlocks"]:
    for e in c:
        if holder.get(e["address"]) != e["held_by"]:
            bad.append(("cycle edge", e))
if bad:
    print("  ", bad[:6], file=sys.stderr)
sys.exit(1 if bad else 0)
PY

"$DIAGTOP" stack "$J" >"$TMP/stack.txt" 2>&1
check "text: the deadlocks come first, each edge with its holder" bash -c "
    d=\$(grep -n -m1 '^Deadlock found by the JVM' '$TMP/stack.txt' | cut -d: -f1)
    t=\$(grep -n -m1 '^\(daemon \)\?thread \|^[0-9]* threads:' '$TMP/stack.txt' | cut -d: -f1)
    [ -n \"\$d\" ] && [ \"\$d\" -lt \"\$t\" ] &&
    grep -q '^  \"dl-a\" waiting to lock monitor <0x[0-9a-f]*> (a java.lang.Object), held by \"dl-b\"' '$TMP/stack.txt' &&
    grep -q '^  \"jdl-a\" waiting for ownable synchronizer <0x[0-9a-f]*> (a java.util.concurrent.locks.ReentrantLock\$NonfairSync), held by \"jdl-b\"' '$TMP/stack.txt'"
check "text: the pool of ten is one block, waiting on one lock held by holder" bash -c "
    grep -A1 '^10 threads: \"pool-' '$TMP/stack.txt' | grep -q '^  waiting to lock <0x[0-9a-f]*> (a java.lang.Object), held by \"holder\" #'"
check "text: the parked three name juc-holder; a thread's header has its CPU" bash -c "
    grep -A1 '^3 threads: \"juc-0\"' '$TMP/stack.txt' | grep -q 'parking to wait for <0x[0-9a-f]*> (a java.util.concurrent.locks.ReentrantLock\$NonfairSync), held by \"juc-holder\"' &&
    grep -q '^thread \"holder\" (OS thread [0-9]*): TIMED_WAITING (sleeping) (1), cpu [0-9.]* ms in [0-9.]* s' '$TMP/stack.txt'"
check "the JVM runs on" kill -0 "$J"
finish
