#!/usr/bin/env bash
# diagtop serve's routes on real targets: the process list (sort, order, limit, user, filter) as -b --json has it,
# a process's Kudu fields and sections as `diagtop info --json`, the environment masked, stacks, memstats, a CPU
# profile that go tool pprof reads, signals through DELETE with the start-time check; and hostile input: bad pids,
# traversal, unknown or repeated parameters, kernel threads, thread ids, bodies, huge headers, slow clients and
# the connection limit each get their 4xx (or a closed connection) and nothing else happens.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/tools/serve_lib.sh"

SECRET_TOKEN=hunter2-value PLAIN_VAR=plain start_target threads "$TARGETS/threads" 4; T=$TARGET_PID
start_target burner "$TARGETS/burner"; B=$TARGET_PID
wait_ready threads || fail "threads target did not start"
serve_start server --tokens "$TOKENS" --max-connections 8 --client-timeout 2 || fail "server did not start"
H=(-H "$AUTH_ADMIN")
j() { python3 -c "import json,sys; d=json.load(open('$TMP/body')); sys.exit(0 if ($1) else 1)" || { echo "  body: $(head -c 300 "$TMP/body")" >&2; return 1; }; }

check "list: 200, the snapshot schema" bash -c "[ $(code GET "/api/processes?filter=threads" "${H[@]}") = 200 ]"
check "list: the target, with its threads and argv" j "any(p['pid'] == $T and p['threads'] == 5 and p['argv'][1] == '4' and p['runtime'] == 'native' for p in d['processes']) and 'system' in d and d['interval_seconds'] > 0"
code GET "/api/processes?sort=pid&order=asc&limit=5" "${H[@]}" >/dev/null
check "list: sort=pid order=asc limit=5" j "[p['pid'] for p in d['processes']] == sorted(p['pid'] for p in d['processes']) and len(d['processes']) == 5"
code GET "/api/processes?sort=cpu" "${H[@]}" >/dev/null
check "list: sort=cpu is by CPU, the burner near the top (parallel tests burn too)" j "[p['cpu_percent'] for p in d['processes']] == sorted((p['cpu_percent'] for p in d['processes']), reverse=True) and $B in [p['pid'] for p in d['processes'][:8]]"
code GET "/api/processes?user=root&limit=1000000" "${H[@]}" >/dev/null
check "list: user=root has only root's" j "all(p['uid'] == 0 for p in d['processes']) and len(d['processes']) > 2"
"$DIAGTOP" -b --json -n 1 -p "$T" >"$TMP/batch.json"
code GET "/api/processes?filter=$T" "${H[@]}" >/dev/null
check "list: a row has the fields of -b --json" python3 -c "
import json
b = json.loads(open('$TMP/batch.json').read().splitlines()[-1])['processes'][0]
a = [p for p in json.load(open('$TMP/body'))['processes'] if p['pid'] == $T][0]
assert sorted(a) == sorted(b), (sorted(a), sorted(b))
for k in ('pid', 'ppid', 'name', 'argv', 'exe', 'threads', 'start_time', 'runtime', 'user'): assert a[k] == b[k], k"
check "list: a bad sort key 400" test "$(code GET '/api/processes?sort=bogus' "${H[@]}")" = 400
check "list: an unknown user 400" test "$(code GET '/api/processes?user=nosuchuser_x' "${H[@]}")" = 400
check "list: limit=0 400" test "$(code GET '/api/processes?limit=0' "${H[@]}")" = 400
check "list: a parameter it does not take 400" bash -c "[ $(code GET '/api/processes?signal=KILL' "${H[@]}") = 400 ] && grep -q 'does not take' '$TMP/body'"
check "list: a parameter twice 400" test "$(code GET '/api/processes?limit=1&limit=2' "${H[@]}")" = 400

"$DIAGTOP" info --json "$T" >"$TMP/info.json"
code GET "/api/processes/$T" "${H[@]}" >/dev/null
check "details: Kudu's fields, as diagtop info --json" python3 -c "
import json
a = json.load(open('$TMP/body')); b = json.load(open('$TMP/info.json'))
for k in ('id', 'name', 'start_time', 'thread_count', 'module_count', 'virtual_memory'): assert a[k] == b[k], (k, a[k], b[k])
assert a['handle_count'] >= 3 and a['working_set'] > 0 and a['private_memory'] > 0
assert 'environment' not in a and 'general' in a and 'threads' in a and 'fds' in a"
code GET "/api/processes/$T/threads" "${H[@]}" >/dev/null
check "threads: five, named" j "len(d['threads']) == 5 and sum(t['name'].startswith('worker-') for t in d['threads']) == 4"
code GET "/api/processes/$T/modules" "${H[@]}" >/dev/null
check "modules: libc" j "any('libc' in (m['path'] or '') for m in d['modules'])"
code GET "/api/processes/$T/fds" "${H[@]}" >/dev/null
check "fds" j "len(d['fds']['open']) >= 3"
code GET "/api/processes/$T/environment" "${H[@]}" >/dev/null
check "environment: a secret masked, the rest shown" j "d['environment']['SECRET_TOKEN'] is None and 'SECRET_TOKEN' in d['environment_masked'] and d['environment']['PLAIN_VAR'] == 'plain'"
check "environment: hunter2 is nowhere in the masked reply" bash -c "! grep -q hunter2 '$TMP/body'"
code GET "/api/processes/$T/environment?show_secrets=1" "${H[@]}" >/dev/null
check "environment: show_secrets with admin" j "d['environment']['SECRET_TOKEN'] == 'hunter2-value'"

code GET "/api/processes/$T/stack" "${H[@]}" >/dev/null
check "stack: every thread in its named function" j "len(d['threads']) == 5 and sum(any(f['function'] == 'worker_park' for f in t['frames']) for t in d['threads']) == 4 and d['stopped_ms'] > 0"
check "stack: the target runs on" bash -c "sleep 0.3; [ \$(awk '{print \$3}' /proc/$T/stat) = S ] && ! grep -q '^TracerPid:[[:space:]]*[1-9]' /proc/$T/status"
code GET "/api/processes/$T/stack?no_stop=1&source=0" "${H[@]}" >/dev/null
check "stack: no_stop" j "d['not_stopped'] is True"
code GET "/api/processes/$T/memstats" "${H[@]}" >/dev/null
check "memstats: the kernel's memory" j "d['memory']['rss_bytes'] > 0"
check "heap of a native process: 501 with the reason" test "$(code GET "/api/processes/$T/heap" "${H[@]}")" = 501
check "gc of a native process: 501" test "$(code POST "/api/processes/$T/gc" "${H[@]}")" = 501

code POST "/api/processes/$B/profile?seconds=1" "${H[@]}" >/dev/null
cp "$TMP/body" "$TMP/cpu.pb.gz"
check "profile: a gzipped pprof to download" bash -c "grep -qi 'Content-Disposition: attachment; filename=\"cpu.$B.pb.gz\"' '$TMP/headers' && gzip -t '$TMP/cpu.pb.gz'"
if command -v go >/dev/null; then
    check "profile: go tool pprof reads it, main at the top" bash -c "GOCACHE='$TMP/gocache' go tool pprof -top '$TMP/cpu.pb.gz' 2>/dev/null | grep -q main"
fi
code POST "/api/processes/$B/profile?seconds=1&format=json" "${H[@]}" >/dev/null
check "profile: format=json is cpu_json" j "d['pid'] == $B and d['samples'] > 0"

start_target victim sleep 600; V=$TARGET_PID
sleep 0.2
check "signal: a wrong start_time 409, nothing sent" bash -c "[ $(code DELETE "/api/processes/$V?start_time=2001-01-01T00:00:00Z" "${H[@]}") = 409 ] && kill -0 $V"
check "signal: a bogus signal 400" test "$(code DELETE "/api/processes/$V?signal=BOGUS" "${H[@]}")" = 400
ST=$(python3 -c "import json; print([p for p in json.load(open('$TMP/body' if False else '/dev/stdin'))['processes'] if p['pid'] == $V][0]['start_time'])" \
    < <(curl -s "${H[@]}" "$URL/api/processes?filter=$V"))
check "signal: DELETE with the listed start_time sends SIGTERM" bash -c "[ $(code DELETE "/api/processes/$V?start_time=$ST&signal=TERM" "${H[@]}") = 200 ] &&
    for i in \$(seq 30); do kill -0 $V 2>/dev/null || exit 0; sleep 0.1; done; exit 1"
wait "$V" 2>/dev/null

# Hostile input.
check "a non-numeric pid 400" test "$(code GET /api/processes/abc "${H[@]}")" = 400
check "a pid beyond PID_MAX_LIMIT 400" test "$(code GET /api/processes/99999999 "${H[@]}")" = 400
check "no such process 404" test "$(code GET /api/processes/4194000 "${H[@]}")" = 404
TID=$(ls /proc/$T/task | sort -n | tail -1)
check "a thread id is not a process: 404" bash -c "[ $(code GET "/api/processes/$TID" "${H[@]}") = 404 ] && grep -q 'is a thread of' '$TMP/body'"
check "path traversal 400" test "$(code GET /api/processes/1/../../../etc/passwd "${H[@]}" --path-as-is)" = 400
check "encoded traversal 400" test "$(code GET /api/dumps/%2e%2e%2f%2e%2e%2fetc%2fshadow "${H[@]}" --path-as-is)" = 400
check "an unknown route 404" test "$(code GET /etc/passwd "${H[@]}")" = 404
check "a method a route does not take 405" test "$(code POST /api/processes "${H[@]}")" = 405
check "... with Allow naming what it takes" grep -qi '^Allow: GET, HEAD' "$TMP/headers"
check "PUT 501" test "$(code PUT /api/processes "${H[@]}")" = 501
KT=$(awk '$0 ~ /^Name:\tkthreadd/ {print FILENAME}' /proc/[0-9]*/status 2>/dev/null | head -1 | cut -d/ -f3)
KT=${KT:-2}
check "a kernel thread's stack 422" bash -c "[ $(code GET "/api/processes/$KT/stack" "${H[@]}") = 422 ] && grep -q 'kernel thread' '$TMP/body'"
check "a kernel thread's dump 422, no dump started" bash -c "[ $(code POST "/api/processes/$KT/dump" "${H[@]}") = 422 ] && [ -z \"\$(ls '$DUMPS')\" ]"
check "SIGTERM to a kernel thread 422" test "$(code DELETE "/api/processes/$KT" "${H[@]}")" = 422
check "the server's own pid 422" test "$(code POST "/api/processes/$SERVER_PID/dump" "${H[@]}")" = 422
check "a request body 413" test "$(code POST "/api/processes/$T/gc" "${H[@]}" --data-binary @/etc/services)" = 413
check "profile seconds=100000: 400" test "$(code POST "/api/processes/$B/profile?seconds=100000" "${H[@]}")" = 400
check "dump filter=zz: 400" test "$(code POST "/api/processes/$T/dump?filter=zz" "${H[@]}")" = 400
check "a 40 KB header 431" test "$(code GET /healthz "${H[@]}" -H "X-Big: $(head -c 40000 /dev/zero | tr '\0' a)")" = 431
check "a 40 KB query 414 or 431" bash -c "c=\$(curl -s -o /dev/null -w '%{http_code}' -H '$AUTH_ADMIN' '$URL/api/processes?filter=$(head -c 40000 /dev/zero | tr '\0' a)'); [ \$c = 431 ] || [ \$c = 414 ]"
check "a slow client is dropped after the idle timeout" python3 - "$URL" <<'PY'
import socket, sys, time
host, port = sys.argv[1].split("//")[1].split(":")
s = socket.create_connection((host, int(port)))
s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # never finishes its headers
s.settimeout(8)
t = time.time()
data = s.recv(100)
assert data == b"" or b"408" in data or b"400" in data, data
assert 1.5 < time.time() - t < 7, time.time() - t
PY
check "a client sending a byte every 0.3 s is closed at the request deadline (2 s), not kept alive by each byte" python3 - "$URL" <<'PY'
import socket, sys, time
host, port = sys.argv[1].split("//")[1].split(":")
s = socket.create_connection((host, int(port)))
t = time.time()
closed = False
for b in b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200:
    try:
        s.send(bytes([b]))
    except (BrokenPipeError, ConnectionResetError):
        closed = True
        break
    s.settimeout(0.3)
    try:
        if s.recv(100) == b"":
            closed = True
            break
    except socket.timeout:
        pass
    except ConnectionResetError:
        closed = True
        break
    if time.time() - t > 12: break
assert closed, "still open after %.1f s" % (time.time() - t)
assert time.time() - t < 8, time.time() - t
PY
check "an encoded NUL in the path: 400, not the truncated path" test "$(code GET '/api/processes%00junk' "${H[@]}")" = 400
check "an encoded / in the path: 400, not a separator" test "$(code GET "/api/processes/$T%2fstack" "${H[@]}")" = 400
check "an encoded / in upper case: 400" test "$(code GET "/api/processes/$T%2Fstack" "${H[@]}")" = 400
check "slow clients from four addresses holding every slot: a client sending its request at once is served" python3 - "$URL" "$ADMIN_TOKEN" <<'PY'
import socket, sys, time
host, port = sys.argv[1].split("//")[1].split(":")
held = []
for i in range(16):  # from 127.0.0.2-5, two per address as the cap allows, more than the 8 slots
    src = "127.0.0.%d" % (2 + i % 4)
    try:
        s = socket.create_connection((host, int(port)), source_address=(src, 0))
        s.sendall(b"GET /healthz HTTP/1.1\r\n")  # and never more
        held.append(s)
    except OSError:
        pass
time.sleep(1.0)  # older than the guard's grace, younger than the 2 s deadline
ok = 0
for attempt in range(3):
    # a pause between attempts: the server counts a closed connection's slot free only once its thread ends
    time.sleep(0.3)
    c = socket.create_connection((host, int(port)))
    c.settimeout(5)
    try:
        c.sendall(("GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n" % sys.argv[2]).encode())
        if b" 200 " in c.recv(200): ok += 1
    except (ConnectionResetError, BrokenPipeError, socket.timeout):
        pass
    c.close()
for s in held: s.close()
assert ok >= 2, "served %d of 3" % ok
PY
check "the connection limit (8 in all, 2 per address): a 3rd from one address is closed" python3 - "$URL" "$ADMIN_TOKEN" <<'PY'
import socket, sys, time
host, port = sys.argv[1].split("//")[1].split(":")
held = [socket.create_connection((host, int(port))) for _ in range(2)]
time.sleep(0.3)
extra = socket.create_connection((host, int(port)))
extra.settimeout(3)
try:
    extra.sendall(("GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n" % sys.argv[2]).encode())
    got = extra.recv(100)
except (ConnectionResetError, BrokenPipeError):
    got = b""
assert b"200" not in got, got
for s in held: s.close()
PY
sleep 0.3
check "after the held connections close, requests pass again" test "$(code GET /healthz "${H[@]}")" = 200
check "the targets were not signalled by any of it" bash -c "kill -0 $T && kill -0 $B"
check "stops cleanly on SIGTERM (no leaks)" serve_stop
finish
