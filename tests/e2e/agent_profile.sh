#!/usr/bin/env bash
# The agent's CPU profile (per-thread CPU-time timers, SIGPROF, its own unwinder in the signal handler) through
# diagtop profile, on the target with two hot functions at 3:1 (one called back by glibc's qsort): both found with
# their ratio and stacks complete down to start_thread, the agent's own thread never in it; every format of the
# sampler's (folded stacks summing to the samples, pprof read by go tool pprof, SVG); --native still uses diagtop's
# sampler; a program with its own SIGPROF handler is refused, untouched.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/targets/agent/lib.sh"
agent_targets || { fail "cannot build the agent's targets"; finish; }
mkdir -p "$TMP/out"
export DIAGTOP_DUMP_DIR="$TMP/out" HOME=$TMP GOCACHE=$TMP/gocache

start_agent hot "$TARGETS/hotspots"; P=$TARGET_PID
wait_ready hot && wait_socket "$P" || fail "target did not start"

"$DIAGTOP" profile --json -d 3 "$P" >"$TMP/agent.json" 2>"$TMP/agent.err"
check "the agent takes the profile: method agent, 100 Hz, samples" json_eval "$TMP/agent.json" "
    last['method'] == 'agent' and last['hz'] == 100 and last['samples'] >= 30 and last['lost'] == 0"
check "both hot functions at about 3:1, stacks complete through qsort down to start_thread" python3 - "$TMP/agent.json" <<'PY'
import json, sys
from sample_ratio import about_ratio
d = json.load(open(sys.argv[1]))
own = {f["name"]: f["own_samples"] for f in d["functions"]}
a, b = own.get("burn_direct", 0), own.get("burn_compare", 0)
ratio_ok, why = about_ratio(a, b)
ok = ratio_ok and (a + b) >= 0.7 * d["samples"]
names = [[f["function"] for f in s["frames"]] for s in d["stacks"] if s["frames"] and s["frames"][0]["function"] == "burn_compare"]
complete = names and all(n[-2:] == ["start_thread", "__clone3"] and "burn_round" in n and any("qsort" in f for f in n)
                         for n in names)
if not (ok and complete):
    print("  %s, of %d samples; a stack: %s" % (why, d["samples"], names[:1]), file=sys.stderr)
sys.exit(0 if ok and complete else 1)
PY
check "the agent's own thread is never sampled" json_eval "$TMP/agent.json" "
    all(t['name'] != 'diagtop-agent' for t in last['threads']) and
    not any(f['function'] in ('listener_main', 'cpuprof_run') for s in last['stacks'] for f in s['frames'])"

"$DIAGTOP" profile -d 2 -f folded "$P" >"$TMP/folded.txt" 2>"$TMP/folded.err"
check "folded: one line per stack, counts summing to the samples on stderr" bash -c "
    n=\$(awk '{s += \$NF} END {print s}' '$TMP/folded.txt')
    grep -q \"diagtop profile: \$n samples of $P .* (agent)\" '$TMP/folded.err' && grep -q 'burn_direct' '$TMP/folded.txt'"
"$DIAGTOP" profile -d 2 -f pprof -o "$TMP/agent.pb.gz" "$P" 2>/dev/null
go tool pprof -top "$TMP/agent.pb.gz" >"$TMP/pprof.txt" 2>&1
check "pprof: go tool pprof reads it, burn_direct first" bash -c "
    grep -A1 -E '^ +flat ' '$TMP/pprof.txt' | tail -1 | grep -q ' burn_direct$' && [ \$(stat -c %a '$TMP/agent.pb.gz') = 600 ]"
"$DIAGTOP" profile -d 1 -f svg -o "$TMP/agent.svg" "$P" 2>/dev/null
check "svg: a flame graph that parses" python3 -c "import xml.etree.ElementTree as E; E.parse('$TMP/agent.svg')"
"$DIAGTOP" profile --native --json -d 1 "$P" >"$TMP/native.json" 2>/dev/null
check "--native: diagtop's own sampler instead" json_eval "$TMP/native.json" "last['method'] in ('perf', 'ptrace')"

# A program with its own SIGPROF handler: python's signal module installs one
start_target own env DIAGTOP_AGENT_DIR="$AGENT_DIR" LD_PRELOAD="$AGENT_LIB" /usr/bin/python3 -c "
import signal, sys, time
signal.signal(signal.SIGPROF, lambda *a: None)
print('ready', flush=True)
time.sleep(60)"
O=$TARGET_PID
wait_ready own && wait_socket "$O" || fail "python did not start"
"$DIAGTOP" profile -d 1 "$O" >/dev/null 2>"$TMP/own.err"
check "a program with its own SIGPROF handler: refused, saying why, the program running on" bash -c "
    grep -q 'SIGPROF handler of its own' '$TMP/own.err' && kill -0 $O"
finish
