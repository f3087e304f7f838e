#!/usr/bin/env bash
# diagtop watch --then heap: a firing saves the runtime's heap summary (here the native agent's allocation sites)
# as the JSON `diagtop heap --json` writes, 0600, so that `diagtop heap PID --diff FILE` later shows what grew
# since the moment it fired; a process without a heap provider gets a failed capture that says why.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/targets/agent/lib.sh"
agent_targets || { fail "cannot build the agent's targets"; finish; }
mkdir -p "$TMP/out"

start_agent leaky DIAGTOP_AGENT_SAMPLE_INTERVAL=32768 "$AT/leaky"; L=$TARGET_PID
start_target plain "$TARGETS/sleeper"; S=$TARGET_PID
wait_ready leaky && wait_socket "$L" || fail "targets did not start"

"$DIAGTOP" watch "$L" --threads 1 --then heap --json --dump-dir "$TMP/out" >"$TMP/w.log" 2>"$TMP/w.err"
check "the watch fires and ends with status 0" test $? -eq 0
FILE=$(ls "$TMP"/out/leaky_"$L"_threads_*Z.heap.json 2>/dev/null | head -1)
check "the heap summary is <comm>_<pid>_<trigger>_<UTC>.heap.json, 0600" \
    test -n "$FILE" -a "$(stat -c %a "$FILE" 2>/dev/null)" = 600
check "the capture event names it, by the agent" json_eval "$TMP/w.log" "
    [(d.get('action'), d.get('file')) for d in docs if d['event'] == 'capture'] == [('heap', '$FILE')] and
    any(d['event'] == 'capture' and 'by agent' in d['message'] for d in docs)"
check "it holds the allocation sites, as diagtop heap --json writes them" python3 -c "
import json, sys
d = json.load(open('$FILE'))
sys.exit(0 if d['provider'] == 'agent' and any(r['name'] == 'steady_block' for r in d['rows']) else 1)"

kill -USR1 "$L"
wait_line leaky '^leaked ' || fail "no burst"
"$DIAGTOP" heap --json --diff "$FILE" "$L" >"$TMP/h2.json"
check "diagtop heap --diff FILE: the leak since the firing is the top row by growth" json_eval "$TMP/h2.json" "
    last['rows'][0]['name'] == 'leak_block' and last['rows'][0]['delta_bytes'] > 0"

"$DIAGTOP" watch "$S" --threads 1 --then heap --json --dump-dir "$TMP/out" >"$TMP/p.log" 2>"$TMP/p.err"
check "a process with no heap provider: the capture failed, with the reason" json_eval "$TMP/p.log" "
    [d['event'] for d in docs if d.get('action') == 'heap'] == ['failed'] and
    any(d['event'] == 'failed' and 'no heap summary' in d['message'] for d in docs)"
check "... and no file" bash -c "! ls '$TMP'/out/sleeper_* >/dev/null 2>&1"
stop_pid "$L"
stop_pid "$S"
finish
