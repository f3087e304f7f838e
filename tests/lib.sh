# Shared helpers of the end-to-end and TUI tests (sourced). Every process a test starts is recorded and, on exit,
# stopped by its PID and reaped; tmux runs on a private socket and is ended with kill-server.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIAGTOP=${DIAGTOP:-$ROOT/build/asan/diagtop}
TARGETS=$ROOT/build/targets
TEST_NAME=$(basename "$0" .sh)
TMP=$(mktemp -d "/tmp/diagtop-test.$TEST_NAME.XXXXXX")
TMUX_SOCKET="diagtop-test-$TEST_NAME-$$"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=99"
export LSAN_OPTIONS="suppressions=$ROOT/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export XDG_CONFIG_HOME="$TMP/config" # never touch the user's settings
PIDS=()
FAILS=0

ok() { echo "ok $TEST_NAME: $*"; }
fail() {
    echo "FAIL $TEST_NAME: $*"
    FAILS=$((FAILS + 1))
}
# check DESCRIPTION COMMAND...: ok when the command succeeds.
check() {
    local what=$1
    shift
    if "$@"; then ok "$what"; else fail "$what"; fi
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
    tmux -L "$TMUX_SOCKET" kill-server 2>/dev/null
    for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
    rm -rf "$TMP"
}
trap cleanup EXIT

# ---- tmux ----
tui_start() { # tui_start COLS ROWS COMMAND
    tmux -L "$TMUX_SOCKET" -f /dev/null new-session -d -x "$1" -y "$2" "$3"
    tmux -L "$TMUX_SOCKET" set-option -g remain-on-exit on >/dev/null
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
tui_pane_dead() { [ "$(tmux -L "$TMUX_SOCKET" display-message -p '#{pane_dead}')" = 1 ]; }
tui_pane_status() { tmux -L "$TMUX_SOCKET" display-message -p '#{pane_dead_status}'; }

# ---- JSON ----
# json_eval FILE PYTHON_EXPR: evaluates the expression with `docs` (every JSON line of FILE) and `last`
# (the last one) bound; exit status 0 when it is true. Prints the expression's value on failure.
json_eval() {
    python3 - "$1" "$2" <<'PY'
import json, sys
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

finish() {
    [ "$FAILS" -eq 0 ]
    exit $?
}
