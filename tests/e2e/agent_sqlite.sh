#!/usr/bin/env bash
# Leak rows through a library with its own malloc wrapper: a program that leaks sqlite3_mprintf's strings from
# remember_names(), under LD_PRELOAD=libdiagtop-agent.so, with Debian's stripped libsqlite3 (sqlite's wrapper that
# calls malloc, sqlite3MemMalloc, is a hidden symbol: only lib+0xoff). After two snapshots around a known leak the
# top row by growth is remember_names, the caller, not libsqlite3.so...+0xa7504; its stack still holds sqlite's
# frames, named where .dynsym covers them; the API and --drop-frames give the same rule; the steady queries grow
# by nearly nothing.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/targets/agent/lib.sh"
agent_targets || { fail "cannot build the agent's targets (libsqlite3-dev: scripts/deps.sh --test)"; finish; }
mkdir -p "$TMP/out"
export DIAGTOP_DUMP_DIR="$TMP/out"

start_agent sql DIAGTOP_AGENT_SAMPLE_INTERVAL=32768 "$AT/sqlleak"; P=$TARGET_PID
wait_ready sql && wait_socket "$P" || fail "sqlleak did not start"
"$DIAGTOP" heap --json "$P" >"$TMP/h1.json"
kill -USR1 "$P"
wait_line sql '^leaked ' || fail "no burst"
TRUTH=$(sed -n 's/^leaked //p' "$TMP/sql.out" | tail -1)
"$DIAGTOP" heap --json --diff "$TMP/h1.json" "$P" >"$TMP/h2.json"
check "the top row by growth is remember_names (the caller), its estimate within 25% of the $TRUTH bytes" json_eval \
    "$TMP/h2.json" "
    last['rows'][0]['name'] == 'remember_names' and abs(last['rows'][0]['delta_bytes'] / $TRUTH - 1) < 0.25 or
    print('  the top rows by growth:', [(r['name'], r['delta_bytes']) for r in last['rows'][:3]], file=sys.stderr)"
check "... its stack goes through sqlite: a hidden wrapper as libsqlite3.so...+0x..., then sqlite3_mprintf" \
    json_eval "$TMP/h2.json" "
    (lambda fs: fs[0].startswith('libsqlite3.so') and '+0x' in fs[0] and 'sqlite3_mprintf' in fs and
        fs[fs.index('sqlite3_mprintf') + 1] == 'remember_names')([f['function'] for f in last['rows'][0]['stack']])"
check "no row is named after a frame inside libsqlite3 (every row is sqlite's caller)" json_eval "$TMP/h2.json" "
    not [r['name'] for r in last['rows'] if r['name'].startswith('libsqlite3') or r['name'].startswith('sqlite3')]"
check "the queries' allocations (freed again) grew by under 10% of the leak" json_eval "$TMP/h2.json" "
    all(abs(r['delta_bytes']) < 0.10 * $TRUTH for r in last['rows'] if r['name'] != 'remember_names')"
"$DIAGTOP" heap --diff "$TMP/h1.json" "$P" >"$TMP/h2.txt"
check "text: remember_names first in the growth table" bash -c "
    grep -A1 -E '^ +bytes +\+bytes' '$TMP/h2.txt' | tail -1 | grep -q 'remember_names$'"

# --drop-frames: the user's own wrapper (pprof's rule: the whole name, and from the outermost frame inward)
"$DIAGTOP" heap --json --drop-frames 'remember_.*' "$P" >"$TMP/drop.json"
check "--drop-frames 'remember_.*': the leak's row goes to remember_names' caller, main" json_eval "$TMP/drop.json" "
    last['rows'][0]['name'] == 'main' and not any(r['name'] == 'remember_names' for r in last['rows'])"
"$DIAGTOP" heap --json --drop-frames 'remember' "$P" >"$TMP/nodrop.json"
check "... a regex that matches only part of a name drops nothing" json_eval "$TMP/nodrop.json" "
    last['rows'][0]['name'] == 'remember_names'"
check "a bad regex is refused before asking" bash -c "
    ! '$DIAGTOP' heap --drop-frames 'a(' $P 2>'$TMP/bad.err' && grep -q 'not an extended regular expression' '$TMP/bad.err'"
mkdir -p "$TMP/home/diagtop"
echo 'drop_frames=remember_names|main' >"$TMP/home/diagtop/config"
XDG_CONFIG_HOME="$TMP/home" "$DIAGTOP" heap --json "$P" >"$TMP/conf.json"
check "config drop_frames= does the same (main dropped too: __libc_start_call_main)" json_eval "$TMP/conf.json" "
    last['rows'][0]['name'] == '__libc_start_call_main'"

# the API: the same rule, with serve's --drop-frames
. "$ROOT/tests/tools/serve_lib.sh"
api_top() { # the name of the top row of GET .../heap is $1
    [ "$(code GET "/api/processes/$P/heap" -H "$AUTH_ADMIN")" = 200 ] && json_eval "$TMP/body" "last['rows'][0]['name'] == '$1'"
}
serve_start server --tokens "$TOKENS" || fail "server did not start"
check "API: .../heap names the leak's row remember_names too" api_top remember_names
serve_stop
serve_start dropper --tokens "$TOKENS" --drop-frames 'remember_.*' || fail "server did not start"
check "API under serve --drop-frames 'remember_.*': the row is main" api_top main
serve_stop
finish
