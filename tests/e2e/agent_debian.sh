#!/usr/bin/env bash
# The agent under programs nobody here wrote, as Debian ships them (stripped; the stacks unwind from .eh_frame and
# are named from their dynamic symbols): sqlite3 running a bulk insert script and python3 running an
# allocation-heavy script give the same output, errors and exit status with and without the agent, and a heap
# profile taken while they run names their allocation sites. Each reads its input in two parts: the snapshot is taken
# while it waits for the second (blocked reading its stdin, with the first part done).
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/targets/agent/lib.sh"
[ -f "$AGENT_LIB" ] || { fail "no $AGENT_LIB"; finish; }
mkdir -p "$TMP/out"
export DIAGTOP_DUMP_DIR="$TMP/out"
SQLITE=/usr/bin/sqlite3
PYTHON=/usr/bin/python3
for p in "$SQLITE" "$PYTHON"; do [ -x "$p" ] || { fail "$p is not installed (scripts/deps.sh --test)"; finish; }; done

cat >"$TMP/bulk.sql" <<'EOF'
PRAGMA cache_size=-65536;
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v REAL, pad TEXT);
BEGIN;
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 150000)
INSERT INTO t SELECT x, 'name-' || x, x * 1.5, printf('%0200d', x) FROM c;
COMMIT;
CREATE INDEX t_name ON t(name);
EOF
cat >"$TMP/bulk2.sql" <<'EOF'
CREATE INDEX t_pad ON t(pad);
SELECT count(*), sum(v), sum(length(name)) FROM t;
SELECT name FROM t WHERE id % 100000 = 0 ORDER BY name;
SELECT count(*) FROM t a JOIN t b ON b.id = a.id / 2 WHERE a.pad > b.pad;
SELECT * FROM missing_table;
EOF
cat >"$TMP/alloc.py" <<'EOF'
import hashlib, sys
d, h = {}, hashlib.sha256()
for i in range(600000):
    s = str(i) * 3
    d[s] = [i, s.upper(), (i, i * 2), bytes(i % 700)]
    if i % 3 == 0:
        d.pop(str(i // 2) * 3, None)
    if i == 300000:
        sys.stdin.readline()  # the second part when told
for k in sorted(d)[:1000]:
    h.update(k.encode())
print(len(d), h.hexdigest())
print(sum(len(v[3]) for v in d.values()))
sys.exit(3)
EOF

echo go >"$TMP/go.txt"
cat "$TMP/bulk.sql" "$TMP/bulk2.sql" | "$SQLITE" -bail >"$TMP/sqlite.plain.out" 2>"$TMP/sqlite.plain.err"
echo $? >"$TMP/sqlite.plain.rc"
"$PYTHON" "$TMP/alloc.py" <"$TMP/go.txt" >"$TMP/python.plain.out" 2>"$TMP/python.plain.err"
echo $? >"$TMP/python.plain.rc"

# reading_stdin PID: waits (up to 60 s) until PID is blocked in read(0, ...).
reading_stdin() {
    local i
    for i in $(seq 600); do
        [[ $(cat "/proc/$1/syscall" 2>/dev/null) == "0 0x0 "* ]] && return 0
        sleep 0.1
    done
    return 1
}

# The same with the agent, its input through a FIFO: the first part, a heap snapshot while it waits for the rest,
# the rest. The agent is given to the program itself (not to a shell in front of it), so that its pid is the
# agent's from the start.
agent_run() { # NAME PART1 PART2 CMD...
    local name=$1 part1=$2 part2=$3
    shift 3
    mkfifo "$TMP/$name.fifo"
    start_target "$name" bash -c 'f=$1; shift; exec env DIAGTOP_AGENT_DIR="$AGENT_DIR" LD_PRELOAD="$AGENT_LIB" "$@" <"$f"' \
        _ "$TMP/$name.fifo" "$@"
    local pid=$TARGET_PID
    exec 7>"$TMP/$name.fifo"
    cat "$part1" >&7
    if wait_socket "$pid" && reading_stdin "$pid"; then
        "$DIAGTOP" heap --json "$pid" >"$TMP/$name.heap.json" 2>"$TMP/$name.heap.err"
        kill -0 "$pid" 2>/dev/null && echo running >"$TMP/$name.mid"
    fi
    cat "$part2" >&7
    exec 7>&-
    wait "$pid"
    echo $? >"$TMP/$name.rc"
}
export AGENT_DIR AGENT_LIB
: >"$TMP/empty"
agent_run sqlite "$TMP/bulk.sql" "$TMP/bulk2.sql" "$SQLITE" -bail
agent_run python "$TMP/empty" "$TMP/go.txt" "$PYTHON" "$TMP/alloc.py"

for n in sqlite python; do
    check "$n: the same output, errors and exit status ($(cat "$TMP/$n.plain.rc")) with the agent" bash -c "
        cmp -s '$TMP/$n.plain.out' '$TMP/$n.out' && cmp -s '$TMP/$n.plain.err' '$TMP/$n.err' &&
        [ \"\$(cat '$TMP/$n.plain.rc')\" = \"\$(cat '$TMP/$n.rc')\" ] && [ -s '$TMP/$n.plain.out' ]"
    check "$n: the heap profile was taken while it ran" test -f "$TMP/$n.mid"
done
check "sqlite3 exits 1 (the last statement fails) and python3 3: the statuses compared are real ones" bash -c "
    [ \$(cat '$TMP/sqlite.rc') = 1 ] && [ \$(cat '$TMP/python.rc') = 3 ]"
check "sqlite3's heap by site: the insert's pages, through sqlite3_step from the shell's main" json_eval \
    "$TMP/sqlite.heap.json" "
    last['provider'] == 'agent' and last['total_bytes'] > 1 << 20 and
    any('sqlite3_step' in [f['function'] for f in r['stack']] and
        r['stack'][-1]['function'] is not None for r in last['rows'] if r['bytes'] > 1 << 20)"
check "python3's heap by site: allocations under the interpreter's eval loop" json_eval "$TMP/python.heap.json" "
    last['provider'] == 'agent' and last['total_bytes'] > 1 << 20 and
    any(any(f['function'] in ('_PyEval_EvalFrameDefault', 'PyEval_EvalCode') for f in r['stack'])
        for r in last['rows'] if r['bytes'] > 0)"
check "nothing went wrong on diagtop's side" bash -c "! grep -v '^$' '$TMP/sqlite.heap.err' '$TMP/python.heap.err'"
finish
