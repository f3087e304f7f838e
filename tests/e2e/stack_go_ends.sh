#!/usr/bin/env bash
# Every thread of a Go program ends cleanly: its last frame is where a thread's stack begins (runtime.mstart,
# runtime.goexit, runtime.clone, runtime.rt0_go; a stack switch, runtime.mcall), with no error, in text and in
# --json (its "error" is null). Without cgo (gostacks, static) and with it (gopsy: net makes it a cgo binary, whose
# threads enter runtime.mstart from crosscall_amd64, C without unwind info, where libdwfl used to stop with "no
# matching address range"). C stacks still end at _start / __clone3 without an error, and a stack that really
# stops in the middle of the code (jitspin: JIT code without unwind info) still says why.
. "$(dirname "$0")/../lib.sh"

OUTERMOST="runtime.mstart runtime.goexit runtime.rt0_go runtime.clone runtime.mcall runtime.systemstack
runtime.morestack clone __clone clone3 __clone3 _start start_thread __libc_start_main __libc_start_call_main"

# ends_clean JSON TEXT [no-stop]: every thread of both captures ends in an outermost frame without an error line
# (text: one block per thread, its last line a frame). With no-stop, threads listed as running are left out.
ends_clean() {
    python3 - "$1" "$2" "${3:-}" "$OUTERMOST" <<'PY'
import json, re, sys
path_json, path_text, no_stop, names = sys.argv[1], sys.argv[2], sys.argv[3] == "no-stop", sys.argv[4].split()
def outermost(f):
    return f is not None and (f in names or (f.endswith(".abi0") and f[:-5] in names))
bad = []
doc = json.load(open(path_json))
for t in doc["threads"]:
    if no_stop and (t["error"] or "").startswith("running:"):
        continue
    last = t["frames"][-1]["function"] if t["frames"] else None
    if t["error"] is not None or not outermost(last) or t["frames"][-1]["inlined"]:
        bad.append(("json", t["tid"], t["error"], [f["function"] for f in t["frames"]][-3:]))
blocks = open(path_text).read().split("\n\n")[1:]
for b in blocks:
    lines = b.strip("\n").split("\n")
    if no_stop and lines[-1].startswith("  (running:"):
        continue
    m = re.match(r"  #\d+\s+(\S+?)(\+0x[0-9a-f]+)?\s", lines[-1] + " ")
    if not m or not outermost(m.group(1)) or any(l.startswith("  (") for l in lines[1:]):
        bad.append(("text", lines[0], lines[-2:]))
if not doc["threads"] or len(blocks) < 2:
    bad.append(("too few threads", len(doc["threads"]), len(blocks)))
if bad:
    print("  not ending cleanly:", bad[:4], file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

# capture_clean NAME PID [--no-stop]: text (one block per thread) and JSON until both end cleanly. A capture is
# taken again, up to three times, as a thread may be caught inside the runtime's signal trampoline (sysmon
# preempts a spinning goroutine with SIGURG every 10 ms), where the unwind honestly fails.
capture_clean() {
    local name=$1 pid=$2 i
    shift 2
    for i in 1 2 3; do
        "$DIAGTOP" stack --native --no-group --cpu-sample 0 "$@" "$pid" >"$TMP/$name.txt" 2>"$TMP/$name.err" &&
            "$DIAGTOP" stack --native --cpu-sample 0 --json "$@" "$pid" >"$TMP/$name.json" 2>>"$TMP/$name.err" &&
            ends_clean "$TMP/$name.json" "$TMP/$name.txt" "${1:+no-stop}" 2>/dev/null && return 0
    done
    ends_clean "$TMP/$name.json" "$TMP/$name.txt" "${1:+no-stop}"
}

start_target gostacks "$TARGETS/gostacks"; GS=$TARGET_PID
start_target gopsy env GOPS_CONFIG_DIR="$TMP/gops" "$TARGETS/gopsy" -no-agent; GP=$TARGET_PID
wait_ready gostacks && wait_ready gopsy || fail "the Go targets did not start"
check "gopsy is a cgo binary (dynamically linked, runtime/cgo's crosscall_amd64 in it)" \
    bash -c "readelf -l '$TARGETS/gopsy' | grep -q INTERP && nm '$TARGETS/gopsy' | grep -q ' crosscall_amd64$'"

check "Go without cgo: every thread ends in an outermost frame, no error (text and JSON)" capture_clean gostacks "$GS"
check "Go with cgo: every thread ends in an outermost frame, no error (text and JSON)" capture_clean gopsy "$GP"
check "Go with cgo: sysmon ends at runtime.mstart, not in runtime/cgo with 'no matching address range'" \
    json_eval "$TMP/gopsy.json" "
        [t['frames'][-1]['function'] for t in last['threads'] if any(f['function'] == 'runtime.sysmon' for f in t['frames'])]
        == ['runtime.mstart'] and not any('no matching address range' in (t['error'] or '') for t in last['threads'])"
check "Go with cgo, --no-stop: every blocked thread ends cleanly" capture_clean gopsy-nostop "$GP" --no-stop

start_target threads "$TARGETS/threads" 3; T=$TARGET_PID
wait_ready threads || fail "threads did not start"
check "C: every thread ends at _start or __clone3, no error (text and JSON)" capture_clean threads "$T"
check "C: the main thread still goes down to _start through __libc_start_main" json_eval "$TMP/threads.json" "
    [f['function'] for f in last['threads'][0]['frames']][-3:] == ['__libc_start_call_main', '__libc_start_main_impl', '_start']
    or [f['function'] for f in last['threads'][0]['frames']][-2:] == ['__libc_start_main', '_start']"

# A real failure: the thread runs JIT code in an anonymous mapping (no module, no CFI, %rbp not a frame pointer),
# so its stack stops at the first frame. That is said, in text and JSON.
start_target jit "$TARGETS/jitspin"; J=$TARGET_PID
wait_ready jit || fail "jitspin did not start"
for i in 1 2 3 4 5; do # nearly always caught in the mapping; now and then in jit_loop, whose stack is whole
    "$DIAGTOP" stack --cpu-sample 0 "$J" >"$TMP/jit.txt" 2>&1
    "$DIAGTOP" stack --cpu-sample 0 --json "$J" >"$TMP/jit.json" 2>&1
    grep -q '^  #0   0x[0-9a-f]* *\[?\]$' "$TMP/jit.txt" && grep -q '"module":null' "$TMP/jit.json" && break
done
check "JIT: a stack stopped in the middle of the code keeps its error line (text)" \
    grep -q '^  (unwinding stopped: .*JIT or code without unwind info' "$TMP/jit.txt"
check "JIT: ... and its JSON error" json_eval "$TMP/jit.json" "
    any(t['error'] and t['error'].startswith('unwinding stopped:') and t['frames'] and t['frames'][0]['module'] is None
        for t in last['threads'])"
finish
