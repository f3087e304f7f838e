#!/usr/bin/env bash
# NET W/s against nethogs, the tool people run for per-process network rates (libpcap, on the wire): a TCP stream
# of 3 MiB/s over loopback watched by both over the same seconds. nethogs averages over its last seconds, so its
# steady samples (the last three) are compared with diagtop's over the same stretch. Here nethogs' plateau varies
# from run to run (2.4 to 3.0 MiB/s for the same stream: pcap loses 64 KiB loopback segments under load), so the
# check is that diagtop's sender rate is within 10% of the truth and at least as near to it as nethogs'.
# (On loopback every packet is both sent and received on one interface: nethogs counts each as sent by its
# source port's owner, so it has no received rate to compare the receiver's NET R/s with; that one is checked
# against the truth.)
. "$(dirname "$0")/../lib.sh"

command -v nethogs >/dev/null || { skip "nethogs is not installed"; finish; }
MIB=1048576
MiB=$MIB
start_target rcv "$TARGETS/tcprate" recv; RCV=$TARGET_PID
wait_ready rcv || fail "receiver did not start"
start_target snd "$TARGETS/tcprate" send "$(awk '{print $2}' "$TMP/rcv.out")" $((3 * MIB)); SND=$TARGET_PID
wait_ready snd || fail "sender did not start"

nethogs -a -t -d 1 -c 16 lo >"$TMP/nethogs.txt" 2>"$TMP/nethogs.err" &
NH=$!
PIDS+=("$NH")
"$DIAGTOP" -b --json -n 16 -d 1 -p "$RCV,$SND" >"$TMP/net.json" 2>"$TMP/net.err"
wait "$NH"
if ! grep -q "/$SND/" "$TMP/nethogs.txt"; then
    skip "nethogs saw no traffic of the sender here ($(head -c 200 "$TMP/nethogs.err"))"
    finish
fi
check "the sender's NET W/s within 10% of the truth and as near to it as nethogs' sent rate (last 3 s)" \
    python3 - "$TMP/nethogs.txt" "$TMP/net.json" "$SND" <<'PY'
import json, sys
pid = sys.argv[3]
# trace mode: "PROGRAM/PID/UID<TAB>SENT<TAB>RECEIVED" in KB/s (KiB), one block per refresh
sent = [float(l.split("\t")[1]) * 1024 for l in open(sys.argv[1]) if "/%s/" % pid in l and l.count("\t") == 2]
docs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
ours = [next(p for p in d["processes"] if p["pid"] == int(pid))["network"]["sent_bytes_per_sec"] for d in docs[1:]]
nh, dt, truth = sum(sent[-3:]) / 3, sum(ours[-3:]) / 3, 3 * 1048576
ok = len(sent) >= 3 and abs(dt - truth) <= 0.1 * truth and abs(dt - truth) <= abs(nh - truth) + 0.01 * truth
print("  nethogs %.0f B/s, diagtop %.0f B/s, truth %d" % (nh, dt, truth), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
check "the receiver's NET R/s within 10% of 3 MiB/s over the same seconds" json_eval "$TMP/net.json" "
    all(abs(proc($RCV, d)['network']['received_bytes_per_sec'] - 3 * $MiB) <= 0.1 * 3 * $MiB for d in docs[1:])"
stop_pid "$SND"
stop_pid "$RCV"
finish
