#!/usr/bin/env bash
# Snapshot dumps (the default mode): the core is taken at one instant while the process keeps writing. snapcheck's
# threads count in registers and memory, its sweeper writes a generation into every page in turn: in gdb, each
# thread's counter is what its saved registers imply and the sweep is one generation up to one page (all at the
# same instant), for snapshots and stop-and-copy alike. The regions a fork does not copy faithfully hold their
# contents and are reported; the copy is reaped (no zombie); --stop, --snapshot; a stopped process is copied as it
# is and stays stopped; the threads count on undisturbed (each checks its own registers).
. "$(dirname "$0")/../lib.sh"

# untraced PID: within 3 s no thread of PID is traced or stopped.
untraced() {
    local i t bad
    for i in $(seq 30); do
        bad=""
        for t in /proc/"$1"/task/*; do
            [ "$(awk '/^TracerPid:/ {print $2}' "$t/status")" = 0 ] && [[ "$(awk '{print $3}' "$t/stat")" != [tT] ]] ||
                bad="$bad ${t##*/}"
        done
        [ -z "$bad" ] && return 0
        sleep 0.1
    done
    echo "  threads traced or stopped:$bad" >&2
    return 1
}
# children PID: the PIDs of PID's children, with their state (a copy left behind would be one).
children() { local c; for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do echo "$c:$(awk '{print $3}' /proc/$c/stat)"; done; }

# The gdb check: counters by their registers, the sweep at one instant.
cat >"$TMP/check.py" <<'PY'
import gdb
inf = gdb.selected_inferior()
def addr(name):
    return int(gdb.parse_and_eval("(long)&" + name)) & (2**64 - 1)
def u64(a):
    return int.from_bytes(inf.read_memory(a, 8).tobytes(), "little")
def reg(name):
    return int(gdb.parse_and_eval("(long)$" + name)) & (2**64 - 1)
count, count_inc, count_end = addr("snap_count"), addr("snap_count_inc"), addr("snap_count_end")
sweep, top, page, store, inc, done, nxt, end = [addr("snap_sweep" + s) for s in
    ("", "_top", "_page", "_store", "_inc", "_done", "_next", "_end")]
for th in inf.threads():
    th.switch()
    pc, r12, r13, rbx, r14 = reg("pc"), reg("r12"), reg("r13"), reg("rbx"), reg("r14")
    if count <= pc < count_end:
        m, want = u64(rbx), r12 if pc == count_inc else r12 - 1
        print("counter %d %s: memory %d, registers imply %d" % (th.ptid[1], "ok" if m == want else "BAD", m, want))
    elif sweep <= pc < end:
        n = r14
        gens = [u64(rbx + 4096 * i) for i in range(n)]
        g = r12
        if pc < page: k = 0; g = r12      # r13 stale: every page holds r12 - 1
        elif pc <= store: k = r13
        elif pc == inc: k = r13 + 1
        elif pc < done: k = r13
        elif pc == done: k = n
        else: k = 0
        want = [g] * k + [g - 1] * (n - k)
        bad = [i for i in range(n) if gens[i] != want[i]]
        print("sweep %s: generation %d on pages below %d of %d%s" % ("ok" if not bad else "BAD", g, k, n,
              "" if not bad else ", first differing page %d holds %d" % (bad[0], gens[bad[0]])))
PY

start_target snapcheck "$TARGETS/snapcheck" 32; P=$TARGET_PID
wait_ready snapcheck || fail "target did not start"
field() { sed -n "s/.* $1=\(0x[0-9a-f]*\).*/\1/p" "$TMP/snapcheck.out"; }
gdb_check() { # CORE NAME: the counters and the sweep, and the regions' strings
    gdb -nx -batch "$TARGETS/snapcheck" "$1" -ex "source $TMP/check.py" -ex "x/s $(field dontfork)" \
        -ex "x/s $(field wipeonfork)" -ex "x/s $(field shared)" -ex "x/s $(field bigshared)" >"$TMP/$2.gdb" 2>&1
    check "$2: every counter matches its thread's registers" \
        test "$(grep -c '^counter [0-9]* ok' "$TMP/$2.gdb")" -eq 4 -a "$(grep -c BAD "$TMP/$2.gdb")" -eq 0
    check "$2: the sweep is at one instant" grep -q '^sweep ok' "$TMP/$2.gdb"
    check "$2: the MADV_DONTFORK, MADV_WIPEONFORK and MAP_SHARED regions hold their contents" bash -c "
        grep -q 'DIAGTOP-DONTFORK-REGION' '$TMP/$2.gdb' && grep -q 'DIAGTOP-WIPEONFORK-REGION' '$TMP/$2.gdb' &&
        grep -q 'DIAGTOP-SHARED-SMALL' '$TMP/$2.gdb' && grep -q 'DIAGTOP-SHARED-BIG' '$TMP/$2.gdb'"
    grep -E 'BAD|^sweep' "$TMP/$2.gdb" | head -5 >&2
}
sleep 0.3 # every thread in its loop
for i in 1 2 3; do
    "$DIAGTOP" dump --json -o "$TMP/snap$i.core" "$P" >"$TMP/snap$i.json" 2>"$TMP/snap$i.err"
    check "snapshot $i: the default mode, two pauses, none longer than the whole" json_eval "$TMP/snap$i.json" "
        last['mode'] == 'snapshot' and last['mode_reason'] is None and len(last['pauses_ms']) == 2 and
        last['pause_longest_ms'] == max(last['pauses_ms']) and last['threads'] == 5 and last['zombie'] is None and
        abs(last['stopped_ms'] - sum(last['pauses_ms'])) < 0.2 and last['stopped_ms'] < last['duration_ms']"
    gdb_check "$TMP/snap$i.core" "snapshot $i"
    check "snapshot $i: the copy was reaped" test -z "$(children "$P")"
    check "snapshot $i: the process runs untraced" untraced "$P"
    rm -f "$TMP/snap$i.core"
done
check "the regions a fork does not copy faithfully are reported: small ones copied during the pause" json_eval \
    "$TMP/snap1.json" "
    sorted((r['kind'], r['consistent']) for r in last['unfaithful_regions']) ==
        [('dontfork', True), ('shared', False), ('shared', True), ('wipeonfork', True)] and
    last['unfaithful_regions_total'] == 4 and
    [r for r in last['unfaithful_regions'] if not r['consistent']][0]['start'] == '$(field bigshared)'"

"$DIAGTOP" dump -o "$TMP/snap.core" "$P" >"$TMP/snap.txt" 2>&1
check "text summary: the mode, both pauses and the inconsistent region" bash -c "
    grep -qE '^  snapshot: the process paused [0-9.]+ ms to clone its copy, its main thread [0-9.]+ ms to reap it' '$TMP/snap.txt' &&
    grep -q '^  not snapshot-consistent, read while the process ran: $(field bigshared)-' '$TMP/snap.txt' &&
    grep -q '^  copied during the pause: .*(dontfork' '$TMP/snap.txt'"
rm -f "$TMP/snap.core"

"$DIAGTOP" dump --stop --json -o "$TMP/stop.core" "$P" >"$TMP/stop.json" 2>&1
check "--stop: stop-and-copy, one pause, nothing to report" json_eval "$TMP/stop.json" "
    last['mode'] == 'stop' and last['mode_reason'] == 'asked for' and len(last['pauses_ms']) == 1 and
    last['unfaithful_regions'] == []"
gdb_check "$TMP/stop.core" "stop-and-copy"
rm -f "$TMP/stop.core"
"$DIAGTOP" dump --stop --snapshot -o "$TMP/both.core" "$P" >/dev/null 2>"$TMP/both.err"
check "--stop and --snapshot together: usage error" bash -c "[ $? -eq 2 ] && grep -q 'exclude each other' '$TMP/both.err'"

# A stopped process: copied as it is, left stopped; --snapshot refuses.
kill -STOP "$P"
sleep 0.2
"$DIAGTOP" dump --json -o "$TMP/stopped.core" "$P" >"$TMP/stopped.json" 2>&1
check "a stopped process: stop-and-copy with the reason" json_eval "$TMP/stopped.json" "
    last['mode'] == 'stop' and 'stopped (SIGSTOP)' in last['mode_reason']"
check "a stopped process stays stopped, untraced" bash -c "sleep 0.3; [ \$(awk '{print \$3}' /proc/$P/stat) = T ] &&
    [ \$(awk '/^TracerPid:/ {print \$2}' /proc/$P/status) = 0 ]"
"$DIAGTOP" dump --snapshot -o "$TMP/refused.core" "$P" >/dev/null 2>"$TMP/refused.err"
check "--snapshot on a stopped process: fails with the reason, no file" bash -c "[ $? -eq 1 ] &&
    grep -q 'no snapshot: the process is stopped' '$TMP/refused.err' && [ ! -e '$TMP/refused.core' ]"
kill -CONT "$P"
gdb_check "$TMP/stopped.core" "stopped process"
sleep 0.5
# A Go program: its main thread runs goroutines on heap stacks, so the recovery frames go to never-touched pages
# at the bottom of [stack], and later snapshots find them as diagtop left them.
start_target go "$TARGETS/gostacks"; G=$TARGET_PID
wait_ready go || fail "Go target did not start"
for i in 1 2 3; do
    "$DIAGTOP" dump --snapshot --json -o "$TMP/go$i.core" "$G" >"$TMP/go$i.json" 2>&1
    check "Go, snapshot $i: written, its copy reaped" json_eval "$TMP/go$i.json" "last['mode'] == 'snapshot' and last['zombie'] is None"
    check "Go, snapshot $i: gdb shows every thread" test "$(gdb -nx -batch "$TARGETS/gostacks" "$TMP/go$i.core" \
        -ex 'info threads' 2>&1 | grep -cE '^[* ] +[0-9]+ +LWP ')" -eq "$(ls /proc/$G/task | wc -l)"
    rm -f "$TMP/go$i.core"
done
check "Go: the process runs untraced, without a child" bash -c "$(declare -f untraced children); untraced $G && [ -z \"\$(children $G)\" ]"

check "the target counted on undisturbed through every dump" bash -c "kill -0 $P && ! grep -q BAD '$TMP/snapcheck.out'"
check "no core or partial file left besides the ones written" bash -c "! ls -a '$TMP' | grep -q partial"
finish
