#!/usr/bin/env bash
# diagtop's own JFR reader (src/actions/runtimes/jvm/jfr_read.c) against the JDK's: a recording made here of a
# JVM that burns CPU in Burner.spin (tests/targets/Burner.java) has as many jdk.ExecutionSample events, and the
# same innermost methods with the same counts, as `jfr print` shows; two chunks in one file (cat) count twice;
# every truncation of the real file is refused with a reason (tests/unit/test_jfr, ASan). Then `diagtop profile`
# of the running JVM: the top table names Burner.spin, and the .jfr is saved in the dump directory.
. "$(dirname "$0")/../lib.sh"
command -v jfr >/dev/null || { skip "no jfr tool (JDK)"; exit 0; }
java_classes Burner || fail "javac Burner.java"
READER=$ROOT/build/asan/unit/test_jfr
REC=$TMP/rec.jfr
start_target burner java -XX:StartFlightRecording=duration=3s,settings=profile,filename="$REC" -cp "$CP" Burner
J=$TARGET_PID
wait_ready burner || fail "Burner did not start"
for i in $(seq 150); do # JFR writes the file when the 3 s are over
    [ -s "$REC" ] && jfr summary "$REC" >/dev/null 2>&1 && break
    sleep 0.1
done
jfr print --events jdk.ExecutionSample "$REC" >"$TMP/print.txt" || fail "jfr print"
# jfr print's innermost frame: the first line after "stackTrace = [", "Class.method(args)  line: N"
python3 - "$TMP/print.txt" >"$TMP/want.txt" <<'PY'
import re, sys, collections
n, top, after = 0, collections.Counter(), False
for line in open(sys.argv[1]):
    if line.startswith("jdk.ExecutionSample"): n += 1
    if after:
        top[re.sub(r"\(.*", "", line.strip())] += 1
        after = False
    after = line.strip() == "stackTrace = ["
print("samples", n)
for name, c in top.most_common(3): print("top", c, name)
PY
"$READER" "$REC" >"$TMP/got.txt" 2>"$TMP/got.err"; RC=$?
check "reader: a real recording read, its truncations refused (no ASan report)" bash -c "
    [ $RC = 0 ] && ! grep -q ERROR '$TMP/got.err' && grep -q '^samples [1-9]' '$TMP/got.txt'"
check "reader: as many ExecutionSample events as jfr print, same top methods and counts" bash -c "
    [ \"\$(head -1 '$TMP/got.txt')\" = \"\$(head -1 '$TMP/want.txt')\" ] &&
    grep -q '^top [0-9]* Burner.spin$' '$TMP/want.txt' &&
    python3 -c \"
import sys
want = [l.split() for l in open('$TMP/want.txt') if l.startswith('top')]
got = {l.split()[2]: int(l.split()[1]) for l in open('$TMP/got.txt') if l.startswith('top')}
# the first is the burner's; ties among the 1-sample rows may be listed in another order
sys.exit(not (want[0][2] == 'Burner.spin' and got.get('Burner.spin') == int(want[0][1]) and
              all(got.get(w[2], int(w[1])) == int(w[1]) for w in want)))\""
cat "$REC" "$REC" >"$TMP/two.jfr"
"$READER" "$TMP/two.jfr" >"$TMP/two.txt" 2>&1
N=$(sed -n 's/^samples //p' "$TMP/want.txt")
check "reader: two chunks in one file, the samples of both (jfr summary says 2 chunks)" bash -c "
    grep -qx 'samples $((N * 2))' '$TMP/two.txt' && jfr summary '$TMP/two.jfr' | grep -q 'Chunks: 2'"
head -c $(( $(stat -c %s "$REC") / 2 )) "$REC" >"$TMP/cut.jfr"
"$READER" "$TMP/cut.jfr" >"$TMP/cut.txt" 2>&1
check "reader: a recording cut in half is refused, saying so" grep -q "^error .*cut short" "$TMP/cut.txt"

"$DIAGTOP" profile "$J" -d 2 --json >"$TMP/prof.json" 2>"$TMP/prof.err"
check "profile --json: the JVM's top function is Burner.spin, in samples, the .jfr in the dump directory" \
    json_eval "$TMP/prof.json" "
    last['provider'] == 'hotspot' and last['format'] == 'jfr' and last['unit'] == 'samples' and
    last['rows'][0]['function'] == 'Burner.spin' and last['rows'][0]['flat'] > 0.5 * last['total'] and
    last['saved_path'].startswith('$DIAGTOP_DUMP_DIR/cpu.java.$J.') and last['saved_path'].endswith('.jfr') and
    __import__('os').path.getsize(last['saved_path']) > 0 and last['note'] is None"
"$DIAGTOP" profile "$J" -d 1 >"$TMP/prof.txt" 2>&1
check "profile (text): the top table's first row is Burner.spin, the saved file named" bash -c "
    grep -A1 '^ *flat *flat%' '$TMP/prof.txt' | tail -1 | grep -q ' Burner.spin$' &&
    grep -q 'saved as $DIAGTOP_DUMP_DIR/cpu.java.$J.*\.jfr' '$TMP/prof.txt'"
stop_pid "$J"
finish
