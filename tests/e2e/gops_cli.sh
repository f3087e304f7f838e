#!/usr/bin/env bash
# The gops provider through the CLI, against the Go target serving the agent's protocol: goroutines parked in
# known functions, memstats with units (new and old field names), a GC and setgc, the heap profile (growHeap's
# site) and a CPU profile (burnLeaf), both saved 0600 and decoded to the same numbers as `go tool pprof -top`.
. "$(dirname "$0")/../lib.sh"

mkdir -p "$TMP/gops" "$TMP/out"
export DIAGTOP_DUMP_DIR="$TMP/out" # where heap and CPU profiles are saved
start_target gopsy env GOPS_CONFIG_DIR="$TMP/gops" GOPSY_CPU_SECONDS=2 "$TARGETS/gopsy"; G=$TARGET_PID
start_target old env GOPS_CONFIG_DIR="$TMP/gops" "$TARGETS/gopsy" -old-memstats; OLD=$TARGET_PID
wait_ready gopsy && wait_ready old || fail "targets did not start"

# ---- stack ----
"$DIAGTOP" stack --json "$G" >"$TMP/stack.json" 2>"$TMP/stack.err"
check "stack: answered by gops" json_eval "$TMP/stack.json" "
    last['provider'] == 'gops' and last['pid'] == $G and last['request_ms'] >= 0"
check "stack: nothing on stderr" test ! -s "$TMP/stack.err"
check "stack: a goroutine blocked on a channel receive in main.parkedReceive, created by main.main" \
    json_eval "$TMP/stack.json" "
    any(t['state'] == 'chan receive' and t['frames'][0]['function'] == 'main.parkedReceive' and
        t['frames'][0]['file'].endswith('/gopsy/main.go') and t['frames'][0]['line'] > 0 and
        t['wait_seconds'] is None and t['created_by'].startswith('main.main in ') and t['id'] > 1
        for t in last['threads'])"
check "stack: one asleep in time.Sleep called from main.parkedSleep" json_eval "$TMP/stack.json" "
    any(t['state'] == 'sleep' and [f['function'] for f in t['frames']][:2] == ['time.Sleep', 'main.parkedSleep']
        for t in last['threads'])"
"$DIAGTOP" stack "$G" >"$TMP/stack.txt"
check "stack text: from gops, with the goroutines" bash -c "grep -q 'from gops' '$TMP/stack.txt' &&
    grep -q 'main.parkedReceive' '$TMP/stack.txt'"

# ---- memstats ----
"$DIAGTOP" memstats --json "$G" >"$TMP/mem.json"
check "memstats: the runtime's section from gops with exact bytes (16 MiB retained at least)" \
    json_eval "$TMP/mem.json" "
    last['runtime']['provider'] == 'gops' and
    last['runtime']['sections']['memstats']['heap_alloc'] >= 16 << 20 and
    last['runtime']['units']['heap_alloc'] == 'bytes' and last['runtime']['units']['mallocs'] == 'count' and
    last['runtime']['units']['gc_pause_total'] == 'nanoseconds' and
    last['runtime']['units']['gc_cpu_fraction'] == 'ratio' and
    last['runtime']['sections']['memstats']['enable_gc'] is True and
    last['runtime']['sections']['memstats']['next_gc'] > 0 and
    len(last['runtime']['sections']['memstats']) == 31"
check "memstats: stats and version in section runtime" json_eval "$TMP/mem.json" "
    last['runtime']['sections']['runtime']['goroutines'] >= 4 and
    last['runtime']['sections']['runtime']['os_threads'] >= 1 and
    last['runtime']['sections']['runtime']['gomaxprocs'] >= 1 and
    last['runtime']['sections']['runtime']['version'].startswith('go1.')"
check "memstats: every JSON key is snake_case (gops' labels such as 'OS threads' are keys os_threads)" \
    json_eval "$TMP/mem.json" "not bad_keys(last)"
"$DIAGTOP" memstats "$G" >"$TMP/mem.txt"
check "memstats text: gops' own labels" bash -c "grep -Eq '^  OS threads +[0-9]' '$TMP/mem.txt' &&
    grep -Eq '^  heap-alloc ' '$TMP/mem.txt'"
"$DIAGTOP" memstats --json "$OLD" >"$TMP/old.json"
check "memstats: an old agent's stack-mspan-inuse is mspan-in-use; no buck-hash-sys" json_eval "$TMP/old.json" "
    last['runtime']['sections']['memstats']['mspan_in_use'] > 0 and
    'stack_mspan_inuse' not in last['runtime']['sections']['memstats'] and
    'buck_hash_sys' not in last['runtime']['sections']['memstats']"

# ---- gc, setgc ----
"$DIAGTOP" gc --json "$G" >"$TMP/gc.json"
check "gc: heap before and after, the agent's ok" json_eval "$TMP/gc.json" "
    last['provider'] == 'gops' and last['heap_before'] >= 16 << 20 and last['heap_after'] > 0 and
    last['message'] == 'ok'"
"$DIAGTOP" gc --percent 50 --json "$G" >"$TMP/setgc.json"
"$DIAGTOP" gc --percent 100 --json "$G" >"$TMP/setgc2.json"
check "setgc: the agent's own sentence, and the previous value back" bash -c "
    python3 -c '
import json, sys
a = json.load(open(\"$TMP/setgc.json\")); b = json.load(open(\"$TMP/setgc2.json\"))
assert a[\"message\"] == \"New GC percent set to 50. Previous value was 100.\", a
assert b[\"message\"] == \"New GC percent set to 100. Previous value was 50.\", b
assert a[\"heap_before\"] is None'"

# ---- heap profile ----
"$DIAGTOP" heap --json "$G" >"$TMP/heap.json"
check "heap: allocation sites, growHeap's on top with its whole stack" json_eval "$TMP/heap.json" "
    last['provider'] == 'gops' and last['kind'] == 'heap profile' and
    last['rows'][0]['name'] == 'main.growHeap' and last['rows'][0]['bytes'] >= 16 << 20 and
    last['rows'][0]['alloc_bytes'] >= last['rows'][0]['bytes'] and
    [f['function'] for f in last['rows'][0]['stack']][:2] == ['main.growHeap', 'main.main'] and
    last['total_bytes'] == sum(r['bytes'] for r in last['rows'])"
HEAP_FILE=$(python3 -c "import json; print(json.load(open('$TMP/heap.json'))['saved_path'] or '')")
check "heap: saved as heap.gopsy.PID.<time>.pb.gz, mode 0600" bash -c "
    [[ \$(basename '$HEAP_FILE') =~ ^heap\.gopsy\.$G\.[0-9]{8}-[0-9]{6}\.pb\.gz$ ]] &&
    [ \$(stat -c %a '$HEAP_FILE') = 600 ]"

# go tool pprof's flat column by function is the sum of the sites whose innermost frame is that function.
pprof_top() { # FILE SAMPLE_INDEX UNIT: "function flat cum" lines
    GOCACHE="$TMP/gocache" go tool pprof -top -nodecount=100000 -nodefraction=0 -edgefraction=0 \
        -sample_index="$2" -unit="$3" "$1" 2>/dev/null | awk -v u="$3" '
        started && NF >= 6 { f = $1; c = $4; sub(u "$", "", f); sub(u "$", "", c); n = $6;
                             for (i = 7; i <= NF; i++) n = n " " $i; sub(/ \(inline\)$/, "", n)
                             print n "\t" f "\t" c }
        $1 == "flat" { started = 1 }'
}
pprof_top "$HEAP_FILE" inuse_space B >"$TMP/heap.top"
check "heap: bytes per innermost function are go tool pprof -top's flat" python3 - "$TMP/heap.json" "$TMP/heap.top" <<'PY'
import json, sys, collections
doc = json.load(open(sys.argv[1]))
ours = collections.Counter()
for r in doc["rows"]:
    ours[r["name"]] += r["bytes"]
theirs = {l.split("\t")[0]: int(l.split("\t")[1]) for l in open(sys.argv[2]) if l.strip()}
theirs = {k: v for k, v in theirs.items() if v}
ours = {k: v for k, v in ours.items() if v}
if ours != theirs or not ours:
    print("  ours:", ours, "\n  pprof:", theirs, file=sys.stderr)
    sys.exit(1)
PY

# ---- CPU profile (GOPSY_CPU_SECONDS=2 instead of the agent's 30) ----
"$DIAGTOP" profile --json "$G" >"$TMP/cpu.json" 2>"$TMP/cpu.err"
check "profile: burnLeaf on top by flat, burnCPU by cum, in nanoseconds" json_eval "$TMP/cpu.json" "
    last['provider'] == 'gops' and last['format'] == 'pprof' and last['unit'] == 'nanoseconds' and
    last['rows'][0]['function'] == 'main.burnLeaf' and 1.5 < last['seconds'] < 10 and
    any(r['function'] == 'main.burnCPU' and r['cum'] >= last['rows'][0]['flat'] for r in last['rows'])"
CPU_FILE=$(python3 -c "import json; print(json.load(open('$TMP/cpu.json'))['saved_path'] or '')")
check "profile: saved as cpu.gopsy.PID.<time>.pb.gz, mode 0600" bash -c "
    [[ \$(basename '$CPU_FILE') =~ ^cpu\.gopsy\.$G\.[0-9]{8}-[0-9]{6}\.pb\.gz$ ]] &&
    [ \$(stat -c %a '$CPU_FILE') = 600 ]"
pprof_top "$CPU_FILE" cpu ns >"$TMP/cpu.top"
check "profile: every function's flat and cum are go tool pprof -top's" python3 - "$TMP/cpu.json" "$TMP/cpu.top" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
ours = {r["function"]: (r["flat"], r["cum"]) for r in doc["rows"]}
theirs = {l.split("\t")[0]: (int(l.split("\t")[1]), int(l.split("\t")[2])) for l in open(sys.argv[2]) if l.strip()}
if ours != theirs or not ours:
    print("  ours:", ours, "\n  pprof:", theirs, file=sys.stderr)
    sys.exit(1)
PY
"$DIAGTOP" profile "$G" >"$TMP/cpu.txt" 2>&1
check "profile text: names burnLeaf and the saved file" bash -c "grep -q main.burnLeaf '$TMP/cpu.txt' &&
    grep -q 'cpu.gopsy.$G' '$TMP/cpu.txt'"
check "profile text: pprof -top's columns (flat flat% sum% cum cum% function file), lined up on every row" \
    profile_aligned "$TMP/cpu.txt"
check "each profile is a file of its own" bash -c "[ \$(ls '$TMP/out'/cpu.gopsy.$G.* | wc -l) = 2 ]"
check "no partial files left" bash -c "! ls -a '$TMP/out' | grep -q partial"

# ---- an agent on another address than 127.0.0.1 (Options.Addr): dialled where its socket is bound ----
for addr in "[::1]:0" ":0"; do
    start_target "gopsy-$addr" env GOPS_CONFIG_DIR="$TMP/gops" "$TARGETS/gopsy" -listen "$addr"; A=$TARGET_PID
    wait_ready "gopsy-$addr" || fail "gopsy -listen $addr did not start"
    "$DIAGTOP" memstats --json "$A" >"$TMP/mem-addr.json" 2>"$TMP/mem-addr.err"
    check "an agent listening on $addr: memstats from gops" json_eval "$TMP/mem-addr.json" "
        last['runtime']['provider'] == 'gops' and last['runtime']['sections']['memstats']['heap_alloc'] > 0"
    check "an agent listening on $addr: RUNTIME go*" bash -c "
        '$DIAGTOP' -b -n 1 -p $A | grep -qE '^ *$A .* go\\* '"
    stop_pid "$A"
done

# ---- an agent in another network namespace (a container's loopback): reached from inside it ----
# A new network namespace has its loopback down: brought up (SIOCSIFFLAGS: UP, LOOPBACK, RUNNING), then the program.
LO_UP_EXEC='
import fcntl, os, socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
fcntl.ioctl(s, 0x8914, struct.pack("16sH22x", b"lo", 0x1 | 0x8 | 0x40))
os.execv(sys.argv[1], sys.argv[1:])'
if unshare -n true 2>/dev/null; then
    start_target gopsy-netns env GOPS_CONFIG_DIR="$TMP/gops" unshare -n python3 -c "$LO_UP_EXEC" "$TARGETS/gopsy"
    N=$TARGET_PID
    wait_ready gopsy-netns || fail "gopsy in its own network namespace did not start: $(cat "$TMP/gopsy-netns.err")"
    check "another network namespace: it is not ours" test "$(readlink /proc/$N/ns/net)" != "$(readlink /proc/self/ns/net)"
    "$DIAGTOP" memstats --json "$N" >"$TMP/mem-netns.json" 2>"$TMP/mem-netns.err"
    check "another network namespace: memstats from its gops agent" json_eval "$TMP/mem-netns.json" "
        last['runtime']['provider'] == 'gops' and last['runtime']['sections']['memstats']['heap_alloc'] > 0"
    "$DIAGTOP" stack "$N" >"$TMP/stack-netns.txt" 2>&1
    check "another network namespace: goroutines from gops" grep -q 'main.parkedReceive' "$TMP/stack-netns.txt"
    stop_pid "$N"
else
    echo "  (no network namespaces here: unshare -n is refused; the container case is not run)"
fi
# Without root, the namespace cannot be entered: the request says so (a user's own container, through a user
# namespace, is the case where the agent is visible but unreachable).
AS_NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all"
if $AS_NOBODY unshare -rn true 2>/dev/null; then
    chmod o+x "$TMP" && mkdir -p "$TMP/gops-nobody" && chmod 777 "$TMP/gops-nobody" # nobody writes its port file there
    start_target gopsy-userns env GOPS_CONFIG_DIR="$TMP/gops-nobody" $AS_NOBODY unshare -rn python3 -c "$LO_UP_EXEC" "$TARGETS/gopsy"
    U=$TARGET_PID
    wait_ready gopsy-userns || fail "gopsy in a user's own namespaces did not start: $(cat "$TMP/gopsy-userns.err")"
    $AS_NOBODY "$DIAGTOP" memstats "$U" >"$TMP/mem-userns.txt" 2>&1
    check "another network namespace, not root: the reason says entering it needs root" \
        grep -q "network namespace of process $U) cannot be reached: entering .* needs root" "$TMP/mem-userns.txt"
    stop_pid "$U"
else
    echo "  (no unprivileged user namespaces here: the not-root case is not run)"
fi
finish
