#!/usr/bin/env bash
# diagtop profile on the programs that are hard to profile (issue 13): a process that execs in the middle of a
# profile, from its main thread or from another thread, with both methods (the report names each program's
# samples against that program's own mappings, diagtop exits 0, the new program runs on untraced); a binary
# stripped of every symbol and all debug info (its hot frames are module+0xOFFSET, at offsets inside the hot
# functions of the unstripped build by nm); JIT code in an anonymous RWX mapping without unwind info (an address
# frame with no module, the stack marked truncated where unwinding stopped, the target unharmed); a main thread that
# exits (pthread_exit) while another thread spins (the profile goes on, named, and diagtop does not crash).
. "$(dirname "$0")/../lib.sh"

# running_untraced PID: TracerPid 0, no thread in a stop (t or T), and the process still gets CPU time.
running_untraced() {
    python3 - "$1" <<'PY'
import glob, sys, time
pid = sys.argv[1]
def runtime():
    return sum(int(open(f).read().split()[0]) for f in glob.glob("/proc/%s/task/*/schedstat" % pid))
try:
    tracer = [l.split()[1] for l in open("/proc/%s/status" % pid) if l.startswith("TracerPid:")][0]
    states = "".join(open(f).read().rsplit(")", 1)[1].split()[0] for f in glob.glob("/proc/%s/task/*/stat" % pid))
    before = runtime()
    time.sleep(0.3)
    ran = runtime() - before
except OSError as e:
    print("  process %s: %s" % (pid, e), file=sys.stderr)
    sys.exit(1)
ok = tracer == "0" and not set(states) & set("tT") and ran > 0
if not ok:
    print("  process %s: TracerPid %s, thread states %s, %d ns of CPU in 0.3 s" % (pid, tracer, states, ran),
          file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

# wait_until SECONDS COMMAND...: runs COMMAND every 50 ms until it succeeds; fails after SECONDS.
wait_until() {
    local i limit=$(($1 * 20))
    shift
    for i in $(seq "$limit"); do
        "$@" && return 0
        sleep 0.05
    done
    return 1
}

# sampling DIAGTOP_PID METHOD TARGET_PID: diagtop's sampler is on the target (perf: an event is open; ptrace: it
# is the target's tracer).
sampling() {
    if [ "$2" = perf ]; then
        ls -l "/proc/$1/fd" 2>/dev/null | grep -q 'perf_event'
    else
        [ "$(awk '/^TracerPid:/ {print $2}' "/proc/$3/status" 2>/dev/null)" = "$1" ]
    fi
}

# wait_exit PID SECONDS: waits for a background diagtop and returns its status; one still running after SECONDS
# is hung: killed (by its PID), 124.
wait_exit() {
    local i
    for i in $(seq $(($2 * 10))); do
        [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" = Z ] && break
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$1" 2>/dev/null && [ "$(ps -o stat= -p "$1" | cut -c1)" != Z ]; then
        kill -KILL "$1"
        wait "$1" 2>/dev/null
        return 124
    fi
    wait "$1"
}

# ---- 1. exec in the middle of a profile ----
# execer spins in spin_before until SIGUSR1, then the spinning thread (the main one, or "spinner") execve()s the
# program again, which spins in spin_after. Sampling 3 s: about 1 s before the exec and 2 s after.
exec_case() { # MODE(main|thread) METHOD(perf|ptrace)
    local mode=$1 method=$2 name=exec-$1-$2 what="exec from the ${1/thread/other} thread, $2"
    start_target "$name" "$TARGETS/execer" "$mode"
    local X=$TARGET_PID
    wait_ready "$name" || { fail "$what: the target did not start"; return; }
    "$DIAGTOP" profile --json --method "$method" -d 3 "$X" >"$TMP/$name.json" 2>"$TMP/$name.err" &
    local D=$!
    PIDS+=("$D")
    wait_until 15 sampling "$D" "$method" "$X" || fail "$what: diagtop never started sampling"
    sleep 1
    kill -USR1 "$X"
    wait_until 5 grep -q '^after' "$TMP/$name.out" || fail "$what: the target did not exec"
    wait_exit "$D" 20
    local rc=$?
    [ -s "$TMP/$name.err" ] && sed 's/^/  stderr: /' "$TMP/$name.err" | head -5 >&2
    check "$what: diagtop exits 0 (not hung, not crashed) with a report of the whole 3 s" \
        json_eval "$TMP/$name.json" "$rc == 0 and last['pid'] == $X and last['method'] == '$method' and
            last['seconds'] >= 2.9"
    # Each program's samples named against its own mappings: the innermost frames are the two spin functions
    # (a pc named against the other program's mappings is a bare address or in the wrong module), every frame is
    # in a module (the target has no JIT code), and the stacks go down to the thread's first frame.
    check "$what: the samples of both programs, each named with its whole stack" python3 - "$TMP/$name.json" \
        "$mode" <<'PY'
import json, sys
d, mode = json.load(open(sys.argv[1])), sys.argv[2]
before = ["spin_before", "spin_then_exec"] + (["start_thread", "__clone3"] if mode == "thread" else
                                              ["main", "__libc_start_call_main", "__libc_start_main_impl", "_start"])
after = ["spin_after", "main", "__libc_start_call_main", "__libc_start_main_impl", "_start"]
inner = {"spin_before": 0, "spin_after": 0}
bad = []
for s in d["stacks"]:
    names = [f["function"] for f in s["frames"]]
    if names and names[0] in inner:
        inner[names[0]] += s["samples"]
        if s["truncated"] or names != (before if names[0] == "spin_before" else after):
            bad.append(names)
    if any(f["module"] is None for f in s["frames"]):
        bad.append([f["function"] or f["pc"] for f in s["frames"]])
total = d["samples"]
ok = inner["spin_before"] > 0 and inner["spin_after"] > 0 and sum(inner.values()) >= 0.9 * total and not bad
if not ok:
    print("  %s of %d samples; stacks not as expected (first 3): %s" % (inner, total, bad[:3]), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
    check "$what: the new program runs on, untraced and not stopped" running_untraced "$X"
    stop_pid "$X"
}
exec_case main perf
exec_case main ptrace
exec_case thread perf
exec_case thread ptrace

# ---- 2. a binary without any symbol or debug info ----
check "stripme-stripped has no symbol table and no debug info" \
    bash -c "! readelf -SW '$TARGETS/stripme-stripped' | grep -Eq '\.symtab|\.debug_'"
start_target stripped "$TARGETS/stripme-stripped"; S=$TARGET_PID
wait_ready stripped || fail "stripped target did not start"
# 3 s: ~300 samples on a free core, ~150 when it shares one: 3:1 read as below 1.8:1 stays beyond 3 sigma
"$DIAGTOP" profile --json -d 3 "$S" >"$TMP/stripped.json" 2>"$TMP/stripped.err"
# The symbols of the unstripped build (same code): ranges [start, start + size) relative to the lowest PT_LOAD,
# which is where the module's offsets count from.
nm -S "$TARGETS/stripme" >"$TMP/stripme.nm"
readelf -lW "$TARGETS/stripme" >"$TMP/stripme.phdrs"
check "stripped: the hot frames are stripme-stripped+0xOFFSET, inside spin_hot and spin_warm (nm) at about 3:1" \
    python3 - "$TMP/stripped.json" "$TMP/stripme.nm" "$TMP/stripme.phdrs" <<'PY'
import json, re, sys
from sample_ratio import about_ratio
d = json.load(open(sys.argv[1]))
base = min(int(l.split()[2], 16) for l in open(sys.argv[3]) if l.split()[:1] == ["LOAD"])
syms = {}
for l in open(sys.argv[2]):
    f = l.split()
    if len(f) == 4:
        syms[f[3]] = (int(f[0], 16) - base, int(f[0], 16) - base + int(f[1], 16))
def inside(name, off):
    lo, hi = syms[name]
    return lo <= off < hi
own = {"spin_hot": 0, "spin_warm": 0, "elsewhere": 0}
for f in d["functions"]:
    if not f["own_samples"]:
        continue
    m = re.fullmatch(r"stripme-stripped\+0x([0-9a-f]+)", f["name"] or "")
    off = int(m.group(1), 16) if m and f["module"] == "stripme-stripped" else -1
    own[next((n for n in ("spin_hot", "spin_warm") if inside(n, off)), "elsewhere")] += f["own_samples"]
a, b = own["spin_hot"], own["spin_warm"]
ratio_ok, why = about_ratio(a, b)
ok = ratio_ok and a + b >= 0.9 * d["samples"]
if not ok:
    print("  %s; own samples by nm's function: %s of %d; functions: %s"
          % (why, own, d["samples"], d["functions"][:6]),
          file=sys.stderr)
sys.exit(0 if ok else 1)
PY
check "stripped: whole stacks through .eh_frame: spin_* <- main <- libc <- _start, by offset (return addresses - 1)" \
    python3 - "$TMP/stripped.json" "$TMP/stripme.nm" "$TMP/stripme.phdrs" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
base = min(int(l.split()[2], 16) for l in open(sys.argv[3]) if l.split()[:1] == ["LOAD"])
syms = [(int(f[0], 16) - base, int(f[0], 16) - base + int(f[1], 16), f[3])
        for f in (l.split() for l in open(sys.argv[2])) if len(f) == 4]
def named(f, exact):
    if f["module"] != "stripme-stripped":
        return f["function"]
    if f["function"] is not None or f.get("module_offset") is None:
        return "named?"  # no symbol may name it: the binary has none
    off = int(f["module_offset"], 16) - (0 if exact else 1)
    return next((n for lo, hi, n in syms if lo <= off < hi), "nowhere")
bad, seen = [], 0
for s in d["stacks"]:
    names = [named(f, i == 0) for i, f in enumerate(s["frames"])]
    if names[:1] in (["spin_hot"], ["spin_warm"]):
        seen += s["samples"]
        if s["truncated"] or names[1:] != ["main", "__libc_start_call_main", "__libc_start_main_impl", "_start"]:
            bad.append(names)
ok = not bad and seen >= 0.9 * d["samples"]
if not ok:
    print("  %d of %d samples in spin_*; unexpected stacks: %s" % (seen, d["samples"], bad[:3]), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
"$DIAGTOP" profile --method ptrace -d 1 "$S" >"$TMP/stripped.txt" 2>&1
check "stripped, ptrace, text: the top row is stripme-stripped+0x... in [stripme-stripped]" \
    bash -c "grep -A1 -E '^ +flat +flat%' '$TMP/stripped.txt' | tail -1 | grep -Eq ' stripme-stripped\+0x[0-9a-f]+ +stripme-stripped\$'"
check "stripped: the target runs on, untraced" running_untraced "$S"
stop_pid "$S"

# ---- 3. JIT code without unwind info ----
start_target jit "$TARGETS/jitspin"; J=$TARGET_PID
wait_ready jit || fail "JIT target did not start"
read -r JIT LOOP_LO LOOP_HI < <(sed -n 's/^ready jit=\(0x[0-9a-f]*\) loop=\(0x[0-9a-f]*\)-\(0x[0-9a-f]*\)$/\1 \2 \3/p' \
    "$TMP/jit.out")
for method in perf ptrace; do
    "$DIAGTOP" profile --json --method "$method" -d 2 "$J" >"$TMP/jit.$method.json" 2>"$TMP/jit.$method.err"
    # unwind.c: from a pc in no module libdwfl has no CFI and falls back to frame pointers, which reads the caller
    # at %rbp; the JIT loop keeps its countdown there, no stack address, so nothing past the first frame is
    # found, and unwind_frames says why (cpu_profile marks the stack truncated).
    check "JIT ($method): most samples in the anonymous mapping, each an address frame 0x... without a module" \
        python3 - "$TMP/jit.$method.json" "$JIT" <<'PY'
import json, sys
d, jit = json.load(open(sys.argv[1])), int(sys.argv[2], 16)
inside = [s for s in d["stacks"] if jit <= int(s["frames"][0]["pc"], 16) < jit + 4096]
fns = {f["name"]: f for f in d["functions"]}
n = sum(s["samples"] for s in inside)
bad = [s for s in inside if s["frames"][0]["function"] is not None or s["frames"][0]["module"] is not None or
       (fns.get(s["frames"][0]["pc"]) or {}).get("module", "missing") is not None]
ok = d["samples"] >= 30 and n >= 0.9 * d["samples"] and not bad
if not ok:
    print("  %d of %d samples in the JIT mapping; misnamed: %s; functions: %s" % (n, d["samples"], bad[:2],
          d["functions"][:3]), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
    check "JIT ($method): stacks in the loop are that one frame, marked truncated" \
        python3 - "$TMP/jit.$method.json" "$LOOP_LO" "$LOOP_HI" <<'PY'
import json, sys
d, lo, hi = json.load(open(sys.argv[1])), int(sys.argv[2], 16), int(sys.argv[3], 16)
loop = [s for s in d["stacks"] if lo <= int(s["frames"][0]["pc"], 16) < hi]
bad = [s for s in loop if len(s["frames"]) != 1 or s["truncated"] is not True]
ok = sum(s["samples"] for s in loop) >= 0.9 * d["samples"] and not bad
if not ok:
    print("  %d of %d samples in the loop; not one truncated frame: %s" % (sum(s["samples"] for s in loop),
          d["samples"], bad[:2]), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
    check "JIT ($method): the target runs on, untraced" running_untraced "$J"
done
"$DIAGTOP" profile -d 1 "$J" >"$TMP/jit.txt" 2>&1
check "JIT, text: the top row is the bare address in the mapping, module '-'" \
    bash -c "grep -A1 -E '^ +flat +flat%' '$TMP/jit.txt' | tail -1 | grep -Eq ' ${JIT%???}[0-9a-f]{3} +-\$'"
stop_pid "$J"

# ---- 4. the main thread exits, another runs on ----
# The leader is then a zombie with an empty /proc/PID/maps: not the end of the process, and no mappings to read.
leader_gone_runs_on() { grep -q '^State:.*Z' "/proc/$1/status" && running_untraced "$1"; }
for method in perf ptrace; do
    start_target "mainexit-$method" "$TARGETS/mainexit"; M=$TARGET_PID
    wait_ready "mainexit-$method" || fail "mainexit target did not start"
    "$DIAGTOP" profile --json --method "$method" -d 2.5 "$M" >"$TMP/mainexit.$method.json" \
        2>"$TMP/mainexit.$method.err" &
    D=$!
    PIDS+=("$D")
    wait_until 15 sampling "$D" "$method" "$M" || fail "main thread exit ($method): diagtop never started sampling"
    sleep 0.5
    kill -USR1 "$M"
    wait_exit "$D" 20
    rc=$?
    check "main thread exits ($method): diagtop exits 0 after the whole 2.5 s, the spinner's stacks named whole" \
        json_eval "$TMP/mainexit.$method.json" "$rc == 0 and last['seconds'] >= 2.4 and
        sum(s['samples'] for s in last['stacks'] if [f['function'] for f in s['frames']] ==
            ['spin_on', 'spinner', 'start_thread', '__clone3'] and not s['truncated']) >= 0.9 * last['samples'] > 0"
    check "main thread exits ($method): the leader is a zombie, the spinner runs on, untraced" leader_gone_runs_on "$M"
    stop_pid "$M"
done
finish
