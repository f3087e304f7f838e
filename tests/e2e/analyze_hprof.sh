#!/usr/bin/env bash
# `diagtop analyze` on real heap dumps of a JVM whose retention is known by construction (tests/targets/
# Retention.java weighs what each structure holds with Instrumentation.getObjectSize): the exact path from its GC
# root to each leak and a retained size within 1% of the JVM's own figure, with compressed oops and without,
# from a .hprof.gz (diagtop dump --heap) and a plain .hprof (jcmd); a soft-only chain never blamed, a garbage
# cycle absent, a diff of two dumps 5 s apart with the growing class on top; and every bad file refused clearly.
. "$(dirname "$0")/../lib.sh"
JAR=$TARGETS/java/retention.jar
[ -f "$JAR" ] || { fail "no $JAR (make targets)"; finish; }
export DIAGTOP_DUMP_DIR=$TMP/dumps
mkdir -p "$DIAGTOP_DUMP_DIR"

# retention MODE JVM_FLAGS...: starts the target, dumps it, checks every answer, and leaves its PID in R.
retention() {
    local mode=$1
    shift
    start_target "ret-$mode" java -Xmx256m "$@" -javaagent:"$JAR" --add-opens java.base/java.util=ALL-UNNAMED \
        --add-opens java.base/java.lang=ALL-UNNAMED -cp "$JAR" Retention 20000
    R=$TARGET_PID
    wait_ready "ret-$mode" || { fail "$mode: Retention did not start: $(cat "$TMP/ret-$mode.err")"; return 1; }
    head -1 "$TMP/ret-$mode.out" >"$TMP/$mode.truth.json"
    "$DIAGTOP" dump "$R" --heap -o "$TMP/$mode.hprof.gz" >/dev/null 2>"$TMP/$mode.dump.err" ||
        { fail "$mode: dump --heap: $(cat "$TMP/$mode.dump.err")"; return 1; }
    local A="$DIAGTOP analyze --json $TMP/$mode.hprof.gz"
    $A --paths BarLeakedThing >"$TMP/$mode.bar.json" 2>"$TMP/$mode.err"
    $A --paths ListenerPayload >"$TMP/$mode.listen.json" 2>>"$TMP/$mode.err"
    $A --paths LocalThing >"$TMP/$mode.local.json" 2>>"$TMP/$mode.err"
    $A --paths SoftThing --suspects >"$TMP/$mode.soft.json" 2>>"$TMP/$mode.err"
    $A --class BarLeakedThing --count 5 >"$TMP/$mode.class.json" 2>>"$TMP/$mode.err"
    [ -s "$TMP/$mode.err" ] && fail "$mode: analyze said: $(head -3 "$TMP/$mode.err")"
    # the python side: the truths, and a walk of the merged tree
    export TRUTH=$TMP/$mode.truth.json
    cat >"$TMP/tree.py" <<'PY'
import json, os
truth = json.load(open(os.environ["TRUTH"]))
def nodes(doc):
    todo = list(doc["paths"]["tree"])
    while todo:
        n = todo.pop()
        yield n
        todo += n["children"]
def near(x, want):
    return x is not None and abs(x - want) <= want / 100
PY
    export PYTHONPATH=$TMP PYTHONDONTWRITEBYTECODE=1
    check "$mode: the static map's path, every instance on it, and its retained size within 1% of the JVM's" \
        json_eval "$TMP/$mode.bar.json" "
        (lambda t, P: P[0]['path'] ==
            'Retention.KEEP (static) \u2192 java.util.HashMap.table \u2192 java.util.HashMap\$Node[] \u2192 '
            'java.util.HashMap\$Node.value \u2192 BarLeakedThing' and P[0]['instances'] == t['keep_entries'] and
            len(P) == 1 and last['paths']['reached'] == t['keep_entries'] and
            [__import__('tree').near(n['object_retained'], t['keep_retained'])
             for n in __import__('tree').nodes(last) if n['step'] == 'KEEP (static)'] == [True])(
            __import__('tree').truth, last['paths']['paths'])"
    check "$mode: the listener list's closures: path through the lambdas, the list's retained size within 1%" \
        json_eval "$TMP/$mode.listen.json" "
        (lambda t, P: len(P) == 1 and P[0]['instances'] == 100 and
            P[0]['path'].startswith('Retention.LISTENERS (static) \u2192 java.util.ArrayList.elementData \u2192 '
                                    'java.lang.Object[] \u2192 Retention\$\$Lambda') and
            P[0]['path'].endswith(' \u2192 ListenerPayload') and
            [__import__('tree').near(n['object_retained'], t['listeners_retained'])
             for n in __import__('tree').nodes(last) if n['step'] == 'LISTENERS (static)'] == [True])(
            __import__('tree').truth, last['paths']['paths'])"
    check "$mode: the ThreadLocal: held by the pooled thread's map entry, its retained size within 1%" \
        json_eval "$TMP/$mode.local.json" "
        (lambda t, P: len(P) == 1 and P[0]['path'] == 'thread pooled: java.lang.Thread.threadLocals \u2192 '
            'java.lang.ThreadLocal\$ThreadLocalMap.table \u2192 java.lang.ThreadLocal\$ThreadLocalMap\$Entry[] \u2192 '
            'java.lang.ThreadLocal\$ThreadLocalMap\$Entry.value \u2192 LocalThing' and
            [__import__('tree').near(n['object_retained'], t['local_retained'])
             for n in __import__('tree').nodes(last) if n['class'] == 'LocalThing'] == [True])(
            __import__('tree').truth, last['paths']['paths'])"
    check "$mode: the soft-only chain has no strong path and retains nothing; the garbage cycle is not in the dump" \
        json_eval "$TMP/$mode.soft.json" "
        last['paths']['reached'] == 0 and last['paths']['weak_only'] == 300 and
        [(h['count'], h['retained']) for h in last['histogram'] if h['class'] == 'SoftThing'] == [(300, 0)] and
        not [h for h in last['histogram'] if h['class'] == 'CycleThing'] and
        last['summary']['weak_only'] >= 600"
    check "$mode: the suspect is class Retention, accumulated in the map's table over its nodes" \
        json_eval "$TMP/$mode.soft.json" "
        (lambda s: s['class'] == 'Retention' and s['path'] == 'class Retention' and
            s['accumulation']['class'] == 'java.util.HashMap\$Node[]' and
            s['accumulation']['children_class'] == 'java.util.HashMap\$Node' and
            s['accumulation']['children_class_count'] == 20000)(last['suspects']['objects'][0])"
    check "$mode: --class lists instances with the JVM's shallow size, counting them all" json_eval "$TMP/$mode.class.json" "
        (lambda t: last['instances']['total'] == t['keep_entries'] and len(last['instances']['objects']) == 5 and
            all(o['shallow'] == t['bar_shallow'] and o['retained'] > o['shallow'] for o in last['instances']['objects']))(
            __import__('tree').truth)"
    check "$mode: the JVM runs on after its dump" kill -0 "$R"
}

retention compressed
check "compressed: the layout inferred from the addresses" json_eval "$TMP/compressed.bar.json" "
    last['summary']['layout'] == 'compressed oops' and last['summary']['gzipped'] and
    last['summary']['layout_matched'] > 0.9 * last['summary']['layout_tried']"
# a plain .hprof written by jcmd reads the same
jcmd "$R" GC.heap_dump "$TMP/plain.hprof" >/dev/null 2>&1
"$DIAGTOP" analyze --json "$TMP/plain.hprof" --paths BarLeakedThing >"$TMP/plain.json" 2>"$TMP/plain.err"
check "a plain .hprof (jcmd GC.heap_dump): the same path and retained size" json_eval "$TMP/plain.json" "
    not last['summary']['gzipped'] and last['paths']['paths'][0]['path'].startswith('Retention.KEEP (static)') and
    [__import__('tree').near(n['object_retained'], __import__('tree').truth['keep_retained'])
     for n in __import__('tree').nodes(last) if n['step'] == 'KEEP (static)'] == [True]"
"$DIAGTOP" analyze "$TMP/plain.hprof" --paths BarLeakedThing >"$TMP/plain.txt" 2>&1
check "text: the path in one line, the tree with the map's retained size" grep -q \
    '^20000 held, retaining .*: Retention.KEEP (static) → java.util.HashMap.table → java.util.HashMap\$Node\[\] → java.util.HashMap\$Node.value → BarLeakedThing$' \
    "$TMP/plain.txt"

# --diff: two dumps 5 s apart while GrowThing grows
"$DIAGTOP" dump "$R" --heap -o "$TMP/later.hprof.gz" >/dev/null 2>&1 || fail "the first dump for --diff"
sleep 5
"$DIAGTOP" dump "$R" --heap -o "$TMP/latest.hprof.gz" >/dev/null 2>&1 || fail "the second dump for --diff"
"$DIAGTOP" analyze --json --histogram "$TMP/later.hprof.gz" >"$TMP/h1.json"
"$DIAGTOP" analyze --json --histogram "$TMP/latest.hprof.gz" >"$TMP/h2.json"
"$DIAGTOP" analyze --json "$TMP/latest.hprof.gz" --diff "$TMP/later.hprof.gz" >"$TMP/diff.json" 2>"$TMP/diff.err"
check "--diff: the growing class on top, with the exact change in count between the dumps" json_eval "$TMP/diff.json" "
    (lambda c1, c2: last['diff']['classes'][0]['class'] == 'GrowThing' and c2 - c1 >= 20000 and
        last['diff']['classes'][0]['delta_count'] == c2 - c1)(
        *[[h['count'] for h in json.load(open(f))['histogram'] if h['class'] == 'GrowThing'][0]
          for f in ('$TMP/h1.json', '$TMP/h2.json')])"
check "--histogram: no graph, so no retained sizes" json_eval "$TMP/h1.json" "
    all(h['retained'] is None for h in last['histogram']) and last['summary']['reachable'] == 0"
stop_pid "$R"

retention uncompressed -XX:-UseCompressedOops
check "uncompressed: the layout inferred from the addresses" json_eval "$TMP/uncompressed.bar.json" "
    last['summary']['layout'] == 'uncompressed oops, compressed class pointers'"
stop_pid "$R"

# bad files: one clear error each, naming the offset where the bytes are at fault
bad() { # bad DESCRIPTION PATTERN FILE [OPTIONS]
    local what=$1 pattern=$2
    shift 2
    "$DIAGTOP" analyze "$@" >"$TMP/bad.out" 2>"$TMP/bad.err"
    local rc=$?
    check "$what: exit 1, '$pattern'" bash -c "[ $rc = 1 ] && [ ! -s '$TMP/bad.out' ] && grep -q -- '$pattern' '$TMP/bad.err'"
}
head -c 4000000 "$TMP/plain.hprof" >"$TMP/cut.hprof"
bad "a truncated dump" "truncated record at offset [0-9]* (in an\? .* at offset [0-9]*)" "$TMP/cut.hprof"
head -c 300000 "$TMP/compressed.hprof.gz" >"$TMP/cut.hprof.gz"
bad "a truncated .gz" "corrupt or truncated gzip data" "$TMP/cut.hprof.gz"
printf 'hello, not a heap dump\n' >"$TMP/text.hprof"
bad "not a dump" 'not an HPROF heap dump' "$TMP/text.hprof"
bad "an ELF file that is not a core: read as one, and refused" 'true: an ELF shared object or PIE executable, not a core' /bin/true
bad "a missing file" 'No such file' "$TMP/nothing.hprof"
bad "a memory budget too small" 'over the memory budget of' "$TMP/plain.hprof" --max-memory 1M
bad "an unknown class" 'no class .NoSuchThing. in this dump' "$TMP/plain.hprof" --paths NoSuchThing
bad "an unknown object" 'no object 0x1234' "$TMP/plain.hprof" --object 0x1234
python3 - "$TMP/plain.hprof" "$TMP/hostile.hprof" <<'PY'
import sys
# a record length pointing past the end of the file, right after the header
b = bytearray(open(sys.argv[1], "rb").read())
h = b.index(0) + 1 + 12
b[h + 5:h + 9] = (0xfffffff0).to_bytes(4, "big")
open(sys.argv[2], "wb").write(b)
PY
bad "a record longer than the file" "truncated record at offset" "$TMP/hostile.hprof"
bad "an unknown layout" "unknown layout .bogus. (compressed" "$TMP/plain.hprof" --layout bogus
# a .gz inflates into --tmpdir: a full one is named, with what was written, and nothing is left there
mkdir -p "$TMP/small"
if mount -t tmpfs -o size=1m tmpfs "$TMP/small" 2>/dev/null; then
    bad "a full disk for the inflated copy" "inflating it needs more space than $TMP/small has ([0-9]* bytes written); set TMPDIR" \
        "$TMP/compressed.hprof.gz" --tmpdir "$TMP/small"
    check "... and nothing is left in it" bash -c "[ -z \"\$(ls -A '$TMP/small')\" ] && [ \$(df --output=used -k '$TMP/small' | tail -1) -lt 64 ]"
    umount "$TMP/small"
else
    skip "no tmpfs to fill (not root, or no mount here)"
fi
finish
