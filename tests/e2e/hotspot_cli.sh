#!/usr/bin/env bash
# A JVM (tests/targets/Leaky.java) answering the runtime commands through HotSpot attach: Java threads in their
# methods, heap figures, a GC, class histograms that show the leak growing, a heap dump and a JFR recording
# saved 0600 where asked; the trigger file and the JVM-side files are gone afterwards, a cancelled recording is
# stopped, and the JVM runs on, never having printed a thread dump of its own.
. "$(dirname "$0")/../lib.sh"
java_classes Leaky || fail "javac Leaky.java"
export DIAGTOP_DUMP_DIR=$TMP/dumps
mkdir -p "$TMP/cwd" "$DIAGTOP_DUMP_DIR"
cd "$TMP/cwd" || exit 1
start_target leaky java -Xmx256m -cp "$CP" Leaky; J=$TARGET_PID
cd "$ROOT" || exit 1
wait_ready leaky || fail "Leaky did not start"
# no_jvm_dirs TMPDIR: no diagtop-jvm-* directory stays there (one of a test running beside this one goes in ms).
no_jvm_dirs() {
    local i
    for i in 1 2 3 4; do
        [ -z "$(find "$1/" -maxdepth 1 -name 'diagtop-jvm-*' ${2:+-user "$2"})" ] && return 0
        sleep 0.5
    done
    return 1
}
export -f no_jvm_dirs

"$DIAGTOP" stack --json "$J" >"$TMP/stack.json" 2>"$TMP/stack.err"
check "stack: answered by hotspot, the threads in their named methods and states" json_eval "$TMP/stack.json" "
    last['provider'] == 'hotspot' and
    (lambda t: any(f['function'] == 'Leaky.sleeperLoop' and f['file'] == 'Leaky.java' and f['line'] > 0
                   for f in t['leaky-sleeper']['frames']) and
               t['leaky-sleeper']['state'] == 'TIMED_WAITING (sleeping)' and not t['leaky-sleeper']['daemon'] and
               any(f['function'] == 'Leaky.waiterLoop' for f in t['leaky-waiter']['frames']) and
               t['leaky-waiter']['state'] == 'WAITING (on object monitor)' and t['leaky-waiter']['daemon'] and
               t['leaky-blocked']['state'] == 'BLOCKED (on object monitor)' and
               t['leaky-blocked']['frames'][0]['function'] == 'Leaky.blockedLoop' and
               t['main']['id'] == 1 and t['GC Thread#0']['frames'] == [])(
        {t['name']: t for t in last['threads']})"
TIDS=$(ls /proc/"$J"/task | tr '\n' ,)
check "stack: every Java thread's os_tid is a thread of the JVM" json_eval "$TMP/stack.json" "
    all(str(t['os_tid']) in '$TIDS'.split(',') for t in last['threads'])"
check "the attach trigger is gone (cwd and /tmp), the socket is the JVM's" bash -c "
    ! ls '$TMP/cwd/.attach_pid$J' /tmp/.attach_pid$J 2>/dev/null && test -S /proc/$J/root/tmp/.java_pid$J"

"$DIAGTOP" memstats --json "$J" >"$TMP/mem.json"
check "memstats: the runtime's heap figures in bytes, and its version" json_eval "$TMP/mem.json" "
    last['runtime']['provider'] == 'hotspot' and last['runtime']['sections']['heap']['heap_used'] > 0 and
    last['runtime']['units']['heap_used'] == 'bytes' and
    last['runtime']['sections']['heap']['heap_committed'] >= last['runtime']['sections']['heap']['heap_used'] and
    last['runtime']['sections']['heap']['collector'] == 'G1' and
    last['runtime']['sections']['heap']['metaspace_used'] > 0 and
    last['runtime']['sections']['runtime']['jdk'].startswith('17')"
check "memstats: every JSON key is snake_case (heap space figures too: garbage_first_heap_used)" \
    json_eval "$TMP/mem.json" "not bad_keys(last) and last['runtime']['sections']['heap']['garbage_first_heap_used'] > 0"

"$DIAGTOP" gc --json "$J" >"$TMP/gc.json"
check "gc: heap in use before and after" json_eval "$TMP/gc.json" "
    last['provider'] == 'hotspot' and last['heap_before'] > 0 and last['heap_after'] > 0 and
    last['request_ms'] > 0 and last['message']"

"$DIAGTOP" heap --json "$J" >"$TMP/heap1.json"
sleep 2
"$DIAGTOP" heap --json --diff "$TMP/heap1.json" "$J" >"$TMP/heap2.json"
check "heap: a class histogram with LeakedThing, more of them two seconds later" json_eval "$TMP/heap2.json" "
    (lambda o, n: (lambda od, nd: o['kind'] == 'class histogram' and o['provider'] == 'hotspot' and
        nd['LeakedThing']['count'] > od['LeakedThing']['count'] > 0 and
        nd['LeakedThing']['delta_count'] == nd['LeakedThing']['count'] - od['LeakedThing']['count'] and
        nd['LeakedThing']['alloc_count'] is None and '[B' in nd and 'java.util.HashMap\$Node' in nd)(
        {r['name']: r for r in o['rows']}, {r['name']: r for r in n['rows']}))(json.load(open('$TMP/heap1.json')), last)"
"$DIAGTOP" heap --json --live "$J" >"$TMP/live.json"
check "heap --live: the live objects' histogram" json_eval "$TMP/live.json" "
    any(r['name'] == 'LeakedThing' and r['count'] > 0 for r in last['rows'])"

"$DIAGTOP" dump "$J" --heap --json >"$TMP/hd.json" 2>"$TMP/hd.err"
check "dump --heap: a .hprof.gz in the dump directory" json_eval "$TMP/hd.json" "
    last['provider'] == 'hotspot' and last['path'].startswith('$DIAGTOP_DUMP_DIR/heap.java.$J.') and
    last['path'].endswith('.hprof.gz') and last['bytes'] > 1000"
HD=$(python3 -c "import json; print(json.load(open('$TMP/hd.json'))['path'])" 2>/dev/null)
check "the heap dump is 0600 and, gunzipped, an HPROF file" bash -c "
    [ \"\$(stat -c %a '$HD')\" = 600 ] && [ \"\$(gzip -dc '$HD' | head -c 18)\" = 'JAVA PROFILE 1.0.2' ]"
"$DIAGTOP" dump "$J" --heap -o "$TMP/exact.hprof.gz" >/dev/null 2>&1
"$DIAGTOP" dump "$J" --heap -o "$TMP/exact.hprof.gz" >/dev/null 2>"$TMP/again.err"
check "dump --heap -o: that file, and never over an existing one" bash -c "
    [ \$(stat -c %a '$TMP/exact.hprof.gz') = 600 ] && grep -q 'exists' '$TMP/again.err'"

"$DIAGTOP" profile "$J" -d 1 --json >"$TMP/prof.json" 2>"$TMP/prof.err"
check "profile: a JFR recording of a second in the dump directory, its samples read (or none, said so)" json_eval "$TMP/prof.json" "
    last['provider'] == 'hotspot' and last['format'] == 'jfr' and last['unit'] == 'samples' and
    (last['rows'] != [] or last['note'].startswith('no execution samples')) and
    last['seconds'] >= 1 and last['saved_path'].startswith('$DIAGTOP_DUMP_DIR/cpu.java.$J.') and
    last['saved_path'].endswith('.jfr')"
JFR=$(python3 -c "import json; print(json.load(open('$TMP/prof.json'))['saved_path'])" 2>/dev/null)
check "the recording is 0600 and a JFR file" bash -c "
    [ \"\$(stat -c %a '$JFR')\" = 600 ] && [ \"\$(head -c 3 '$JFR')\" = FLR ]"

# A recording cancelled by SIGINT is stopped; nothing is left in the JVM's /tmp nor half-written here.
"$DIAGTOP" profile "$J" -d 30 >"$TMP/cancel.out" 2>"$TMP/cancel.err" &
P=$!
PIDS+=("$P")
sleep 2.5
kill -INT "$P"
for i in $(seq 100); do kill -0 "$P" 2>/dev/null || break; sleep 0.1; done
wait "$P"
check "profile cancelled by SIGINT: exit status 1 within seconds, says so" bash -c "
    ! kill -0 $P 2>/dev/null && grep -q cancelled '$TMP/cancel.err'"
check "no recording of diagtop's is left running in the JVM" bash -c "! jcmd $J JFR.check | grep -q diagtop"
check "nothing left behind: the JVM's /tmp, the dump directory" bash -c "
    no_jvm_dirs /proc/$J/root/tmp && ! ls -a '$DIAGTOP_DUMP_DIR' | grep -q partial"
check "the JVM runs on and never printed a thread dump of its own" bash -c "
    kill -0 $J && ! grep -q 'Full thread dump' '$TMP/leaky.out'"
finish
