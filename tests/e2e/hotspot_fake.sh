#!/usr/bin/env bash
# The attach client against a fake JVM that misbehaves (tests/targets/fake_hotspot.py: libjvm.so mapped, SIGQUIT
# caught, a listener on /tmp/.java_pidN started by the trigger): the exact bytes of protocol 1, the trigger made
# and removed, and every bad peer answered within the timeout with the reason: a peer that never answers, one that
# drips, garbage, 80 MiB, a closed connection, "File exists" after status 0, a listener that never comes; SIGINT
# cancels; the helper that talked to the peer is gone afterwards.
. "$(dirname "$0")/../lib.sh"
FAKE=$ROOT/tests/targets/fake_hotspot.py
mkdir -p "$TMP/cwd" "$TMP/dumps"

# fake MODE: starts the fake in $TMP/cwd; sets F.
fake() {
    cd "$TMP/cwd" || exit 1
    start_target "fake-$1" python3 "$FAKE" "$1"
    F=$TARGET_PID
    cd "$ROOT" || exit 1
    wait_ready "fake-$1" || fail "fake $1 did not start"
}
# timed OUT ERR CMD...: runs diagtop, sets MS to its wall time in milliseconds and RC to its status.
timed() {
    local out=$1 err=$2
    shift 2
    local t0
    t0=$(date +%s%N)
    "$@" >"$out" 2>"$err"
    RC=$?
    MS=$((($(date +%s%N) - t0) / 1000000))
}
# helper_gone MODE: the peer the fake saw last (diagtop's helper) no longer exists.
helper_gone() {
    local p
    p=$(sed -n 's/^peer pid=\([0-9]*\) .*/\1/p' "$TMP/fake-$1.out" | tail -1)
    [ -n "$p" ] && ! kill -0 "$p" 2>/dev/null
}

fake ok
"$DIAGTOP" stack --json "$F" >"$TMP/ok.json" 2>"$TMP/ok.err"
check "ok: the fake's thread dump, from hotspot" json_eval "$TMP/ok.json" "
    last['provider'] == 'hotspot' and last['threads'][0]['name'] == 'main' and
    last['threads'][0]['frames'][1] == {'function': 'Fake.main', 'file': 'Fake.java', 'line': 7}"
check "ok: the request is exactly five NUL-terminated strings: 1 threaddump '' '' ''" \
    grep -qx "request $(printf '1\0threaddump\0\0\0\0' | od -An -tx1 | tr -d ' \n')" "$TMP/fake-ok.out"
check "ok: the trigger was in the target's working directory at SIGQUIT, and is gone" bash -c "
    grep -qx 'sigquit trigger=$TMP/cwd uid=0' '$TMP/fake-ok.out' && ! ls '$TMP/cwd/.attach_pid$F' /tmp/.attach_pid$F 2>/dev/null"
"$DIAGTOP" heap "$F" >/dev/null 2>&1
check "ok: a second request uses the listener, no second SIGQUIT" bash -c "[ \$(grep -c sigquit '$TMP/fake-ok.out') = 1 ]"
check "ok: jcmd requests carry their command line as the first argument" \
    grep -qx "request $(printf '1\0jcmd\0GC.class_histogram -all\0\0\0' | od -An -tx1 | tr -d ' \n')" "$TMP/fake-ok.out"

fake hang
timed "$TMP/hang.out" "$TMP/hang.err" "$DIAGTOP" memstats --json --timeout 1 "$F"
check "hang: no reply within the timeout, said in the runtime part of memstats ($MS ms)" bash -c "
    [ $RC -eq 0 ] && [ $MS -lt 4000 ] && grep -q 'no complete reply from the JVM within 1.0 s' '$TMP/hang.out'"
check "hang: the helper is gone" helper_gone hang
"$DIAGTOP" heap --timeout 30 "$F" >/dev/null 2>"$TMP/int.err" &
P=$!
PIDS+=("$P")
sleep 1
T0=$(date +%s%N)
kill -INT "$P"
wait "$P"
RC=$?
MS=$((($(date +%s%N) - T0) / 1000000))
check "hang: SIGINT cancels a request at once ($MS ms), exit status 1" bash -c "
    [ $RC -eq 1 ] && [ $MS -lt 1500 ] && grep -q cancelled '$TMP/int.err'"
check "hang: ... and the helper is gone" helper_gone hang

fake drip
timed "$TMP/drip.out" "$TMP/drip.err" "$DIAGTOP" heap --timeout 1 "$F"
check "drip: a reply that never ends is cut at the timeout ($MS ms)" bash -c "
    [ $RC -eq 1 ] && [ $MS -lt 4000 ] && grep -q 'no complete reply' '$TMP/drip.err'"

fake garbage
timed "$TMP/g.out" "$TMP/g.err" "$DIAGTOP" heap --json "$F"
check "garbage: no status line, refused; --json says so too" bash -c "
    [ $RC -eq 1 ] && grep -q 'does not start with a status line' '$TMP/g.err'"
check "garbage: the JSON error document" json_eval "$TMP/g.out" "
    last['provider'] == 'hotspot' and 'status line' in last['error'] and last['pid'] == $F"

fake huge
timed "$TMP/huge.out" "$TMP/huge.err" "$DIAGTOP" heap --timeout 20 "$F"
check "huge: 80 MiB is cut at 64 MiB ($MS ms)" bash -c "[ $RC -eq 1 ] && grep -q 'exceeds 64 MiB' '$TMP/huge.err'"

fake close
timed "$TMP/close.out" "$TMP/close.err" "$DIAGTOP" heap "$F"
check "close: a peer that hangs up is a refusal, with who the JVM accepts" bash -c "
    [ $RC -eq 1 ] && grep -q 'closed the attach connection without answering' '$TMP/close.err' &&
    grep -q 'accepts only root or uid 0 gid 0' '$TMP/close.err'"

fake exists
timed "$TMP/ex.out" "$TMP/ex.err" "$DIAGTOP" dump "$F" --heap --dump-dir "$TMP/dumps"
check "exists: status 0 with 'Unable to create' is a failure, in the JVM's words" bash -c "
    [ $RC -eq 1 ] && grep -q 'Unable to create /tmp/x: File exists' '$TMP/ex.err'"
ASKED=$(sed -n 's/^request //p' "$TMP/fake-exists.out" | tail -1 |
    python3 -c "import sys; print(bytes.fromhex(sys.stdin.read().strip()).split(b'\0')[2].decode().split(' ')[-1])")
check "exists: the JVM was asked for a file in a private directory of its /tmp; nothing is left there or here" bash -c "
    [[ '$ASKED' == /tmp/diagtop-jvm-*/heap.hprof.gz ]] && [ ! -e \"\$(dirname '$ASKED')\" ] &&
    [ -z \"\$(ls -A '$TMP/dumps')\" ]"

fake never
timed "$TMP/nv.out" "$TMP/nv.err" "$DIAGTOP" heap --timeout 1 "$F"
check "never: the listener did not start within the timeout ($MS ms)" bash -c "
    [ $RC -eq 1 ] && [ $MS -ge 900 ] && [ $MS -lt 4000 ] && grep -q 'did not start within' '$TMP/nv.err'"
check "never: SIGQUIT once and once more halfway, the trigger removed" bash -c "
    [ \$(grep -c sigquit '$TMP/fake-never.out') = 2 ] && ! ls '$TMP/cwd/.attach_pid$F' /tmp/.attach_pid$F 2>/dev/null"
finish
