# Helpers of the native agent's tests (sourced after tests/lib.sh): its targets, built here when make has no rule
# for them yet, and a private agent directory per test (DIAGTOP_AGENT_DIR), so that tests never meet each other's
# sockets.
AGENT_LIB=$ROOT/build/libdiagtop-agent.so
AT=$ROOT/build/targets/agent
AGENT_DIR=$TMP/agent
mkdir -m 700 "$AGENT_DIR"

# agent_targets: every tests/targets/agent source built into $AT (a temporary name, then renamed: tests run two at
# a time).
agent_targets() {
    local src name bin tmp
    [ -f "$AGENT_LIB" ] || { echo "no $AGENT_LIB: make build/libdiagtop-agent.so" >&2; return 1; }
    mkdir -p "$AT"
    for src in "$ROOT"/tests/targets/agent/*.c "$ROOT"/tests/targets/agent/*.cpp; do
        name=$(basename "${src%.*}")
        bin=$AT/$name
        [ -x "$bin" ] && [ "$bin" -nt "$src" ] && { [ "$name" != linked ] || [ "$bin" -nt "$AGENT_LIB" ]; } && continue
        tmp=$bin.tmp.$$
        case $src in
        *.cpp) g++ -g -O2 -pthread -Wall -o "$tmp" "$src" ;;
        */linked.c) cc -std=gnu11 -D_GNU_SOURCE -g -O2 -pthread -Wall -I"$ROOT/include" -o "$tmp" "$src" \
            -L"$ROOT/build" -ldiagtop-agent -Wl,-rpath,"$ROOT/build" ;;
        */sqlleak.c) cc -std=gnu11 -D_GNU_SOURCE -g -O2 -Wall -o "$tmp" "$src" -lsqlite3 ;;
        *) cc -std=gnu11 -D_GNU_SOURCE -g -O2 -pthread -Wall -o "$tmp" "$src" ;;
        esac || { rm -f "$tmp"; return 1; }
        mv -f "$tmp" "$bin"
    done
}

# start_agent NAME [VAR=VALUE...] CMD...: start_target with the agent preloaded and the private directory.
start_agent() {
    local name=$1
    shift
    start_target "$name" env DIAGTOP_AGENT_DIR="$AGENT_DIR" LD_PRELOAD="$AGENT_LIB" "$@"
}

# wait_socket PID: waits (up to 10 s) for the agent of PID to listen.
wait_socket() {
    local i
    for i in $(seq 100); do
        [ -S "$AGENT_DIR/agent.$1.sock" ] && return 0
        sleep 0.1
    done
    echo "no agent socket for $1" >&2
    return 1
}

# wait_line NAME PATTERN [SECONDS]: waits until the target's output has a line matching the extended regex.
wait_line() {
    local i
    for i in $(seq $((${3:-20} * 10))); do
        grep -Eq -- "$2" "$TMP/$1.out" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "target $1 never printed /$2/" >&2
    return 1
}

# ask_agent PID REQUEST: the agent's raw reply (python3 speaks the protocol of include/diagtop-agent.h).
ask_agent() {
    python3 - "$AGENT_DIR/agent.$1.sock" "$2" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(30)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
data = b""
while True:
    b = s.recv(1 << 20)
    if not b:
        break
    data += b
sys.stdout.write(data.decode())
PY
}
