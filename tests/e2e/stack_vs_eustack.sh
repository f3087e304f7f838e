#!/usr/bin/env bash
# Stacks as complete as eu-stack's on every kind of binary: a Go program (unwind tables only in .debug_frame,
# compressed DWARF without .debug_aranges), C built -O2 -fomit-frame-pointer, C with only .debug_frame, a stripped
# PIE whose debug info is in a separate file (debuglink), C++ throwing and catching in a loop, and the -O2 threads
# target. Each is stopped (SIGSTOP), so that eu-stack -i -s and diagtop see the same state, and compared frame by
# frame (tests/tools/compare_eustack.py); then the known call chains are checked by name and file:line.
. "$(dirname "$0")/../lib.sh"

UNWINDME=$ROOT/tests/targets/unwind/unwindme.c
line_of() { grep -n -- "$2" "$1" | head -1 | cut -d: -f1; }

# capture NAME PID: eu-stack and diagtop on the stopped target, into $TMP/NAME.eu and $TMP/NAME.json.
capture() {
    local i
    kill -STOP "$2"
    for i in $(seq 50); do [ "$(awk '{print $3}' "/proc/$2/stat")" = T ] && break; sleep 0.05; done
    timeout 60 eu-stack -i -s -p "$2" >"$TMP/$1.eu" 2>"$TMP/$1.eu.err"
    "$DIAGTOP" stack --native --json --cpu-sample 0 "$2" >"$TMP/$1.json" 2>"$TMP/$1.err"
    local rc=$?
    kill -CONT "$2"
    return $rc
}

# chain NAME THREAD FRAMES...: the thread named THREAD has these functions in a row (inlined calls included),
# each as function[@line] (line: of the function's frame in the source of the target).
chain() {
    local name=$1 thread=$2
    shift 2
    python3 - "$TMP/$name.json" "$thread" "$@" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1])); thread = sys.argv[2]
want = [(w.split("@")[0], int(w.split("@")[1]) if "@" in w else None) for w in sys.argv[3:]]
for t in doc["threads"]:
    if t["name"] != thread and not (thread == "main" and t["tid"] == doc["pid"]):
        continue
    got = [(f["function"], f.get("line")) for f in t["frames"]]
    for i in range(len(got) - len(want) + 1):
        if all(g[0] == w[0] and (w[1] is None or g[1] == w[1]) for g, w in zip(got[i:], want)):
            sys.exit(0)
    print("  %s: %s" % (thread, got), file=sys.stderr)
    sys.exit(1)
print("  no thread %s" % thread, file=sys.stderr)
sys.exit(1)
PY
}

for kind in unwind-nofp unwind-debugframe unwind-stripped threads; do
    start_target "$kind" "$TARGETS/$kind" 3; P=$TARGET_PID
    wait_ready "$kind" || fail "$kind did not start"
    sleep 0.2
    check "$kind: captured while stopped" capture "$kind" "$P"
    check "$kind: at least eu-stack's frames, names and file:line" \
        python3 "$ROOT/tests/tools/compare_eustack.py" "$TMP/$kind.eu" "$TMP/$kind.json"
    # The first run on a box (nothing inflated, no frames kept) and the next one (both kept) compare the same.
    mkdir -p "$TMP/fresh-$kind"
    XDG_CACHE_HOME=$TMP/fresh-$kind capture "$kind-cold" "$P" &&
        check "$kind, first run ever: at least eu-stack's frames, names and file:line" \
            python3 "$ROOT/tests/tools/compare_eustack.py" "$TMP/$kind-cold.eu" "$TMP/$kind-cold.json"
    for _ in $(seq 50); do ls "$TMP/fresh-$kind"/diagtop/debug/*.frames >/dev/null 2>&1 && break; sleep 0.1; done
    XDG_CACHE_HOME=$TMP/fresh-$kind capture "$kind-warm" "$P" &&
        check "$kind, with the frames kept by the first: at least eu-stack's frames, names and file:line" \
            python3 "$ROOT/tests/tools/compare_eustack.py" "$TMP/$kind-warm.eu" "$TMP/$kind-warm.json"
    if [ "$kind" = threads ]; then
        # The first run inflated only the units of libc's .debug_info its frames needed; the copy it kept for the
        # next runs was inflated whole, in the background.
        for _ in $(seq 100); do ls "$TMP/fresh-$kind"/diagtop/debug/*.debug >/dev/null 2>&1 && break; sleep 0.1; done
        check "threads: the debug copy the first run kept has every section whole" \
            python3 "$ROOT/tests/tools/debug_copy_whole.py" "$TMP/fresh-$kind/diagtop/debug"
        continue
    fi
    check "$kind: a frameless leaf keeps its caller (spin_leaf <- spin_middle <- spinner)" chain "$kind" spinner \
        "spin_leaf@$(line_of "$UNWINDME" 's += i ^')" "spin_middle@$(line_of "$UNWINDME" 'sink += spin_leaf')" \
        "spinner@$(line_of "$UNWINDME" '    spin_middle();')" start_thread
    check "$kind: a thread blocked in read() down to start_thread" chain "$kind" reader \
        "read_blocked@$(line_of "$UNWINDME" 'while (read(pipe_fds')" reader start_thread
    check "$kind: through glibc's qsort back to the caller" bash -c "
        $(declare -f chain); TMP='$TMP'; chain '$kind' sorter compare_parked && \
        python3 -c \"import json; t=[t for t in json.load(open('$TMP/$kind.json'))['threads'] if t['name']=='sorter'][0];
f=[x['function'] for x in t['frames']]; assert f.index('sorter') > f.index('__GI___qsort_r') > f.index('compare_parked'), f\""
    check "$kind: the main thread in main_wait <- main" chain "$kind" main main_wait main
done

start_target throwing "$TARGETS/throwing"; P=$TARGET_PID
wait_ready throwing || fail "throwing did not start"
for round in 1 2 3; do # the thrower is caught at a different point of its throw each time
    check "C++ round $round: captured while stopped" capture throwing "$P"
    check "C++ round $round: at least eu-stack's frames" \
        python3 "$ROOT/tests/tools/compare_eustack.py" "$TMP/throwing.eu" "$TMP/throwing.json"
done
check "C++: demangled names of a namespaced class's methods" chain throwing parked \
    "diag::Parker::wait_forever()" "diag::Parker::park(int)" "diag::Parker::park(int)"

GOSRC=$ROOT/tests/targets/gostacks/main.go
start_target gostacks env GOSTACKS_TRACE="$TMP/gostacks.trace" "$TARGETS/gostacks"; P=$TARGET_PID
wait_ready gostacks || fail "the Go target did not start"
check "Go: captured while stopped" capture gostacks "$P"
check "Go: at least eu-stack's frames" python3 "$ROOT/tests/tools/compare_eustack.py" "$TMP/gostacks.eu" "$TMP/gostacks.json"

# Go programs are named and unwound from their own tables (.gopclntab); DIAGTOP_NO_GOPCLNTAB=1 reads their DWARF
# as for any program. Both, on the same stopped state, frame by frame; and against what the program's own
# runtime.Stack says of the goroutines locked to the reader threads.
same_as_dwarf() {
    local name=$1 pid=$2
    kill -STOP "$pid"
    for i in $(seq 50); do [ "$(awk '{print $3}' "/proc/$pid/stat")" = T ] && break; sleep 0.05; done
    "$DIAGTOP" stack --native --json --cpu-sample 0 "$pid" >"$TMP/$name.go.json" &&
        DIAGTOP_NO_GOPCLNTAB=1 "$DIAGTOP" stack --native --json --cpu-sample 0 "$pid" >"$TMP/$name.dwarf.json"
    local rc=$?
    kill -CONT "$pid"
    [ $rc = 0 ] && python3 - "$TMP/$name.go.json" "$TMP/$name.dwarf.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda d: {t["tid"]: (t["frames"], t["error"]) for t in d["threads"]}
ka, kb = key(a), key(b)
bad = [tid for tid in ka if ka[tid] != kb.get(tid)]
for tid in bad:
    print("  thread %d:\n   tables %s\n   DWARF  %s" % (tid, ka[tid], kb.get(tid)), file=sys.stderr)
sys.exit(1 if bad or not ka or ka.keys() != kb.keys() else 0)
PY
}
check "Go: the same frames from the program's tables as from its DWARF" same_as_dwarf gostacks "$P"
check "Go: the reader threads' frames are the ones runtime.Stack gives their goroutines" \
    python3 - "$TMP/gostacks.trace" "$TMP/gostacks.json" <<'PY'
import json, re, sys
# runtime.Stack: "goroutine N [syscall, locked to thread]:", then per frame "name(args)" and "\tfile:line +0x..".
gs, cur = [], None
for line in open(sys.argv[1]):
    if line.startswith("goroutine "):
        cur = []
        gs.append(cur)
    elif cur is not None and line.startswith("\t") and cur and cur[-1][1] is None:
        m = re.match(r"\t(\S+):(\d+)", line)
        cur[-1] = (cur[-1][0], m.group(1), int(m.group(2)))
    elif cur is not None and re.match(r"^\S+\(.*\)$", line.strip()) and not line.startswith("created by"):
        cur.append((line.strip().rsplit("(", 1)[0], None, None))
readers = [g for g in gs if any(f[0] == "main.blockedRead" for f in g)]
threads = [[(f["function"], f.get("file"), f.get("line")) for f in t["frames"]]
           for t in json.load(open(sys.argv[2]))["threads"] if any(f["function"] == "main.blockedRead" for f in t["frames"])]
if len(readers) != 2 or len(threads) != 2:
    sys.exit("  %d goroutines and %d threads in main.blockedRead" % (len(readers), len(threads)))
# The goroutine's first frame is where it entered the system call (its saved pc); the thread's is the call
# itself: the frames from the second on are return addresses in both, the same.
for g in readers:
    want = g[1:]
    if not any(t[i:i + len(want)] == want for t in threads for i in range(len(t))):
        sys.exit("  runtime.Stack %s\n  diagtop %s" % (want, threads))
PY
# The spinning goroutine runs on whichever thread, and now and then the scheduler preempts it: capture until it is
# caught in its leaf (at most 5 times).
spin_chain() {
    python3 - "$TMP/gostacks-spin.json" "$(line_of "$GOSRC" 'func spinLeaf')" "$(line_of "$GOSRC" 'sink += spinLeaf')" \
        "$(line_of "$GOSRC" 'go func() { spinMiddle() }()')" <<'PY'
import json, sys
leaf, middle, closure = map(int, sys.argv[2:5])
for t in json.load(open(sys.argv[1]))["threads"]:
    f = [(x["function"], x.get("line"), (x.get("file") or "").endswith("gostacks/main.go")) for x in t["frames"]]
    if (len(f) >= 3 and f[0][0] == "main.spinLeaf" and leaf < f[0][1] <= leaf + 5 and f[0][2] and
            f[1:3] == [("main.spinMiddle", middle, True), ("main.main.func1", closure, True)]):
        sys.exit(0)
sys.exit(1)
PY
}
for i in 1 2 3 4 5; do
    "$DIAGTOP" stack --native --json --cpu-sample 0 "$P" >"$TMP/gostacks-spin.json" && spin_chain && break
done
check "Go: spinLeaf <- spinMiddle <- the closure, with main.go lines (a frameless leaf keeps its caller)" spin_chain
check "Go: threads blocked in read(2) show syscall.Read (inlined) <- main.blockedRead <- main.reader" \
    python3 - "$TMP/gostacks.json" "$(line_of "$GOSRC" 'syscall.Read(fd, b')" <<'PY'
import json, sys
line = int(sys.argv[2]); n = 0
for t in json.load(open(sys.argv[1]))["threads"]:
    f = [(x["function"], x["inlined"], x.get("line")) for x in t["frames"]]
    for i in range(len(f) - 2):
        if f[i][:2] == ("syscall.Read", True) and f[i + 1] == ("main.blockedRead", False, line) and f[i + 2][0] == "main.reader":
            n += 1
sys.exit(0 if n == 2 else 1)
PY
# A thread caught inside the runtime's signal trampoline (sysmon preempts the spinner with SIGURG every 10 ms) may
# end in an honest error: a capture is taken again, up to three times.
runtime_roots() {
    python3 -c "
import json, sys
d = json.load(open('$1'))
bad = [(t['tid'], t['error'], [(f['function'], f['pc']) for f in t['frames']]) for t in d['threads'] if t['error']]
print('  ', bad, file=sys.stderr) if bad else None
sys.exit(0 if not bad and any(f['function'] == 'runtime.futexsleep' for t in d['threads'] for f in t['frames']) else 1)"
}
cp "$TMP/gostacks.json" "$TMP/gostacks-rt.json"
for i in 1 2; do
    runtime_roots "$TMP/gostacks-rt.json" && break
    "$DIAGTOP" stack --native --json --cpu-sample 0 "$P" >"$TMP/gostacks-rt.json"
done
check "Go: runtime threads unwind to their roots without an error" runtime_roots "$TMP/gostacks-rt.json"

start_target gopsy "$TARGETS/gopsy" -no-agent; P=$TARGET_PID
wait_ready gopsy || fail "gopsy did not start"
check "Go (gopsy, runtime/cgo linked in): the same frames from its tables as from its DWARF" same_as_dwarf gopsy "$P"
finish
