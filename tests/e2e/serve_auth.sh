#!/usr/bin/env bash
# diagtop serve: it refuses to start without credentials, on a non-loopback address without TLS, with a tokens
# file others can read or a weak hash; every route answers 401 without credentials, 403 to a read-scope credential
# on admin routes and on a read-only server; Basic and bearer both work; wrong passwords are backed off (429 with
# Retry-After); requests from another site get 403; TLS serves and plain HTTP to it does not.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/tools/serve_lib.sh"

"$DIAGTOP" serve --listen 127.0.0.1:0 --dump-dir "$DUMPS" >"$TMP/nocred.out" 2>&1
check "no credentials: refused" bash -c "[ $? -eq 1 ] && grep -q 'no credentials' '$TMP/nocred.out'"
"$DIAGTOP" serve --listen 0.0.0.0:0 --tokens "$TOKENS" --dump-dir "$DUMPS" >"$TMP/open.out" 2>&1
check "0.0.0.0 without TLS: refused" bash -c "[ $? -eq 1 ] && grep -q 'not a loopback address' '$TMP/open.out'"
cp "$TOKENS" "$TMP/tokens-open" && chmod 644 "$TMP/tokens-open"
"$DIAGTOP" serve --listen 127.0.0.1:0 --tokens "$TMP/tokens-open" --dump-dir "$DUMPS" >"$TMP/perm.out" 2>&1
check "a tokens file others can read: refused" grep -q 'mode 0600' "$TMP/perm.out"
printf 'old:aaZdYkP9/2XuQ:admin\n' >"$TMP/users-des" && chmod 600 "$TMP/users-des"
"$DIAGTOP" serve --listen 127.0.0.1:0 --users "$TMP/users-des" --dump-dir "$DUMPS" >"$TMP/des.out" 2>&1
check "a DES hash: refused" grep -q 'deems strong' "$TMP/des.out"
printf 'short admin\n' >"$TMP/tokens-short" && chmod 600 "$TMP/tokens-short"
"$DIAGTOP" serve --listen 127.0.0.1:0 --tokens "$TMP/tokens-short" --dump-dir "$DUMPS" >"$TMP/short.out" 2>&1
check "a short token: refused" grep -q 'a token is 16' "$TMP/short.out"

start_target sleeper sleep 600; P=$TARGET_PID
serve_start server --users "$USERS" --tokens "$TOKENS" || fail "server did not start"
ID=0123456789abcdef0123456789abcdef
ROUTES="GET / GET /explorer.js GET /explorer.css GET /healthz GET /metrics GET /api/processes GET /api/processes/$P
GET /api/processes/$P/threads GET /api/processes/$P/modules GET /api/processes/$P/fds
GET /api/processes/$P/environment GET /api/processes/$P/stack GET /api/processes/$P/memstats
GET /api/processes/$P/heap POST /api/processes/$P/gc POST /api/processes/$P/profile POST /api/processes/$P/dump
DELETE /api/processes/$P GET /api/dumps GET /api/dumps/$ID GET /api/dumps/$ID/status DELETE /api/dumps/$ID
GET /nothing"
ADMIN_ROUTES="POST /api/processes/$P/gc POST /api/processes/$P/profile POST /api/processes/$P/dump
DELETE /api/processes/$P GET /api/dumps GET /api/dumps/$ID GET /api/dumps/$ID/status DELETE /api/dumps/$ID"

bad=""
set -- $ROUTES
while [ $# -gt 0 ]; do
    c=$(code "$1" "$2")
    [ "$c" = 401 ] && grep -qi '^WWW-Authenticate: Basic realm="diagtop"' "$TMP/headers" &&
        grep -qi '^WWW-Authenticate: Bearer' "$TMP/headers" || bad="$bad $1 $2=$c"
    shift 2
done
check "every route without credentials: 401 with both challenges" test -z "$bad"
echo "  $bad" | grep -v '^  $' >&2

bad=""
set -- $ADMIN_ROUTES
while [ $# -gt 0 ]; do
    c=$(code "$1" "$2" -H "$AUTH_READ")
    [ "$c" = 403 ] || bad="$bad $1 $2=$c"
    c=$(code "$1" "$2" -u "bob:$PASSWORD")
    [ "$c" = 403 ] || bad="$bad bob:$1 $2=$c"
    shift 2
done
check "every admin route with read scope (token and Basic): 403" test -z "$bad"
echo "  $bad" | grep -v '^  $' >&2
check "the sleeper was not signalled" kill -0 "$P"
check "show_secrets with read scope: 403" test "$(code GET "/api/processes/$P/environment?show_secrets=1" -H "$AUTH_READ")" = 403

bad=""
for p in / /healthz /metrics /api/processes "/api/processes/$P" "/api/processes/$P/fds"; do
    c=$(code GET "$p" -H "$AUTH_READ")
    [ "$c" = 200 ] || bad="$bad $p=$c"
    c=$(code GET "$p" -u "bob:$PASSWORD")
    [ "$c" = 200 ] || bad="$bad bob:$p=$c"
done
check "read routes with read scope: 200" test -z "$bad"
echo "  $bad" | grep -v '^  $' >&2
check "Basic with admin scope lists dumps" test "$(code GET /api/dumps -u "alice:$PASSWORD")" = 200
check "a bearer token as Basic's password does not pass" test "$(code GET /healthz -u "alice:$ADMIN_TOKEN")" = 401

check "a page of another site: 403, even with credentials" test \
    "$(code DELETE "/api/processes/$P" -H "$AUTH_ADMIN" -H 'Origin: http://evil.example')" = 403
check "Sec-Fetch-Site: cross-site: 403" test "$(code GET /api/processes -H "$AUTH_ADMIN" -H 'Sec-Fetch-Site: cross-site')" = 403
HOSTPORT=${URL#http://}
check "the same origin passes" test "$(code GET /healthz -H "$AUTH_ADMIN" -H "Origin: http://$HOSTPORT")" = 200
check "a foreign Referer without Origin: 403" test \
    "$(code DELETE "/api/processes/$P" -H "$AUTH_ADMIN" -H 'Referer: http://evil.example/page')" = 403
check "a Referer that only starts like this server's host: 403" test \
    "$(code GET /healthz -H "$AUTH_ADMIN" -H "Referer: http://$HOSTPORT.evil.example/")" = 403
check "this server's own page as Referer passes" test "$(code GET /healthz -H "$AUTH_ADMIN" -H "Referer: http://$HOSTPORT/")" = 200
check "Basic credentials changing something with neither Origin nor Referer: 403 (a browser replays Basic)" test \
    "$(code DELETE "/api/processes/$P" -u "alice:$PASSWORD")" = 403
check "... and with this server's Origin, Basic passes the cross-site check (a bogus signal: 400)" test \
    "$(code DELETE "/api/processes/$P?signal=BOGUS" -u "alice:$PASSWORD" -H "Origin: http://$HOSTPORT")" = 400
check "the sleeper still runs" kill -0 "$P"

# Back-off: five wrong passwords are free, the sixth blocks the address for a second, doubling.
for i in 1 2 3 4 5 6; do last=$(code GET /healthz -u "alice:wrong$i"); done
check "six wrong passwords: then 429 with Retry-After" bash -c "[ \$(curl -s -o /dev/null -w '%{http_code}' -u 'alice:$PASSWORD' '$URL/healthz') = 429 ] &&
    curl -s -D - -o /dev/null -u 'alice:$PASSWORD' '$URL/healthz' | grep -qi '^Retry-After: [12]'"
sleep 2.2
check "after the block, the right password passes" test "$(code GET /healthz -u "alice:$PASSWORD")" = 200
check "missing credentials are not failures (no 429 after many)" bash -c "for i in \$(seq 10); do curl -s -o /dev/null '$URL/healthz'; done;
    [ \$(curl -s -o /dev/null -w '%{http_code}' -H '$AUTH_READ' '$URL/healthz') = 200 ]"
check "the access log names who asked" grep -q ' alice GET /api/dumps 200' "$TMP/server.err"
check "the access log never holds a token" bash -c "! grep -q '$ADMIN_TOKEN' '$TMP/server.err'"
check "stops cleanly on SIGTERM (no leaks)" serve_stop

# Read-only: admin credentials get 403 on every admin route.
serve_start ro --tokens "$TOKENS" --read-only || fail "read-only server did not start"
bad=""
set -- $ADMIN_ROUTES
while [ $# -gt 0 ]; do
    c=$(code "$1" "$2" -H "$AUTH_ADMIN")
    [ "$c" = 403 ] && grep -q 'read-only' "$TMP/body" || bad="$bad $1 $2=$c"
    shift 2
done
check "read-only server: admin routes 403 for admin too" test -z "$bad"
echo "  $bad" | grep -v '^  $' >&2
check "read-only server: reads pass" test "$(code GET "/api/processes/$P" -H "$AUTH_ADMIN")" = 200
check "read-only server stops cleanly" serve_stop

# TLS: HTTPS with a self-signed certificate, refused plain HTTP.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/key.pem" -out "$TMP/cert.pem" -days 1 -subj /CN=localhost \
    >/dev/null 2>&1
chmod 600 "$TMP/key.pem"
serve_start tls --tokens "$TOKENS" --tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" || fail "TLS server did not start"
check "TLS: the URL is https" bash -c "case '$URL' in https://*) true;; *) false;; esac"
check "TLS: HTTPS answers, with HSTS" bash -c "[ \$(curl -s -k -o /dev/null -D '$TMP/tlsh' -w '%{http_code}' -H '$AUTH_READ' '$URL/healthz') = 200 ] &&
    grep -qi '^Strict-Transport-Security' '$TMP/tlsh'"
check "TLS: without credentials still 401" test "$(curl -s -k -o /dev/null -w '%{http_code}' "$URL/api/processes")" = 401
check "TLS: plain HTTP gets no answer" bash -c "! curl -s --max-time 5 -o /dev/null -H '$AUTH_READ' 'http://${URL#https://}/healthz'"
check "TLS server stops cleanly" serve_stop
chmod 644 "$TMP/key.pem"
"$DIAGTOP" serve --listen 127.0.0.1:0 --tokens "$TOKENS" --tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" \
    --dump-dir "$DUMPS" >"$TMP/keyperm.out" 2>&1
check "a private key others can read: refused" grep -q 'chmod 0600' "$TMP/keyperm.out"
finish
