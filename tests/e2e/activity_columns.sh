#!/usr/bin/env bash
# The activity columns against the truth and against the tools people use: DISK R/s and W/s of a target moving
# known rates (O_DIRECT reads, fdatasync'd writes) within 10% of them and of iotop's batch output over the same
# seconds; WAIT% of three CPU burners pinned to one CPU (each runs a third of the time and waits the rest: CPU% +
# WAIT% is the whole interval, whatever else runs there); NET R/s and W/s of both ends of a TCP stream at a known
# rate; CSW/s of a target woken 200 times a second; OOM as the
# kernel scores it; UNIT of processes put in cgroups named as docker and systemd name them; JSON and text agree;
# hidden columns open none of their files (strace).
. "$(dirname "$0")/../lib.sh"

MIB=1048576
start_target dio "$TARGETS/diskio" "$TMP" $((4 * MIB)) $((2 * MIB)); D=$TARGET_PID
start_target tick "$TARGETS/ticker" 200; T=$TARGET_PID
start_target sleeper "$TARGETS/sleeper"; S=$TARGET_PID
wait_ready dio && wait_ready tick || fail "targets did not start"
echo 500 >"/proc/$S/oom_score_adj" # a score of its own, so that the column cannot pass by showing everyone's

# ---- disk: the truth, and iotop over the same seconds ----
sleep 0.5
iotop -b -o -P -k -d 1 -n 4 >"$TMP/iotop.txt" 2>"$TMP/iotop.err" &
IOTOP=$!
PIDS+=("$IOTOP")
"$DIAGTOP" -b --json -n 4 -d 1 -p "$D,$T,$S" >"$TMP/act.json" 2>"$TMP/act.err"
wait "$IOTOP"
MiB=$MIB
check "JSON: disk rates of the writer within 10% of 4 MiB/s written and 2 MiB/s read (every sample after the first)" \
    json_eval "$TMP/act.json" "
    all(abs(proc($D, d)['disk']['write_bytes_per_sec'] - 4 * $MiB) <= 0.1 * 4 * $MiB and
        abs(proc($D, d)['disk']['read_bytes_per_sec'] - 2 * $MiB) <= 0.1 * 2 * $MiB for d in docs[1:])"
check "JSON: the counters grow by the rates: write_bytes rose by about 4 MiB a second" json_eval "$TMP/act.json" "
    3 * 4 * $MiB * 0.85 <= proc($D)['disk']['write_bytes'] - proc($D, docs[0])['disk']['write_bytes'] <= 3 * 4 * $MiB * 1.15"
if grep -q "^ *$D " "$TMP/iotop.txt"; then
    check "iotop -b -P over the same seconds: DISK READ and DISK WRITE within 10% of diagtop's" \
        python3 - "$TMP/iotop.txt" "$TMP/act.json" "$D" <<'PY'
import json, re, sys
pid = int(sys.argv[3])
rows = [l.split() for l in open(sys.argv[1]) if re.match(r"\s*%d\s" % pid, l)]
# PID PRIO USER READ K/s WRITE K/s ...: the samples after iotop's first (which covers its start-up)
reads = [float(r[3]) * 1024 for r in rows[1:]]
writes = [float(r[5]) * 1024 for r in rows[1:]]
docs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
ours = [next(p for p in d["processes"] if p["pid"] == pid)["disk"] for d in docs[1:]]
mean = lambda v: sum(v) / len(v)
io_r, io_w = mean(reads), mean(writes)
dt_r, dt_w = mean([o["read_bytes_per_sec"] for o in ours]), mean([o["write_bytes_per_sec"] for o in ours])
ok = reads and abs(io_r - dt_r) <= 0.1 * io_r and abs(io_w - dt_w) <= 0.1 * io_w
if not ok:
    print("  iotop read %.0f write %.0f, diagtop read %.0f write %.0f B/s" % (io_r, io_w, dt_r, dt_w), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
else
    skip "iotop showed no row for the writer here (taskstats: $(head -c 200 "$TMP/iotop.err"))"
fi
check "JSON: a process that moves nothing: rates of 0, counters present" json_eval "$TMP/act.json" "
    proc($S)['disk']['read_bytes_per_sec'] == 0 and proc($S)['disk']['write_bytes_per_sec'] == 0 and
    proc($S)['disk']['write_bytes'] is not None"

# ---- network: a TCP stream of 3 MiB/s over loopback, seen on both ends ----
start_target rcv "$TARGETS/tcprate" recv; RCV=$TARGET_PID
wait_ready rcv || fail "receiver did not start"
start_target snd "$TARGETS/tcprate" send "$(awk '{print $2}' "$TMP/rcv.out")" $((3 * MIB)); SND=$TARGET_PID
wait_ready snd || fail "sender did not start"
sleep 0.3
"$DIAGTOP" -b --json -n 3 -d 1 -p "$RCV,$SND,$S" >"$TMP/net.json" 2>"$TMP/net.err"
check "NET: the receiver's R/s and the sender's W/s within 10% of 3 MiB/s (every sample after the first)" \
    json_eval "$TMP/net.json" "
    all(abs(proc($RCV, d)['network']['received_bytes_per_sec'] - 3 * $MiB) <= 0.1 * 3 * $MiB and
        abs(proc($SND, d)['network']['sent_bytes_per_sec'] - 3 * $MiB) <= 0.1 * 3 * $MiB for d in docs[1:])"
check "NET: the other directions carry no data (ACKs are not bytes), a process without sockets moves 0" \
    json_eval "$TMP/net.json" "
    proc($RCV)['network']['sent_bytes_per_sec'] == 0 and proc($SND)['network']['received_bytes_per_sec'] == 0 and
    proc($S)['network']['received_bytes_per_sec'] == 0 and proc($S)['network']['sent_bytes'] == 0"
check "NET: the counters add up the rates (about 2 s of 3 MiB/s after the first sample)" json_eval "$TMP/net.json" "
    2 * 3 * $MiB * 0.85 <= proc($SND)['network']['sent_bytes'] <= 2.6 * 3 * $MiB"
"$DIAGTOP" -b -n 2 -d 1 -s netr -p "$RCV,$SND" --columns pid,netr,netw,command >"$TMP/net.txt" 2>&1
check "NET: text sorted by NET R/s, the receiver first, rates in M" bash -c "
    grep -A1 'PID  NET R/s' '$TMP/net.txt' | tail -1 | grep -Eq '^ *$RCV +(2\.[89]|3\.[0-2])M +0 '"
stop_pid "$SND"
stop_pid "$RCV"
if unshare --net "$TARGETS/sleeper" 2>/dev/null & NS=$! && PIDS+=("$NS") && wait_exec "$NS" "$TARGETS/sleeper" 2>/dev/null; then
    "$DIAGTOP" -b --json -n 1 -d 0.2 -p "$NS" >"$TMP/netns.json" 2>&1
    check "NET: a process in another network namespace has no rates (its sockets are not in this dump), not 0" \
        json_eval "$TMP/netns.json" "proc($NS)['network']['sent_bytes_per_sec'] is None"
else
    skip "NET: unshare --net is not allowed here"
fi

# ---- context switches and the OOM score ----
check "JSON: CSW/s of a target woken 200 times a second within 10%" json_eval "$TMP/act.json" "
    all(180 <= proc($T, d)['scheduler']['switches_per_sec'] <= 220 for d in docs[1:])"
check "JSON: the OOM score is the kernel's (oom_score_adj 500 makes it differ from the others')" json_eval \
    "$TMP/act.json" "proc($S)['oom_score'] == $(cat /proc/$S/oom_score) and proc($S)['oom_score'] != proc($T)['oom_score']"

# ---- WAIT%: three burners sharing one CPU ----
CPU=$(($(nproc) - 1))
B=()
for i in 1 2 3; do
    start_target "burn$i" taskset -c "$CPU" "$TARGETS/burner"
    B+=("$TARGET_PID")
done
for pid in "${B[@]}"; do wait_exec "$pid" "$TARGETS/burner"; done
psi_cpu() { sed -n 's/^some avg10=\([0-9.]*\) .*/\1/p' /proc/pressure/cpu 2>/dev/null; }
PSI_BEFORE=$(psi_cpu)
"$DIAGTOP" -b --json -n 2 -d 2 -p "$(IFS=,; echo "${B[*]},$S")" >"$TMP/wait.json" 2>&1
PSI_AFTER=$(psi_cpu)
if [ -n "$PSI_AFTER" ]; then
    # avg10 moves as the burners queue: the value diagtop read lies between the kernel's before and after
    check "PSI: the cpu pressure is the kernel's (between its avg10 before and after), stalls seen while burners queue" \
        json_eval "$TMP/wait.json" "
        min($PSI_BEFORE, $PSI_AFTER) - 1 <= last['system']['pressure']['cpu']['some_avg10'] <= max($PSI_BEFORE, $PSI_AFTER) + 1
        and last['system']['pressure']['cpu']['some_avg10'] > 0 and last['system']['pressure']['io'] is not None"
    "$DIAGTOP" -b -n 1 -d 0.2 -p "$S" >"$TMP/psi.txt" 2>&1
    check "PSI: the text header's Pressure line" grep -Eq '^Pressure: cpu [0-9.]+ io [0-9.]+/[0-9.]+ mem [0-9.]+/' \
        "$TMP/psi.txt"
else
    skip "PSI: this kernel has no /proc/pressure"
fi
check "WAIT%: each of three burners pinned to one CPU waits about two thirds (50-85%)" json_eval "$TMP/wait.json" "
    all(50 <= proc(p)['scheduler']['wait_percent'] <= 85 for p in (${B[0]}, ${B[1]}, ${B[2]}))"
check "WAIT%: and runs the rest: CPU% + WAIT% is 100 within 8" json_eval "$TMP/wait.json" "
    all(abs(proc(p)['cpu_percent'] + proc(p)['scheduler']['wait_percent'] - 100) <= 8 for p in (${B[0]}, ${B[1]}, ${B[2]}))"
check "WAIT%: a sleeping process waits for nothing" json_eval "$TMP/wait.json" \
    "proc($S)['scheduler']['wait_percent'] < 1"
"$DIAGTOP" -b -n 1 -d 1 -s wait -p "$(IFS=,; echo "${B[*]},$S")" --columns pid,cpu,wait,csw,oom,command \
    >"$TMP/wait.txt" 2>&1
check "text: sorted by WAIT%, the burners first, the sleeper last, every cell a number" python3 - "$TMP/wait.txt" \
    "${B[*]}" "$S" <<'PY'
import re, sys
rows = [l.split() for l in open(sys.argv[1]) if re.match(r"\s*\d+\s+[\d.]+\s+[\d.]+\s+\d+\s+\d+\s", l)]
pids = [int(r[0]) for r in rows]
burners = set(map(int, sys.argv[2].split()))
ok = len(rows) == 4 and set(pids[:3]) == burners and pids[3] == int(sys.argv[3])
if not ok:
    print("  rows: %s" % open(sys.argv[1]).read()[-800:], file=sys.stderr)
sys.exit(0 if ok else 1)
PY
for pid in "${B[@]}"; do stop_pid "$pid"; done

# ---- UNIT: cgroups named as docker and systemd name them (cgroup v2, else v1's pids hierarchy) ----
CGROOT=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/self/mounts)
[ -n "$CGROOT" ] && [ -w "$CGROOT" ] && [ -f "$CGROOT/cgroup.procs" ] || CGROOT=/sys/fs/cgroup/pids
ID=$(head -c32 /dev/urandom | od -An -tx1 | tr -d ' \n')
DOCKER=$CGROOT/docker-$ID.scope
UNIT=$CGROOT/diagtop-test-$$.slice/diagtop-test-$$.service
if mkdir "$DOCKER" 2>/dev/null && mkdir -p "$UNIT/worker" 2>/dev/null; then
    trap 'cleanup; rmdir "$DOCKER" "$UNIT/worker" "$UNIT" "${UNIT%/*}" 2>/dev/null' EXIT
    echo "$S" >"$DOCKER/cgroup.procs"
    echo "$T" >"$UNIT/worker/cgroup.procs" # a service's own sub-cgroup: the unit is still the service
    "$DIAGTOP" -b --json -n 1 -d 0.2 -p "$S,$T" >"$TMP/unit.json" 2>&1
    check "UNIT: docker-ID.scope is docker:ID cut to 12, a service's sub-cgroup is the service" json_eval \
        "$TMP/unit.json" "proc($S)['unit'] == 'docker:${ID:0:12}' and proc($T)['unit'] == 'diagtop-test-$$.service'"
    "$DIAGTOP" -b -n 1 -d 0.2 -p "$S" --columns pid,unit >"$TMP/unit.txt" 2>&1
    check "UNIT: the text table shows it" grep -Eq "^ *$S docker:${ID:0:12}\$" "$TMP/unit.txt"
    # back where they were, so that the directories can go
    echo "$S" >"$CGROOT/cgroup.procs"
    echo "$T" >"$CGROOT/cgroup.procs"
else
    skip "UNIT: no cgroup of this test's own can be made here"
fi
if [ "$(ps -o comm= -p 1)" = systemd ] && command -v systemd-run >/dev/null; then
    systemd-run --scope --unit "diagtop-test-$$" "$TARGETS/sleeper" >/dev/null 2>&1 &
    SR=$!
    PIDS+=("$SR")
    wait_exec "$SR" "$TARGETS/sleeper"
    "$DIAGTOP" -b --json -n 1 -d 0.2 -p "$SR" >"$TMP/scope.json" 2>&1
    check "UNIT: systemd-run --scope names its scope" json_eval "$TMP/scope.json" \
        "proc($SR)['unit'] == 'diagtop-test-$$.scope'"
else
    skip "UNIT: systemd-run --scope needs systemd as PID 1 (here: $(ps -o comm= -p 1))"
fi

# ---- hidden columns cost nothing: the files a refresh opens (relative to its /proc descriptor: "PID/io") ----
strace -f -e trace=openat -o "$TMP/hidden.trace" "$DIAGTOP" -b -n 2 -d 0.2 >/dev/null 2>&1
strace -f -e trace=openat -o "$TMP/shown.trace" "$DIAGTOP" -b -n 2 -d 0.2 --columns pid,diskr,wait,oom,unit,command \
    >/dev/null 2>&1
check "default columns: no io, schedstat, oom_score or cgroup file opened" bash -c "
    [ -s '$TMP/hidden.trace' ] && ! grep -Eq '\"[0-9]+(/task/[0-9]+)?/(io|schedstat|oom_score|cgroup)\"' '$TMP/hidden.trace'"
check "the columns shown: each one's file is opened" bash -c "
    for f in io schedstat oom_score cgroup; do grep -Eq \"\\\"[0-9]+(/task/[0-9]+)?/\$f\\\"\" '$TMP/shown.trace' || { echo \"  no \$f\"; exit 1; }; done"

# ---- bad input: another user's process ----
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
    setpriv --reuid=nobody --regid=nogroup --clear-groups "$DIAGTOP" -b --json -n 1 -d 0.2 -p "$D" \
        >"$TMP/nobody.json" 2>"$TMP/nobody.err" # (it warns that it cannot read the test's config)
    check "as another user: io unreadable is null, not 0; the scheduler's counters (world-readable) still there" \
        json_eval "$TMP/nobody.json" "
        proc($D)['disk']['read_bytes'] is None and proc($D)['disk']['write_bytes_per_sec'] is None and
        proc($D)['scheduler']['switches'] is not None"
fi
finish
