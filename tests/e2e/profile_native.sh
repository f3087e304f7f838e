#!/usr/bin/env bash
# diagtop profile on a process without any agent: a target with two hot functions at a known ratio of work (3:1,
# -O2 without frame pointers, one of them called back by glibc's qsort). Both methods (perf_event_open and the
# ptrace fallback) find both with their ratio and complete stacks down to start_thread; pprof read back by
# `go tool pprof`, folded stacks that sum to the samples, an SVG that parses as XML; the target is never left
# traced or stopped, also when diagtop is killed mid-profile; --no-stop reads a blocked thread's stack while the
# target never enters a tracing stop.
. "$(dirname "$0")/../lib.sh"

start_target hot "$TARGETS/hotspots"; P=$TARGET_PID
wait_ready hot || fail "target did not start"
export HOME=$TMP GOCACHE=$TMP/gocache # go tool pprof writes its settings there

ratio_check() { # JSON: burn_direct and burn_compare both there, own samples about 3:1, complete stacks
    python3 - "$1" <<'PY'
import json, sys
from sample_ratio import about_ratio
d = json.load(open(sys.argv[1]))
own = {f["name"]: f["own_samples"] for f in d["functions"]}
a, b = own.get("burn_direct", 0), own.get("burn_compare", 0)
ratio_ok, why = about_ratio(a, b)
ok = ratio_ok and (a + b) >= 0.7 * d["samples"]
deep = [s for s in d["stacks"] if s["frames"] and s["frames"][0]["function"] == "burn_compare"]
names = [[f["function"] for f in s["frames"]] for s in deep]
complete = deep and all(n[-2:] == ["start_thread", "__clone3"] and "__GI___qsort_r" in n and "burn_round" in n
                        for n in names if len(n) < 200)
if not (ok and complete):
    print("  %s, of %d samples; a stack: %s" % (why, d["samples"], names[:1]), file=sys.stderr)
sys.exit(0 if ok and complete else 1)
PY
}

"$DIAGTOP" profile --json -d 3 "$P" >"$TMP/perf.json" 2>"$TMP/perf.err"
check "perf: exit 0, the method is perf" json_eval "$TMP/perf.json" "last['method'] == 'perf' and last['samples'] >= 30"
check "perf: both hot functions at about 3:1, stacks complete through qsort down to start_thread" ratio_check "$TMP/perf.json"
check "perf: the target runs, untraced" bash -c "[ \$(awk '/^TracerPid:/ {print \$2}' /proc/$P/status) = 0 ]"

DIAGTOP_PROFILE_METHOD=ptrace "$DIAGTOP" profile --json -d 3 "$P" >"$TMP/ptrace.json" 2>"$TMP/ptrace.err"
check "ptrace (forced by the environment): the method says so" json_eval "$TMP/ptrace.json" \
    "last['method'] == 'ptrace' and last['method_why'] and last['samples'] >= 30"
check "ptrace: the same top functions at about 3:1, complete stacks" ratio_check "$TMP/ptrace.json"
check "ptrace: detached afterwards, running" bash -c "
    [ \$(awk '/^TracerPid:/ {print \$2}' /proc/$P/status) = 0 ] && ! grep -q 't' <(awk '{print \$3}' /proc/$P/task/*/stat)"
"$DIAGTOP" profile --method ptrace -d 1 "$P" >"$TMP/ptrace.txt" 2>&1
check "--method ptrace: the text table names the method and the hot function" \
    grep -Eq 'ptrace.*|burn_direct' "$TMP/ptrace.txt"
check "text: pprof -top's columns (flat flat% sum% cum cum% function module), lined up on every row" \
    profile_aligned "$TMP/ptrace.txt"

"$DIAGTOP" profile -f pprof -o "$TMP/cpu.pb.gz" -d 3 "$P" 2>"$TMP/pprof.err"
check "pprof: written 0600" test "$(stat -c %a "$TMP/cpu.pb.gz")" = 600
go tool pprof -top -nodecount=20 "$TMP/cpu.pb.gz" >"$TMP/pprof.top" 2>"$TMP/pprof.top.err"
check "pprof: go tool pprof -top (no binaries needed) shows both at about 3:1" python3 - "$TMP/pprof.top" "$TMP/pprof.top.err" <<'PY'
import re, sys
from sample_ratio import about_ratio
flat = {}
for line in open(sys.argv[1]):
    m = re.match(r"\s*([\d.]+)(m?s)\s+[\d.]+%\s+[\d.]+%\s+[\d.]+m?s\s+[\d.]+%\s+(\S+)", line)
    if m:
        flat[m.group(3)] = float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)
# 100 Hz: a sample is 10 ms of flat time
ok, why = about_ratio(round(flat.get("burn_direct", 0) * 100), round(flat.get("burn_compare", 0) * 100))
if not ok: # say what pprof printed, and what it said on stderr, so that a failure in CI can be read
    sys.stderr.write("  %s; pprof -top printed:\n%s  and on stderr:\n%s"
                     % (why, open(sys.argv[1]).read()[:2000], open(sys.argv[2]).read()[:2000]))
sys.exit(0 if ok else 1)
PY
"$DIAGTOP" profile -f pprof -d 1 "$P" >"$TMP/saved.out" 2>"$TMP/saved.err"
SAVED=$(cat "$TMP/saved.out")
check "pprof without -o: saved 0600 in the dump directory, its path printed" bash -c "
    [ -f '$SAVED' ] && [ \$(stat -c %a '$SAVED') = 600 ] && [[ '$SAVED' == *cpu.hotspots.$P.*.pb.gz ]]"
rm -f "$SAVED"

"$DIAGTOP" profile -f folded -d 2 "$P" >"$TMP/folded.txt" 2>"$TMP/folded.err"
check "folded: 'root;...;leaf COUNT' lines, the hot leaves present" bash -c "
    grep -Eq '^__clone3;start_thread;burn;burn_round;burn_direct [0-9]+\$' '$TMP/folded.txt' &&
    grep -Eq ';burn_compare [0-9]+\$' '$TMP/folded.txt'"
check "folded: the counts add up to the samples taken (said on stderr)" python3 -c "
import re
total = sum(int(l.rsplit(' ', 1)[1]) for l in open('$TMP/folded.txt') if l.strip())
said = int(re.search(r'(\d+) samples of', open('$TMP/folded.err').read()).group(1))
assert total == said and total > 20, (total, said)"

"$DIAGTOP" profile -f svg -o "$TMP/flame.svg" -d 2 "$P" 2>/dev/null
check "svg: well-formed XML, self-contained, naming the hot functions" python3 -c "
import xml.etree.ElementTree as ET
t = ET.parse('$TMP/flame.svg'); s = open('$TMP/flame.svg').read()
assert t.getroot().tag.endswith('svg') and 'burn_direct' in s and 'burn_compare' in s
assert 'xlink:href=\"http' not in s and '<script src' not in s"

# diagtop killed with SIGKILL in the middle of a ptrace profile: the kernel detaches, the target runs on.
for i in 1 2 3; do
    DIAGTOP_PROFILE_METHOD=ptrace "$DIAGTOP" profile -d 20 "$P" >/dev/null 2>&1 &
    D=$!
    PIDS+=("$D")
    sleep 0.$((3 + i))
    kill -KILL "$D"
    wait "$D" 2>/dev/null
done
sleep 0.3
check "SIGKILL of diagtop during ptrace profiles: the target is untraced and not stopped" bash -c "
    [ \$(awk '/^TracerPid:/ {print \$2}' /proc/$P/status) = 0 ] && ! grep -qE '^[tT]' <(awk '{print \$3}' /proc/$P/task/*/stat)"

# A process that exits in the middle of a profile: what was sampled is reported.
start_target short "$TARGETS/hotspots"; S=$TARGET_PID
wait_ready short
(sleep 1; kill -TERM "$S") &
"$DIAGTOP" profile --json -d 10 "$S" >"$TMP/exit.json" 2>"$TMP/exit.err"
check "a target that exits mid-profile: a report of what was taken, early" json_eval "$TMP/exit.json" \
    "last['seconds'] < 5 and last['samples'] > 0"

# Threads appearing and exiting all the time.
start_target churn "$TARGETS/churn"; C=$TARGET_PID
wait_ready churn
"$DIAGTOP" profile --json -d 2 "$C" >"$TMP/churn.json" 2>"$TMP/churn.err"
check "threads coming and going: a profile, exit 0" json_eval "$TMP/churn.json" "last['pid'] == $C"
check "threads coming and going: untraced afterwards" bash -c "[ \$(awk '/^TracerPid:/ {print \$2}' /proc/$C/status) = 0 ]"

# --no-stop: a thread blocked in read() with its whole stack; the target never enters a tracing stop.
start_target unw "$TARGETS/unwind-nofp"; U=$TARGET_PID
wait_ready unw
python3 - "$U" >"$TMP/states.txt" <<'PY' &
import glob, sys, time
pid, seen, end = sys.argv[1], set(), time.time() + 3
while time.time() < end:
    for f in glob.glob("/proc/%s/task/*/stat" % pid):
        try:
            seen.add(open(f).read().rsplit(")", 1)[1].split()[0])
        except OSError:
            pass
print("".join(sorted(seen)))
PY
W=$!
sleep 0.3
for i in 1 2 3 4 5; do "$DIAGTOP" stack --no-stop --json "$U" >"$TMP/nostop.json" 2>"$TMP/nostop.err"; done
wait $W
check "--no-stop: the reader's stack, read <- read_blocked <- reader <- start_thread, nothing stopped" \
    json_eval "$TMP/nostop.json" "
    last['not_stopped'] and [f['function'] for t in last['threads'] if t['name'] == 'reader' for f in t['frames']
     if not f['inlined']][-4:] == ['read_blocked', 'reader', 'start_thread', '__clone3']"
check "--no-stop: the running thread is listed as running" json_eval "$TMP/nostop.json" "
    [t['error'] for t in last['threads'] if t['name'] == 'spinner'][0].startswith('running')"
check "--no-stop: the target's threads were never in a tracing stop (t)" bash -c "! grep -q t '$TMP/states.txt'"

# Another user, without privilege: a clear message naming what is missing.
if [ "$(id -u)" -eq 0 ]; then
    env XDG_CONFIG_HOME=/nonexistent setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
        "$DIAGTOP" profile -d 1 "$P" >/dev/null 2>"$TMP/eperm.err"
    check "another user's process: refused, naming what is missing" \
        grep -Eq 'permission denied.*(CAP_SYS_PTRACE|ptrace_scope)|perf_event_paranoid' "$TMP/eperm.err"
fi
finish
