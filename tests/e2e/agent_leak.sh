#!/usr/bin/env bash
# The native agent finds leaks: targets that leak from a known line (C, and C++ through new[]) next to a steady
# allocator, under LD_PRELOAD=libdiagtop-agent.so. RUNTIME says native*; memstats has the allocator's and the agent's
# numbers; after two snapshots the leak site is the top row by growth, with an estimate within 20% of the bytes
# leaked in between, and the steady site's growth is near 0; --watch gives growth per minute within 20% of a known
# rate; snapshots are saved 0600 as pprof that `go tool pprof -base` reads; G is malloc_trim with RSS before and
# after. (Sampling every 32 KiB on average, so that a 16 MiB leak is ~500 samples: the estimate's spread is ~5%.)
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/targets/agent/lib.sh"
agent_targets || { fail "cannot build the agent's targets"; finish; }
mkdir -p "$TMP/out"
export DIAGTOP_DUMP_DIR="$TMP/out"

start_agent leaky DIAGTOP_AGENT_SAMPLE_INTERVAL=32768 "$AT/leaky"; L=$TARGET_PID
start_agent cxx DIAGTOP_AGENT_SAMPLE_INTERVAL=32768 "$AT/newleak"; X=$TARGET_PID
start_target plain "$TARGETS/sleeper"; S=$TARGET_PID
wait_ready leaky && wait_ready cxx && wait_socket "$L" && wait_socket "$X" || fail "targets did not start"

# ---- RUNTIME ----
"$DIAGTOP" -b -n 1 -d 0.1 --json -p "$L,$S" >"$TMP/rt.json"
check "RUNTIME: a program with the agent is native with an agent; one without has none" json_eval "$TMP/rt.json" "
    proc($L)['runtime'] == 'native' and proc($L)['agent'] is True and proc($S)['agent'] is False"
"$DIAGTOP" -b -n 1 -d 0.1 -p "$L,$S" --columns pid,runtime,command >"$TMP/rt.txt"
check "RUNTIME text: native* with the agent, - without" bash -c "grep -Eq '^ *$L native\* ' '$TMP/rt.txt' &&
    grep -Eq '^ *$S - ' '$TMP/rt.txt'"
check "the agent's socket is 0600 in a 0700 directory" bash -c "
    [ \$(stat -c %a '$AGENT_DIR/agent.$L.sock') = 600 ] && [ \$(stat -c %a '$AGENT_DIR') = 700 ]"

# ---- memstats ----
"$DIAGTOP" memstats --json "$L" >"$TMP/mem.json"
check "memstats: the allocator's view (mallinfo2, malloc_info) from the agent, in bytes" json_eval "$TMP/mem.json" "
    last['runtime']['provider'] == 'agent' and
    last['runtime']['sections']['malloc']['allocator'].startswith('glibc-') and
    last['runtime']['sections']['malloc']['in_use'] > 4 << 20 and
    last['runtime']['sections']['malloc']['arenas'] >= 1 and
    last['runtime']['sections']['malloc']['heap_system'] >= last['runtime']['sections']['malloc']['free'] and
    last['runtime']['units']['in_use'] == 'bytes' and last['runtime']['units']['free_chunks'] == 'count'"
check "memstats: every JSON key is snake_case" json_eval "$TMP/mem.json" "not bad_keys(last)"
check "memstats: the agent's own counts and rates, its sampling interval" json_eval "$TMP/mem.json" "
    last['runtime']['sections']['agent']['mallocs'] > 1000 and
    last['runtime']['sections']['agent']['frees'] > 1000 and
    last['runtime']['sections']['agent']['mallocs_per_second'] > 1000 and
    last['runtime']['sections']['agent']['interval'] == 32768 and
    last['runtime']['sections']['agent']['heap_profile'] is True and
    0 < last['runtime']['sections']['agent']['table_bytes'] <= last['runtime']['sections']['agent']['table_cap']"

# ---- two snapshots around a known leak ----
"$DIAGTOP" heap --json "$L" >"$TMP/h1.json" 2>"$TMP/h1.err"
check "heap: answered by the agent, allocation sites with stacks" json_eval "$TMP/h1.json" "
    last['provider'] == 'agent' and last['kind'] == 'heap profile' and
    any(r['name'] == 'steady_block' for r in last['rows'])"
kill -USR1 "$L"
wait_line leaky '^leaked ' || fail "no burst"
TRUTH=$(sed -n 's/^leaked //p' "$TMP/leaky.out" | tail -1)
"$DIAGTOP" heap --json --diff "$TMP/h1.json" "$L" >"$TMP/h2.json"
check "the leak site is the top row by growth, its estimate within 20% of the $TRUTH bytes leaked" json_eval \
    "$TMP/h2.json" "
    last['rows'][0]['name'] == 'leak_block' and abs(last['rows'][0]['delta_bytes'] / $TRUTH - 1) < 0.20 and
    last['rows'][0]['delta_count'] > 0"
check "... with its whole stack, named: leak_block, leak_bytes, main, with files and lines" json_eval "$TMP/h2.json" "
    [f['function'] for f in last['rows'][0]['stack']][:3] == ['leak_block', 'leak_bytes', 'main'] and
    last['rows'][0]['stack'][0]['file'].endswith('leaky.c') and last['rows'][0]['stack'][0]['line'] > 0"
check "the steady site grew by nearly nothing (under 15% of the leak)" json_eval "$TMP/h2.json" "
    [abs(r['delta_bytes']) < 0.15 * $TRUTH for r in last['rows'] if r['name'] == 'steady_block'] == [True]"
H1=$(python3 -c "import json; print(json.load(open('$TMP/h1.json'))['saved_path'])")
H2=$(python3 -c "import json; print(json.load(open('$TMP/h2.json'))['saved_path'])")
check "snapshots saved as heap.leaky.PID.<time>.pb.gz, 0600" bash -c "
    [[ \$(basename '$H1') =~ ^heap\.leaky\.$L\.[0-9]{8}-[0-9]{6}(-[0-9]+)?\.pb\.gz$ ]] &&
    [ \$(stat -c %a '$H1') = 600 ] && [ \$(stat -c %a '$H2') = 600 ]"
go tool pprof -top -sample_index=inuse_space -base "$H1" "$H2" >"$TMP/pprof.txt" 2>&1
check "go tool pprof -base OLD NEW: leak_block on top" bash -c "
    grep -A1 -E '^ +flat ' '$TMP/pprof.txt' | tail -1 | grep -q ' leak_block$'"
"$DIAGTOP" heap --diff "$TMP/h1.json" "$L" >"$TMP/h2.txt"
check "text: the growth table, leak_block first" bash -c "
    grep -q 'sorted by growth' '$TMP/h2.txt' && grep -A1 -E '^ +bytes +\+bytes' '$TMP/h2.txt' | tail -1 | grep -q 'leak_block$'"

# ---- C++: new[] ----
"$DIAGTOP" heap --json "$X" >"$TMP/x1.json"
kill -USR1 "$X"
wait_line cxx '^leaked ' || fail "no C++ burst"
XTRUTH=$(sed -n 's/^leaked //p' "$TMP/cxx.out" | tail -1)
"$DIAGTOP" heap --json --diff "$TMP/x1.json" "$X" >"$TMP/x2.json"
check "C++: the site is grow_cache (operator new[] is the allocation function), within 20% of $XTRUTH bytes" \
    json_eval "$TMP/x2.json" "
    last['rows'][0]['name'] == 'grow_cache' and abs(last['rows'][0]['delta_bytes'] / $XTRUTH - 1) < 0.20 and
    last['rows'][0]['stack'][0]['function'].startswith('operator new')"
check "C++: the strings churned by new and delete do not grow" json_eval "$TMP/x2.json" "
    all(abs(r['delta_bytes']) < 0.15 * $XTRUTH for r in last['rows'][1:])"

# ---- growth per minute with --watch ----
RATE=2097152 # 2 MiB/s: 120 MiB a minute
start_agent rate DIAGTOP_AGENT_SAMPLE_INTERVAL=32768 "$AT/leaky" --rate "$RATE"; R=$TARGET_PID
wait_ready rate && wait_socket "$R" || fail "rate target did not start"
"$DIAGTOP" heap --json --watch 2 --count 3 "$R" >"$TMP/watch.json"
check "--watch 2 --count 3: three documents, the first against nothing, the last against the first" json_eval \
    "$TMP/watch.json" "
    len(docs) == 3 and 'minutes_since_first' not in docs[0] and 3.9 / 60 < docs[2]['minutes_since_first'] < 10 / 60 and
    'delta_bytes_prev' in docs[2]['rows'][0]"
check "... growth per minute of the leak site within 20% of 120 MiB/min" json_eval "$TMP/watch.json" "
    last['rows'][0]['name'] == 'leak_block' and abs(last['rows'][0]['bytes_per_minute'] / ($RATE * 60) - 1) < 0.20"
"$DIAGTOP" heap --watch 0.5 --count 2 "$R" >"$TMP/watch.txt"
check "--watch in text: a table per snapshot, the second with changes" bash -c "
    [ \$(grep -c '^Heap of $R' '$TMP/watch.txt') = 2 ] && grep -q 'changes since the first snapshot' '$TMP/watch.txt'"
check "--count without --watch is refused" bash -c "! '$DIAGTOP' heap --count 2 $R 2>/dev/null"

# ---- G: malloc_trim ----
"$DIAGTOP" gc --json "$L" >"$TMP/gc.json"
check "gc: malloc_trim(0) by the agent, RSS before and after in its words, the heap in use unchanged" json_eval \
    "$TMP/gc.json" "
    last['provider'] == 'agent' and 'malloc_trim(0)' in last['message'] and 'RSS' in last['message'] and
    last['heap_before'] > 0 and last['heap_after'] > 0"
check "gc --percent is for Go" bash -c "'$DIAGTOP' gc --percent 50 $L 2>&1 | grep -q 'no GC target'"
finish
