# Helpers of the `diagtop serve` tests (sourced after tests/lib.sh): credentials, a server on a free port of
# 127.0.0.1 started and stopped by its PID like any target, and curl wrappers that print the status code.
ADMIN_TOKEN=admin-token-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
READ_TOKEN=read-token-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
PASSWORD=pw-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
TOKENS=$TMP/tokens
USERS=$TMP/users
DUMPS=$TMP/dumps
mkdir -p "$DUMPS"
printf '%s admin\n%s read\n' "$ADMIN_TOKEN" "$READ_TOKEN" >"$TOKENS"
chmod 600 "$TOKENS"
HASH=$(echo "$PASSWORD" | "$DIAGTOP" serve --hash-password)
printf 'alice:%s:admin\nbob:%s\n' "$HASH" "$HASH" >"$USERS"
chmod 600 "$USERS"
AUTH_ADMIN="Authorization: Bearer $ADMIN_TOKEN"
AUTH_READ="Authorization: Bearer $READ_TOKEN"

# serve_start NAME [ARGS...]: a server with both credential files (unless ARGS give their own) on 127.0.0.1:0;
# sets URL and SERVER_PID. Fails when it does not say where it listens within 30 s.
serve_start() {
    local name=$1 i
    shift
    start_target "$name" "$DIAGTOP" serve --listen 127.0.0.1:0 --dump-dir "$DUMPS" "$@"
    SERVER_PID=$TARGET_PID
    for i in $(seq 300); do
        URL=$(sed -n 's/^diagtop serve: listening on \([^ ]*\).*/\1/p' "$TMP/$name.out")
        [ -n "$URL" ] && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "server $name did not start: $(cat "$TMP/$name.err")" >&2
    return 1
}

# serve_stop: SIGTERM and the exit status (0: clean, ASan/LSan found nothing); 1 when it needed SIGKILL.
serve_stop() {
    local i
    kill -TERM "$SERVER_PID" 2>/dev/null
    for i in $(seq 100); do
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -KILL "$SERVER_PID"
        wait "$SERVER_PID" 2>/dev/null
        return 1
    fi
    wait "$SERVER_PID"
}

# code METHOD PATH [CURL ARGS...]: prints the HTTP status; the body goes to $TMP/body, headers to $TMP/headers.
code() {
    local m=$1 p=$2
    shift 2
    curl -s -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' --max-time 60 -X "$m" "$@" "$URL$p"
}
