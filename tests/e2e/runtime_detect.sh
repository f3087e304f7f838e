#!/usr/bin/env bash
# RUNTIME: a real Go binary (go), one with a gops agent listening (go*), a stale or borrowed port file (no *),
# a JVM (java), and a JVM whose attach listener is up after jcmd (java*). The table never connects to an agent.
. "$(dirname "$0")/../lib.sh"

mkdir -p "$TMP/gops"
start_target gopsy env GOPS_CONFIG_DIR="$TMP/gops" "$TARGETS/gopsy"; G=$TARGET_PID
start_target plain env GOPS_CONFIG_DIR="$TMP/gops" "$TARGETS/gopsy" -no-agent; G2=$TARGET_PID
start_target java java -cp "$TARGETS/java" Sleeper; J=$TARGET_PID
wait_ready gopsy && wait_ready plain && wait_ready java || fail "targets did not start"
PORT=$(sed -n 's/^ready port=//p' "$TMP/gopsy.out")
# The plain Go program gets a port file too, naming the agent's port: a port someone else holds does not count.
printf '%s' "$PORT" >"$TMP/gops/$G2"

"$DIAGTOP" -b -n 1 -d 0.1 --json -p "$G,$G2,$J" >"$TMP/rt.json"
check "a Go binary is go; with a gops agent listening, go plus agent" json_eval "$TMP/rt.json" "
    proc($G)['runtime'] == 'go' and proc($G)['agent'] is True and
    proc($G2)['runtime'] == 'go' and proc($G2)['agent'] is False"
check "a JVM is java, without an attach listener yet" json_eval "$TMP/rt.json" \
    "proc($J)['runtime'] == 'java' and proc($J)['agent'] is False"
check "native programs stay native" bash -c "'$DIAGTOP' -b -n 1 -d 0.1 --json -p $$ | python3 -c '
import json, sys; d = json.loads(sys.stdin.readline()); assert d[\"processes\"][0][\"runtime\"] == \"native\"'"
check "deciding did not connect to the agent (it accepted nothing)" bash -c "! grep -q accepted '$TMP/gopsy.out'"
"$DIAGTOP" stack --native --json "$G2" >"$TMP/gostack.json"
check "a Go program's threads unwind through the Go runtime (named runtime.* frames)" json_eval "$TMP/gostack.json" "
    len(last['threads']) >= 2 and all(any((f['function'] or '').startswith('runtime.') and f['module'] == 'gopsy'
                                          for f in t['frames']) for t in last['threads'])"
jcmd "$J" VM.version >/dev/null 2>&1
"$DIAGTOP" -b -n 1 -d 0.1 --json -p "$J" >"$TMP/rt2.json"
check "after jcmd the HotSpot socket exists: java plus agent" json_eval "$TMP/rt2.json" "proc($J)['agent'] is True"
"$DIAGTOP" -b -n 1 -d 0.1 -p "$G,$J" --columns pid,runtime,command >"$TMP/rt.txt"
check "text: go* and java*" bash -c "grep -Eq '^ *$G go\* ' '$TMP/rt.txt' && grep -Eq '^ *$J java\* ' '$TMP/rt.txt'"
kill -KILL "$G"
wait "$G" 2>/dev/null
printf '%s' "$PORT" >"$TMP/gops/$G" # the port file a SIGKILLed agent leaves behind
start_target gopsy2 env GOPS_CONFIG_DIR="$TMP/gops" "$TARGETS/gopsy" -no-agent; G3=$TARGET_PID
wait_ready gopsy2
printf '%s' "$PORT" >"$TMP/gops/$G3"
"$DIAGTOP" -b -n 1 -d 0.1 --json -p "$G3" >"$TMP/rt3.json"
check "a stale port file (nobody listens there) does not count" json_eval "$TMP/rt3.json" "proc($G3)['agent'] is False"
finish
