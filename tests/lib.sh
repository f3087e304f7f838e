# Shared helpers of the end-to-end and TUI tests (sourced). Every process a test starts is recorded and, on exit,
# stopped by its PID and reaped; tmux runs on a private socket and is ended with kill-server.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIAGTOP=${DIAGTOP:-$ROOT/build/asan/diagtop}
TARGETS=$ROOT/build/targets
export PYTHONPATH="$ROOT/tests/tools" # the checks' shared Python helpers (sample_ratio.py)
TEST_NAME=$(basename "$0" .sh)
TMP=$(mktemp -d "/tmp/diagtop-test.$TEST_NAME.XXXXXX")
TMUX_BASE="diagtop-test-$TEST_NAME-$$"
TMUX_SOCKET=$TMUX_BASE
TMUX_COUNT=0
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=99"
export LSAN_OPTIONS="suppressions=$ROOT/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export XDG_CONFIG_HOME="$TMP/config" # never touch the user's settings
export XDG_CACHE_HOME="$TMP/cache"   # nor the user's debug-info cache
export DIAGTOP_DUMP_DIR="$TMP" # profiles and dumps land here, never in the checkout
PIDS=()
FAILS=0

ok() { echo "ok $TEST_NAME: $*"; }
# skip WHY: a check that could not run here; tests/run counts it apart, never as passed.
skip() { echo "skip $TEST_NAME: $*"; }

# The table's titles in tmux end with COMMAND, which starts 32 columns or more from the right edge (issue 27).
command_column_wide() {
    local t
    t=$(tmux -L "$TMUX_SOCKET" capture-pane -p | grep -m1 'PID ' | sed 's/ *$//')
    [[ $t == *COMMAND ]] && [ $((80 - ${#t} + 7)) -ge 32 ] || { echo "  titles: $t" >&2; return 1; }
}

# CP: a class path holding tests/targets/NAME.java compiled: build/targets/java's when it is up to date, else
# compiled into this test's own directory (tests run side by side: none writes into build/).
java_classes() { # NAME
    CP=$TARGETS/java
    [ -f "$CP/$1.class" ] && [ ! "$ROOT/tests/targets/$1.java" -nt "$CP/$1.class" ] && return 0
    CP=$TMP/java
    mkdir -p "$CP" && javac -d "$CP" "$ROOT/tests/targets/$1.java"
}
fail() {
    echo "FAIL $TEST_NAME: $*"
    FAILS=$((FAILS + 1))
}
# check DESCRIPTION COMMAND...: ok when the command succeeds. A failure in a TUI test shows the screen as it is.
check() {
    local what=$1
    shift
    if "$@"; then ok "$what"; else
        fail "$what"
        [ "$TMUX_COUNT" -gt 0 ] && tmux -L "$TMUX_SOCKET" capture-pane -p 2>/dev/null | sed 's/^/  | /'
    fi
    return 0
}

# start_in_pid_namespace: a sleeper in PID and mount namespaces of its own (unshare, root only); sets NS_PID to
# its PID as seen here ("" if it did not appear). --kill-child: it dies with unshare, which the cleanup stops by PID.
# Ends the test with a skip where new PID and mount namespaces cannot be made (not root, or a kernel that refuses).
pid_namespaces_or_skip() {
    [ "$(id -u)" -eq 0 ] && unshare --pid --fork --kill-child --mount-proc true 2>/dev/null && return 0
    skip "unshare needs root and a kernel that allows new PID and mount namespaces"
    finish
}

start_in_pid_namespace() {
    start_target pidns unshare --pid --fork --kill-child --mount-proc "$TARGETS/sleeper"
    local u=$TARGET_PID i
    NS_PID=
    for i in $(seq 50); do
        NS_PID=$(ps -o pid= --ppid "$u" | tr -d ' ')
        [ -n "$NS_PID" ] && [ "$(readlink "/proc/$NS_PID/exe")" = "$TARGETS/sleeper" ] && return 0
        sleep 0.1
    done
    NS_PID=
}

# start_target NAME CMD...: starts CMD in the background with stdout in $TMP/NAME.out; sets TARGET_PID.
start_target() {
    local name=$1
    shift
    "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    TARGET_PID=$!
    PIDS+=("$TARGET_PID")
}

# wait_ready NAME: waits (up to 20 s) until the target printed its "ready" line.
wait_ready() {
    local i
    for i in $(seq 200); do
        grep -q '^ready' "$TMP/$1.out" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "target $1 never became ready" >&2
    return 1
}

# wait_exec PID PATH: waits (up to 5 s) until PID runs PATH (a target that prints nothing, like sleeper).
wait_exec() {
    local i
    for i in $(seq 50); do
        [ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$2" ] && return 0
        sleep 0.1
    done
    echo "process $1 never ran $2" >&2
    return 1
}

# stop_pid PID: SIGTERM, then SIGKILL after 3 s, and reap.
stop_pid() {
    local pid=$1 i
    kill -TERM "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
    for i in $(seq 30); do
        kill -0 "$pid" 2>/dev/null || break
        # a zombie child still answers kill -0: reap it
        if [ "$(ps -o stat= -p "$pid" 2>/dev/null | cut -c1)" = Z ]; then break; fi
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return 0
}

cleanup() {
    local pid
    local n
    for n in $(seq 0 "$TMUX_COUNT"); do tmux -L "$TMUX_BASE-$n" kill-server 2>/dev/null; done
    for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
    rm -rf "$TMP"
}
trap cleanup EXIT

# ---- tmux ----
tui_start() { # tui_start COLS ROWS COMMAND: a new tmux server each time (a killed one takes a moment to go)
    TMUX_COUNT=$((TMUX_COUNT + 1))
    TMUX_SOCKET="$TMUX_BASE-$TMUX_COUNT"
    # After the program, a shell reports its exit status and the tty modes, and keeps the pane alive for checks.
    tmux -L "$TMUX_SOCKET" -f /dev/null new-session -d -x "$1" -y "$2" \
        "$3; echo \"[exit \$?]\"; stty -a | tr ' ' '\n' | grep -xE -- '-?(icanon|echo)' | tr '\n' ' '; echo; exec sleep 600"
}
tui_keys() { tmux -L "$TMUX_SOCKET" send-keys "$@"; }
tui_screen() { tmux -L "$TMUX_SOCKET" capture-pane -p; }
# tui_wait PATTERN [SECONDS]: waits until the screen matches the extended regex.
tui_wait() {
    local i limit=$((${2:-10} * 10))
    for i in $(seq "$limit"); do
        tui_screen | grep -Eq -- "$1" && return 0
        sleep 0.1
    done
    return 1
}
# tui_app_pid: the PID of the program under test (the child of the pane's shell).
tui_app_pid() { ps -o pid= --ppid "$(tmux -L "$TMUX_SOCKET" display -p '#{pane_pid}')" | head -1 | tr -d ' '; }
# tui_wait_exit: waits until the program ended; prints nothing, sets TUI_EXIT to its status.
tui_wait_exit() {
    tui_wait '^\[exit [0-9]+\]' 10 || return 1
    TUI_EXIT=$(tui_screen | sed -n 's/^\[exit \([0-9]*\)\]$/\1/p' | tail -1)
    sleep 0.2
}
# tui_restored: the terminal is back in its normal state: main screen, cursor shown, keypad and mouse modes
# off, canonical input with echo.
tui_restored() {
    local state
    state=$(tmux -L "$TMUX_SOCKET" display -p "#{alternate_on}#{cursor_flag}#{keypad_cursor_flag}#{mouse_standard_flag}")
    if [ "$state" != 0100 ]; then
        echo "  terminal state (alternate, cursor, keypad, mouse): $state, expected 0100" >&2
        return 1
    fi
    tui_screen | grep -q '^icanon echo' || { echo "  tty modes: $(tui_screen | grep -E 'icanon')" >&2; return 1; }
}

# ---- JSON ----
# profile_aligned FILE: the top table of `diagtop profile` text (header "flat flat% sum% cum cum% function"
# [module]) has at least one row and its columns line up as go tool pprof -top's: every number ends where its
# header does, the function (and module) starts where its header does, on every row.
profile_aligned() {
    python3 - "$1" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
head = next((i for i, l in enumerate(lines) if re.match(r"\s*flat\s+flat%\s+sum%\s+cum\s+cum%\s+function", l)), None)
if head is None:
    sys.exit("  no pprof -top header in " + sys.argv[1])
h = lines[head]
ends = [m.end() for m in re.finditer(r"\S+", h)][:5]
starts = [h.index("function")] + ([h.index("module")] if "module" in h else [])
rest = lines[head + 1:]
rows = [l for l in rest[:rest.index("")] if not l.startswith("(")] if "" in rest else rest
bad = []
for l in rows[:200]:
    for e in ends:
        if not (len(l) > e and l[e - 1] != " " and l[e] == " "):
            bad.append((e, l))
    for s in starts:
        if not (len(l) > s and l[s] != " " and l[s - 2:s] == "  "):
            bad.append((s, l))
if not rows or bad:
    print("  %d rows; misaligned:" % len(rows), bad[:3], file=sys.stderr)
sys.exit(0 if rows and not bad else 1)
PY
}

# json_eval FILE PYTHON_EXPR: evaluates the expression with `docs` (every JSON line of FILE) and `last`
# (the last one) bound; exit status 0 when it is true. Prints the expression's value on failure.
# bad_keys(doc): the paths of the keys in doc that are not snake_case (^[a-z][a-z0-9_]*$), printed when any is.
json_eval() {
    python3 - "$1" "$2" <<'PY'
import json, re, sys
def bad_keys(o, path=""):
    bad = []
    for k, v in (o.items() if isinstance(o, dict) else enumerate(o) if isinstance(o, list) else ()):
        if isinstance(k, str) and not re.fullmatch(r"[a-z][a-z0-9_]*", k):
            bad.append(path + "/" + k)
        bad += bad_keys(v, path + "/" + str(k))
    if bad and not path:
        print("  keys not in snake_case:", bad[:10], file=sys.stderr)
    return bad
docs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
last = docs[-1] if docs else None
def proc(pid, doc=None):
    for p in (doc or last)["processes"]:
        if p["pid"] == pid:
            return p
    return None
v = eval("(" + sys.argv[2] + "\n)")
if not v:
    print("  expression false:", sys.argv[2], file=sys.stderr)
sys.exit(0 if v else 1)
PY
}

# fuzz_run FUZZER WHAT: libFuzzer for FUZZ_SECONDS (default 20) over $TMP/corpus seeded from $TMP/seeds, then the
# checks that it found nothing (the crashing input named) and ran over many inputs.
fuzz_run() {
    local fuzzer=$1 what=$2 seconds=${FUZZ_SECONDS:-20} rc
    "$fuzzer" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$TMP/" "$TMP/corpus" "$TMP/seeds" >"$TMP/fuzz.log" 2>&1
    rc=$?
    check "libFuzzer ran $seconds s over $what and found nothing (exit $rc)" bash -c "
        [ $rc = 0 ] && grep -q '^Done [0-9]* runs' '$TMP/fuzz.log' ||
            { tail -40 '$TMP/fuzz.log'; ls '$TMP'/crash-* '$TMP'/leak-* '$TMP'/timeout-* 2>/dev/null; false; }"
    check "... many inputs, the seeds' coverage grown" bash -c "
        runs=\$(sed -n 's/^stat::number_of_executed_units: *//p' '$TMP/fuzz.log'); [ \"\${runs:-0}\" -gt 1000 ]"
}

finish() {
    [ "$FAILS" -eq 0 ]
    exit $?
}
