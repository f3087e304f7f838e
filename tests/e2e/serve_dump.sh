#!/usr/bin/env bash
# diagtop serve's dumps: POST .../dump answers 202 with Location, the status reports progress then done, the
# download is the very file the server wrote (0600) and has the CLI dump's segments, gdb loads it with every
# thread and the known string, POST .../analyze reads it as `diagtop analyze` does, a Range request resumes it, a
# busy process gets 409, a dump that cannot be written fails with its reason, DELETE removes it.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/tools/serve_lib.sh"

start_target dumpme "$TARGETS/dumpme" 8 4 16; P=$TARGET_PID
wait_ready dumpme || fail "target did not start"
ADDR=$(sed -n 's/.*string=\(0x[0-9a-f]*\).*/\1/p' "$TMP/dumpme.out")
serve_start server --tokens "$TOKENS" || fail "server did not start"
H=(-H "$AUTH_ADMIN")
check "POST dump: 202 with Location" bash -c "[ $(code POST "/api/processes/$P/dump" "${H[@]}") = 202 ] && grep -qi '^Location: /api/dumps/[0-9a-f]\{32\}' '$TMP/headers'"
LOC=$(sed -n 's/^[Ll]ocation: \([^[:space:]]*\).*/\1/p' "$TMP/headers")
for i in $(seq 300); do
    c=$(code GET "$LOC/status" "${H[@]}")
    grep -q '"state":"running"' "$TMP/body" || break
    sleep 0.1
done
check "status: done, with the CLI's fields" python3 -c "
import json; d = json.load(open('$TMP/body'))
assert d['state'] == 'done' and d['threads'] == 4 and d['progress'] == 1 and d['apparent_bytes'] > 0, d"
SERVER_FILE=$(python3 -c "import json; print(json.load(open('$TMP/body'))['path'])")
check "the file is in the dump directory, 0600" test "$(stat -c %a "$SERVER_FILE")" = 600
check "GET: 200, the core" bash -c "[ $(code GET "$LOC" "${H[@]}" -o "$TMP/core.http") = 200 ]"
curl -s "${H[@]}" -o "$TMP/core.http" "$URL$LOC"
check "the download equals the server's file" cmp "$TMP/core.http" "$SERVER_FILE"
"$DIAGTOP" dump -o "$TMP/core.cli" "$P" >/dev/null 2>&1
check "the same segments as the CLI's dump" python3 -c "
import struct
def loads(p):
    d = open(p, 'rb').read(); phoff, phnum = struct.unpack_from('<Q', d, 32)[0], struct.unpack_from('<H', d, 56)[0]
    return [struct.unpack_from('<IIQQQQQQ', d, phoff + 56 * i)[i2] for i in range(phnum) for i2 in (0, 1, 3, 6)]
assert loads('$TMP/core.http') == loads('$TMP/core.cli')"
gdb -nx -batch "$TARGETS/dumpme" "$TMP/core.http" -ex 'info threads' -ex "x/s $ADDR" >"$TMP/gdb.txt" 2>&1
check "gdb: four threads and the known string" bash -c "[ \$(grep -cE '^[* ] +[0-9]+ +Thread ' '$TMP/gdb.txt') -eq 4 ] && grep -q 'DIAGTOP-KNOWN-STRING-4242' '$TMP/gdb.txt'"
c=$(code POST "$LOC/analyze" "${H[@]}"); cp "$TMP/body" "$TMP/analyze.json"
check "POST .../analyze: 200, the core read offline: its four threads, the pid, the heap walked" bash -c "
    [ $c = 200 ] && python3 -c '
import json, sys; d = json.load(open(sys.argv[1]))
assert d[\"process\"][\"pid\"] == $P and len(d[\"threads\"]) == 4 and d[\"heap\"][\"walked\"], d.get(\"heap\")
assert all(t[\"frames\"] for t in d[\"threads\"])' '$TMP/analyze.json'"
check "... the same stacks and heap as diagtop analyze --json gives of the downloaded core" bash -c "
    '$DIAGTOP' analyze '$TMP/core.http' --json >'$TMP/cli-analyze.json' && python3 -c '
import json, sys; a, b = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda d: ([(t[\"tid\"], [(f[\"pc\"], f[\"function\"]) for f in t[\"frames\"]]) for t in d[\"threads\"]], d[\"heap\"][\"classes\"])
assert key(a) == key(b)' '$TMP/analyze.json' '$TMP/cli-analyze.json'"
c=$(code POST "$LOC/analyze?heap=0" "${H[@]}")
check "POST .../analyze?heap=0: no heap walked" bash -c "[ $c = 200 ] && grep -q '\"heap\":null' '$TMP/body'"
check "POST .../analyze of an unknown dump: 404" test "$(code POST /api/dumps/0123456789abcdef0123456789abcdef/analyze "${H[@]}")" = 404
check "POST .../analyze needs admin: 403 with a read token" test "$(code POST "$LOC/analyze" -H "$AUTH_READ")" = 403
head -c 100000 "$TMP/core.http" >"$TMP/core.part"
curl -s "${H[@]}" -C - -o "$TMP/core.part" "$URL$LOC"
check "a Range request resumes a cut download" cmp "$TMP/core.part" "$SERVER_FILE"
check "Range: 206 with Content-Range" bash -c "[ $(code GET "$LOC" "${H[@]}" -r 10-19) = 206 ] && grep -qi '^Content-Range: bytes 10-19/' '$TMP/headers' && [ \$(wc -c <'$TMP/body') -eq 10 ]"
check "a range beyond the end: 416" test "$(code GET "$LOC" "${H[@]}" -r 999999999999-)" = 416
code POST "/api/processes/$P/profile?seconds=3" "${H[@]}" >/dev/null &
PROF=$!
sleep 1
check "a dump while a profile runs on the process: 409 with Retry-After" bash -c "[ $(code POST "/api/processes/$P/dump" "${H[@]}") = 409 ] && grep -qi '^Retry-After: [0-9]' '$TMP/headers'"
wait $PROF
# A dump that cannot be written (its directory removed under the server) fails with the reason and its time.
mv "$DUMPS" "$DUMPS.away"
code POST "/api/processes/$P/dump" "${H[@]}" >/dev/null
FAILED=$(sed -n 's/^[Ll]ocation: \([^[:space:]]*\).*/\1/p' "$TMP/headers")
for i in $(seq 300); do
    code GET "$FAILED/status" "${H[@]}" >/dev/null
    grep -q '"state":"running"' "$TMP/body" || break
    sleep 0.1
done
check "a dump into a vanished directory: failed, with the reason and how long it ran" python3 -c "
import json; d = json.load(open('$TMP/body'))
assert d['state'] == 'failed' and 'No such file' in d['error'] and d['elapsed_ms'] > 0, d"
check "its download: 410" test "$(code GET "$FAILED" "${H[@]}")" = 410
mv "$DUMPS.away" "$DUMPS"
check "an unknown dump id: 404" test "$(code GET /api/dumps/0123456789abcdef0123456789abcdef "${H[@]}")" = 404
check "DELETE: 204 and the file is gone" bash -c "[ $(code DELETE "$LOC" "${H[@]}") = 204 ] && [ ! -e '$SERVER_FILE' ]"
check "after DELETE: 404" test "$(code GET "$LOC" "${H[@]}")" = 404
check "the target runs on" kill -0 "$P"
check "stops cleanly on SIGTERM (no leaks)" serve_stop
finish
