#!/usr/bin/env bash
# diagtop serve's triggers: POST /api/triggers arms a watch (admin only; 201 with Location), which fires on its
# condition and takes its captures; GET shows its events, each capture a dump resource whose download is the very
# file written (the core loads in gdb); /metrics counts firings and captures; DELETE disarms one still waiting;
# exec and bad values are refused with a reason; the server stops cleanly with a trigger armed.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/tools/serve_lib.sh"

start_target threads "$TARGETS/threads" 4; P=$TARGET_PID
start_target idle "$TARGETS/sleeper"; S=$TARGET_PID
wait_ready threads || fail "target did not start"
serve_start server --tokens "$TOKENS" || fail "server did not start"
H=(-H "$AUTH_ADMIN")

# ---- one that fires at once: 5 threads, the stacks then a core ----
check "POST: 201 with Location /api/triggers/ID" bash -c "[ $(code POST "/api/triggers?pid=$P&threads=5&then=stack,dump" "${H[@]}") = 201 ] && grep -qi '^Location: /api/triggers/[0-9a-f]\{32\}' '$TMP/headers'"
LOC=$(sed -n 's/^[Ll]ocation: \([^[:space:]]*\).*/\1/p' "$TMP/headers")
for i in $(seq 300); do
    code GET "$LOC" -H "$AUTH_READ" >/dev/null
    grep -q '"state":"armed"' "$TMP/body" || break
    sleep 0.1
done
cp "$TMP/body" "$TMP/fired.json"
check "GET (read scope): ended, one firing on threads, two captures" python3 -c "
import json; d = json.load(open('$TMP/fired.json'))
assert d['state'] == 'ended' and d['firings'] == 1 and d['captures'] == 2 and d['pid'] == $P, d
t = [e for e in d['events'] if e['event'] == 'trigger']
assert len(t) == 1 and t[0]['trigger'] == 'threads' and t[0]['value'] == 5, t"
check "each capture is a dump resource: the stacks, then the core" python3 -c "
import json; d = json.load(open('$TMP/fired.json'))
c = [e for e in d['events'] if e['event'] == 'capture']
assert [e['action'] for e in c] == ['stack', 'dump'] and all(e['dump'].startswith('/api/dumps/') for e in c), c
assert c[0]['file'].startswith('threads_${P}_threads_') and c[0]['file'].endswith('.stack.txt'), c
assert c[1]['file'].endswith('.core') and c[1]['bytes'] > 0, c"
STACK=$(python3 -c "import json; print([e['dump'] for e in json.load(open('$TMP/fired.json'))['events'] if e['event']=='capture'][0])")
CORE=$(python3 -c "import json; print([e['dump'] for e in json.load(open('$TMP/fired.json'))['events'] if e['event']=='capture'][1])")
CORE_FILE=$DUMPS/$(python3 -c "import json; print([e['file'] for e in json.load(open('$TMP/fired.json'))['events'] if e['event']=='capture'][1])")
check "the stacks download: every worker's frames" bash -c "[ $(code GET "$STACK" "${H[@]}") = 200 ] && grep -q worker_park '$TMP/body'"
check "the core downloads: the very file written, 0600" bash -c "[ $(code GET "$CORE" "${H[@]}") = 200 ] && cmp -s '$TMP/body' '$CORE_FILE' && [ \$(stat -c %a '$CORE_FILE') = 600 ]"
cp "$TMP/body" "$TMP/core.http"
gdb -nx -batch "$TARGETS/threads" "$TMP/core.http" -ex 'info threads' >"$TMP/gdb.txt" 2>&1
check "gdb loads it: five threads" test "$(grep -cE '^[* ] +[0-9]+ +Thread ' "$TMP/gdb.txt")" -eq 5
check "GET /api/dumps lists them as from a trigger" python3 -c "
import json, subprocess
d = json.loads(subprocess.run(['curl', '-s', '-H', '$AUTH_ADMIN', '$URL/api/dumps'], capture_output=True).stdout)
assert sum(1 for x in d['dumps'] if x['from_trigger'] and x['state'] == 'done') == 2, d"

# ---- one that waits: disarmed ----
code POST "/api/triggers?pid=$S&cpu=99:60&then=dump" "${H[@]}" >/dev/null
WAIT=$(sed -n 's/^[Ll]ocation: \([^[:space:]]*\).*/\1/p' "$TMP/headers")
check "GET /api/triggers lists both, the second armed" python3 -c "
import json, subprocess
d = json.loads(subprocess.run(['curl', '-s', '-H', '$AUTH_READ', '$URL/api/triggers'], capture_output=True).stdout)
s = sorted(t['state'] for t in d['triggers'])
assert s == ['armed', 'ended'], d"
code GET /metrics -H "$AUTH_READ" >/dev/null
check "/metrics: one armed, one firing, two captures" bash -c "grep -qx 'diagtop_triggers_armed 1' '$TMP/body' &&
    grep -qx 'diagtop_trigger_firings_total 1' '$TMP/body' && grep -qx 'diagtop_trigger_captures_total 2' '$TMP/body' &&
    grep -q '^# TYPE diagtop_trigger_firings_total counter' '$TMP/body'"
check "DELETE with a read token: 403" test "$(code DELETE "$WAIT" -H "$AUTH_READ")" = 403
check "DELETE: 204, then GET is 404 'no such trigger'" bash -c "[ $(code DELETE "$WAIT" "${H[@]}") = 204 ] &&
    [ $(code GET "$WAIT" "${H[@]}") = 404 ] && grep -q 'no such trigger' '$TMP/body'"
check "DELETE a malformed id: 404 'no such trigger'" bash -c "[ $(code DELETE /api/triggers/xyz "${H[@]}") = 404 ] && grep -q 'no such trigger' '$TMP/body'"
code GET /metrics -H "$AUTH_READ" >/dev/null
check "/metrics: none armed after it" grep -qx 'diagtop_triggers_armed 0' "$TMP/body"

# ---- refused ----
check "without credentials: 401" test "$(code POST "/api/triggers?pid=$S&cpu=50")" = 401
check "a read token: 403" test "$(code POST "/api/triggers?pid=$S&cpu=50" -H "$AUTH_READ")" = 403
check "exec: 422, never run on the server" bash -c "[ $(code POST "/api/triggers?pid=$S&cpu=1&then=exec:touch%20$TMP/ran" "${H[@]}") = 422 ] && grep -q 'exec is not offered' '$TMP/body' && [ ! -e '$TMP/ran' ]"
check "a signal trigger is no parameter of the route: 400" test "$(code POST "/api/triggers?pid=$S&signal=SEGV" "${H[@]}")" = 400
check "a bad cpu value: 400 naming it" bash -c "[ $(code POST "/api/triggers?pid=$S&cpu=lots" "${H[@]}") = 400 ] && grep -q 'cpu' '$TMP/body'"
check "no condition: 400" bash -c "[ $(code POST "/api/triggers?pid=$S" "${H[@]}") = 400 ] && grep -q 'no condition' '$TMP/body'"
check "two targets: 400" test "$(code POST "/api/triggers?pid=$S&name=x&cpu=5" "${H[@]}")" = 400
check "a cgroup path climbing out: 400" test "$(code POST "/api/triggers?cgroup=../../etc&cpu=5" "${H[@]}")" = 400
check "a PID that is not there: 404" test "$(code POST "/api/triggers?pid=4194304&cpu=5" "${H[@]}")" = 404

# ---- the server stops cleanly with a trigger armed ----
code POST "/api/triggers?name=nosuchprocessname&cpu=50" "${H[@]}" >/dev/null
serve_stop
check "SIGTERM with a trigger armed: a clean exit (no leak)" test $? -eq 0
check "the targets run on, untraced" bash -c "grep -qE '^TracerPid:\s+0$' /proc/$P/status && grep -qE '^TracerPid:\s+0$' /proc/$S/status"
stop_pid "$P"
stop_pid "$S"
finish
