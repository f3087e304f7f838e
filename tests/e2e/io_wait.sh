#!/usr/bin/env bash
# IO% (time blocked on block I/O, from stat's delay-accounting field) on real targets: with kernel.task_delayacct
# on, a reader past the page cache (O_DIRECT) and writer (fdatasync) shows IO% above 0 in -b --json and the table, an idle sleeper 0; with it
# off, IO% is null and "-", and F2 says why. The sysctl is put back as it was.
. "$(dirname "$0")/../lib.sh"

SYSCTL=/proc/sys/kernel/task_delayacct
if ! [ -w "$SYSCTL" ] || ! OLD=$(cat "$SYSCTL"); then
    skip "no writable $SYSCTL here (kernel before 5.14, or not root)"
    finish
fi
trap 'echo "$OLD" >"$SYSCTL"; cleanup' EXIT
# (the kernel gives a task its delay counters when it forks with accounting on: the targets start after)
echo 1 >"$SYSCTL"
mkdir -p "$TMP/dio"
start_target diskio "$TARGETS/diskio" "$TMP/dio" 4000000 8000000; D=$TARGET_PID
start_target sleeper "$TARGETS/sleeper"; S=$TARGET_PID
wait_ready diskio || fail "diskio did not start"
wait_exec "$S" "$TARGETS/sleeper" || fail "sleeper did not start"

"$DIAGTOP" -b --json -d 1 -n 5 -p "$D,$S" >"$TMP/on.json" || fail "diagtop -b failed"
check "delay accounting on: the writer's IO% is above 0, the sleeper's 0" python3 - "$TMP/on.json" "$D" "$S" <<'PY'
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])][1:]  # the first snapshot has no interval
io = {int(a): [p["scheduler"]["io_wait_percent"] for d in docs for p in d["processes"] if p["pid"] == int(a)]
      for a in sys.argv[2:]}
d, s = io[int(sys.argv[2])], io[int(sys.argv[3])]
print("  writer IO%%: %s, sleeper IO%%: %s" % (d, s), file=sys.stderr)
assert d and all(v is not None for v in d) and max(d) > 0, d
assert s and all(v == 0 for v in s), s
PY
"$DIAGTOP" -b -d 1 -n 3 -p "$D" --columns pid,io,command >"$TMP/on.txt"
check "the IO% column shows a number for the writer" grep -Eq "^ *$D +[0-9]+\.[0-9] " "$TMP/on.txt"

echo 0 >"$SYSCTL"
"$DIAGTOP" -b --json -d 1 -n 2 -p "$D" >"$TMP/off.json"
check "delay accounting off: IO% is null" python3 -c "
import json
d = json.loads(open('$TMP/off.json').read().splitlines()[-1])
assert d['processes'][0]['scheduler']['io_wait_percent'] is None"
"$DIAGTOP" -b -d 1 -n 2 -p "$D" --columns pid,io,command >"$TMP/off.txt"
check "and the column shows -" grep -Eq "^ *$D +- " "$TMP/off.txt"
tui_start 120 40 "$DIAGTOP -d 1 -p $D"
tui_wait "^ *$D " || fail "no row"
tui_keys F2
check "F2 says why IO% is empty here" tui_wait 'IO% +off here \(shows -\): needs sysctl kernel.task_delayacct=1'
tui_keys Escape q
check "quits cleanly" tui_wait_exit
echo "$OLD" >"$SYSCTL"
check "the sysctl is back as it was" test "$(cat "$SYSCTL")" = "$OLD"
stop_pid "$D"
stop_pid "$S"
finish
