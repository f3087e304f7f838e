#!/usr/bin/env bash
# Who may talk to the agent, and what diagtop does with an agent that misbehaves: another user cannot reach the
# socket (0600 in a 0700 directory), and one who can (CAP_DAC_OVERRIDE) is turned away by SO_PEERCRED; root is
# served by another user's agent, found through that user's XDG_RUNTIME_DIR; sockets left by dead processes (and
# one of a live process that is not an agent) are not taken for agents, and an agent starting in the directory
# removes the dead ones; one request is served at a time (others get "busy" during a profile, wait behind a silent
# client, which is given up after 2 s); bad requests are refused. diagtop gives up on a fake agent that hangs,
# drips, sends 80 MiB, garbage, no end line, or a malformed row, within its timeout, and on SIGINT at once.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/targets/agent/lib.sh"
if [ "$(id -u)" -ne 0 ]; then
    skip "needs root"
    exit 0
fi
agent_targets || { fail "cannot build the agent's targets"; finish; }
mkdir -p "$TMP/out"
export DIAGTOP_DUMP_DIR="$TMP/out"
chmod 755 "$TMP" # others may come this far: the agent's directory is what keeps them out
CLIENT=$TMP/client.py
cat >"$CLIENT" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("connect:", e.strerror)
    sys.exit(0)
s.sendall(sys.argv[2].encode() + b"\n")
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
print(data.decode().splitlines()[0] if data else "(nothing)")
EOF
chmod 644 "$CLIENT"
PY=/usr/bin/python3 # Debian's: for other users too

# ---- peers ----
start_agent peer "$AT/leaky"; P=$TARGET_PID
wait_ready peer && wait_socket "$P" || fail "target did not start"
SOCK=$AGENT_DIR/agent.$P.sock
setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all "$PY" "$CLIENT" "$SOCK" hello >"$TMP/nobody.out"
check "another user cannot reach the socket (the directory is 0700)" grep -q '^connect: Permission denied' "$TMP/nobody.out"
setpriv --reuid=daemon --regid=daemon --clear-groups --inh-caps=+dac_override --ambient-caps=+dac_override \
    "$PY" "$CLIENT" "$SOCK" hello >"$TMP/daemon.out"
check "one who can reach it (CAP_DAC_OVERRIDE) is refused by SO_PEERCRED: same uid or root only" grep -q \
    "^diagtop-agent 1 error 13 peer uid $(id -u daemon) is not allowed" "$TMP/daemon.out"
python3 "$CLIENT" "$SOCK" hello >"$TMP/root.out"
check "the same user is served" grep -qx 'diagtop-agent 1 ok' "$TMP/root.out"

mkdir -m 700 "$TMP/xdg" && chown nobody "$TMP/xdg"
start_target theirs setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
    env XDG_RUNTIME_DIR="$TMP/xdg" LD_PRELOAD="$AGENT_LIB" DIAGTOP_AGENT_SAMPLE_INTERVAL=32768 "$AT/leaky"; T=$TARGET_PID
wait_ready theirs || fail "nobody's target did not start"
for i in $(seq 50); do [ -S "$TMP/xdg/diagtop/agent.$T.sock" ] && break; sleep 0.1; done
check "nobody's agent: \$XDG_RUNTIME_DIR/diagtop (0700) and its socket (0600) are nobody's" bash -c "
    [ \"\$(stat -c '%U %a' '$TMP/xdg/diagtop')\" = 'nobody 700' ] &&
    [ \"\$(stat -c '%U %a' '$TMP/xdg/diagtop/agent.$T.sock')\" = 'nobody 600' ]"
"$DIAGTOP" heap --json "$T" >"$TMP/theirs.json" 2>"$TMP/theirs.err"
check "root is served by another user's agent (found through that user's environment)" json_eval \
    "$TMP/theirs.json" "last['provider'] == 'agent' and any(r['name'] == 'steady_block' for r in last['rows'])"
env XDG_CONFIG_HOME=/nonexistent setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
    "$ROOT/build/diagtop" heap "$P" >/dev/null 2>"$TMP/nobody-diagtop.err"
check "diagtop run by another user is told why it cannot have root's agent" grep -q "another user's process" \
    "$TMP/nobody-diagtop.err"

# ---- stale sockets ----
bind_and_leave() { python3 -c "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$1"; }
true &
DEAD=$!
wait "$DEAD"
bind_and_leave "$AGENT_DIR/agent.$DEAD.sock"
start_target notagent env DIAGTOP_AGENT_DIR="$AGENT_DIR" "$TARGETS/sleeper"; S=$TARGET_PID
sleep 0.2
bind_and_leave "$AGENT_DIR/agent.$S.sock"
"$DIAGTOP" -b -n 1 -d 0.1 --json -p "$S" >"$TMP/stale.json"
check "a socket named after a live process that does not listen on it is not an agent" json_eval "$TMP/stale.json" "
    proc($S)['agent'] is False"
"$DIAGTOP" memstats --json "$S" >/dev/null 2>&1
"$DIAGTOP" heap "$S" >/dev/null 2>"$TMP/stale.err"
check "... diagtop heap does not talk to it" bash -c "! grep -q 'the agent says' '$TMP/stale.err'"
start_agent cleaner "$AT/linked" nostart; CL=$TARGET_PID
wait_ready cleaner && wait_socket "$CL" || fail "cleaner did not start"
check "an agent starting removed the dead process's socket, and left the live one's" bash -c "
    [ ! -e '$AGENT_DIR/agent.$DEAD.sock' ] && [ -S '$AGENT_DIR/agent.$S.sock' ]"

# ---- one request at a time ----
"$DIAGTOP" profile -d 3 --json "$P" >"$TMP/prof.json" 2>&1 &
PROF=$!
sleep 1
python3 "$CLIENT" "$SOCK" hello >"$TMP/busy.out"
"$DIAGTOP" heap "$P" >/dev/null 2>"$TMP/busy.err"
wait "$PROF"
check "during a CPU profile another client gets 'busy' at once" grep -q '^diagtop-agent 1 error 16 busy' "$TMP/busy.out"
check "... and diagtop says so" grep -q 'the agent says: busy' "$TMP/busy.err"
check "... while the profile itself completes" json_eval "$TMP/prof.json" "last['samples'] > 0"
python3 - "$SOCK" >"$TMP/silent.out" <<'EOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
t = time.monotonic()
data = s.recv(4096)
print("%.1f %s" % (time.monotonic() - t, data.decode().strip()))
EOF
SILENT=$!
sleep 0.3
START=$(date +%s%N)
"$DIAGTOP" memstats --json "$P" >"$TMP/after.json"
WAITED=$((($(date +%s%N) - START) / 1000000))
wait "$SILENT"
check "a client that sends nothing is given up after 2 s" bash -c "
    read secs rest <'$TMP/silent.out'; python3 -c \"import sys; sys.exit(not 1.5 < \$secs < 4)\" &&
    grep -q 'error 71 no request line within 2 s' '$TMP/silent.out'"
check "... and the next request, waiting behind it, is served (after ${WAITED} ms)" json_eval "$TMP/after.json" "
    last['runtime']['provider'] == 'agent'"
python3 "$CLIENT" "$SOCK" "GET / HTTP/1.0" >"$TMP/garbage.out"
python3 "$CLIENT" "$SOCK" "profile 0 100" >"$TMP/zero.out"
python3 "$CLIENT" "$SOCK" "$(printf 'x%.0s' $(seq 300))" >"$TMP/long.out"
check "unknown, out of range and overlong requests are refused" bash -c "
    grep -q '^diagtop-agent 1 error 22 unknown request' '$TMP/garbage.out' &&
    grep -q '^diagtop-agent 1 error 22 profile wants' '$TMP/zero.out' &&
    grep -q '^diagtop-agent 1 error 71 ' '$TMP/long.out'"

# ---- fake agents: diagtop's bounds ----
fake() { # MODE EXPECTED-WORDS [MS] [TIMEOUT]: TIMEOUT (default 2 s) is diagtop's --timeout
    start_target "fake-$1" env DIAGTOP_AGENT_DIR="$AGENT_DIR" python3 "$ROOT/tests/targets/agent/fake_agent.py" "$1"
    local pid=$TARGET_PID
    wait_ready "fake-$1" || { fail "fake $1 did not start"; return; }
    local start=$(date +%s%N)
    "$DIAGTOP" heap --timeout "${4:-2}" "$pid" >/dev/null 2>"$TMP/fake-$1.diag"
    local rc=$? ms=$((($(date +%s%N) - start) / 1000000))
    check "a fake agent that answers '$1': refused in $ms ms: $2" bash -c "
        [ $rc = 1 ] && grep -q -- '$2' '$TMP/fake-$1.diag' && [ $ms -lt ${3:-6000} ] && ! grep -q \$'\\e' '$TMP/fake-$1.diag'"
    stop_pid "$pid"
}
fake hang "no reply from the agent within 2 s"
fake drip "did not finish its reply within 2 s"
# 64 MiB through a loaded machine can take more than 2 s: the cap, not the clock, must refuse it.
fake huge "exceeds 64 MiB" 30000 20
fake noend "incomplete (no end line"
fake garbage "is not the diagtop agent"
fake error "the agent says: heap profiling is off"
fake badsite "malformed site line"
start_target fake-int env DIAGTOP_AGENT_DIR="$AGENT_DIR" python3 "$ROOT/tests/targets/agent/fake_agent.py" hang
F=$TARGET_PID
wait_ready fake-int
"$DIAGTOP" heap --timeout 20 "$F" >/dev/null 2>"$TMP/int.err" &
D=$!
sleep 1
START=$(date +%s%N)
kill -INT "$D"
wait "$D"
MS=$((($(date +%s%N) - START) / 1000000))
check "SIGINT during a request to a hung agent: diagtop ends at once ($MS ms), saying cancelled" bash -c "
    [ $MS -lt 1000 ] && grep -q cancelled '$TMP/int.err'"
finish
