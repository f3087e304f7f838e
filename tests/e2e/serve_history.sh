#!/usr/bin/env bash
# GET /api/processes/{pid}/history on a real target that sleeps 3 s and spins 3 s: asked every half second, the
# history grows one sample a sample interval, its times rise in step, CPU% goes high and low, RES is known in every
# sample and WAIT% in those its own requests read; seconds= trims it; a vanished pid, a thread id, a bad seconds
# and an unknown parameter each get their 4xx. With --sample-every 1 it fills while nobody asks.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/tools/serve_lib.sh"

start_target busyidle "$TARGETS/idlespin" 3 3 repeat; B=$TARGET_PID
start_target threads "$TARGETS/threads" 2; T=$TARGET_PID
wait_ready busyidle || fail "busyidle target did not start"
wait_ready threads || fail "threads target did not start"
serve_start server --tokens "$TOKENS" || fail "server did not start"
H=(-H "$AUTH_READ")
j() { python3 -c "import json,sys; d=json.load(open('$TMP/body')); sys.exit(0 if ($1) else 1)" || { echo "  body: $(head -c 400 "$TMP/body")" >&2; return 1; }; }

# phases of 3 s against samples of about 1 s: each phase holds at least one sample wholly busy or wholly idle
for i in $(seq 32); do code GET "/api/processes/$B/history" "${H[@]}" >/dev/null; sleep 0.5; done
check "200, the schema: pid, samples, time and every field as long as it" j "d['pid'] == $B and d['samples'] >= 8 and len(d['time']) == d['samples'] and sorted(d['fields']) == sorted(['cpu_percent','res_bytes','disk_read_bytes_per_second','disk_write_bytes_per_second','net_received_bytes_per_second','net_sent_bytes_per_second','wait_percent']) and all(len(v) == d['samples'] for v in d['fields'].values())"
check "times rise, about one sample interval apart, and end now" j "all(0.9 <= b - a <= 3 for a, b in zip(d['time'], d['time'][1:])) and abs(d['time'][-1] - $(date +%s)) < 5 and 0.9 <= d['interval_seconds'] <= 3"
check "CPU% goes high and low again (a 3 s busy, 3 s idle target)" j "sum(1 for v in d['fields']['cpu_percent'] if v is not None and v > 60) >= 2 and sum(1 for v in d['fields']['cpu_percent'] if v is not None and v < 25) >= 2"
check "RES is known in every sample, in bytes" j "all(v is not None and v > 100000 for v in d['fields']['res_bytes'])"
check "WAIT% and disk rates are read by the requests themselves" j "sum(v is not None for v in d['fields']['wait_percent']) >= d['samples'] - 2 and sum(v is not None for v in d['fields']['disk_write_bytes_per_second']) >= d['samples'] - 2"
ALL=$(python3 -c "import json; print(json.load(open('$TMP/body'))['samples'])")
code GET "/api/processes/$B/history?seconds=4" "${H[@]}" >/dev/null
check "seconds=4 keeps only the last 4 seconds" j "1 <= d['samples'] <= 5 and d['samples'] < $ALL and d['time'][0] >= $(date +%s) - 6"
TID=$(ls /proc/$T/task | grep -vx "$T" | head -1)
C=$(code GET "/api/processes/$TID/history" "${H[@]}")
check "a thread id: 4xx ($C)" test "${C:0:1}" = 4
check "seconds=0: 400" test "$(code GET "/api/processes/$B/history?seconds=0" "${H[@]}")" = 400
check "seconds=abc: 400" test "$(code GET "/api/processes/$B/history?seconds=abc" "${H[@]}")" = 400
check "a parameter it does not take: 400" test "$(code GET "/api/processes/$B/history?signal=KILL" "${H[@]}")" = 400
check "no token: 401" test "$(code GET "/api/processes/$B/history")" = 401
stop_pid "$B"
check "a process that ended: 404" test "$(code GET "/api/processes/$B/history" "${H[@]}")" = 404
check "the server still answers" test "$(code GET /healthz "${H[@]}")" = 200
check "stops cleanly" serve_stop

# --sample-every: the history fills while nobody asks
serve_start sampler --tokens "$TOKENS" --sample-every 1 || fail "server with --sample-every did not start"
sleep 6
code GET "/api/processes/$T/history" "${H[@]}" >/dev/null
check "--sample-every 1, no request for 6 s: one sample about every second meanwhile" j "
    d['samples'] >= 5 and all(0.8 <= b - a <= 1.6 for a, b in zip(d['time'], d['time'][1:]))"
check "stops cleanly, the sampler too" serve_stop
finish
