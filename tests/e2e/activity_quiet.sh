#!/usr/bin/env bash
# What a refresh does not re-read for a quiet process, and that it still shows the truth once the process moves:
# /proc/PID/io is read again only after one of its threads ran (schedstat moved), oom_score after RES moved or a
# few seconds, /proc/PID/fd counted only while a socket that moves bytes has no owner found, or every few
# seconds; a socket-less process watched alone needs no sock_diag dump after its first; a multi-threaded
# process's threads are listed and opened once, then read with one pread each. Checked with strace counts on a sleeper, and with the truth on targets that wake up while watched: a
# writer that starts after a quiet spell, a receiver that accepts a connection after its first samples, an
# oom_score_adj written meanwhile, a sender that reconnects every few seconds (what a connection pool does).
. "$(dirname "$0")/../lib.sh"

MIB=1048576
MiB=$MIB
start_target sleeper "$TARGETS/sleeper"; S=$TARGET_PID
wait_exec "$S" "$TARGETS/sleeper" || fail "sleeper did not start"

# ---- a quiet process: its io, oom_score and fd directory are not looked at every refresh ----
strace -f -y -e trace=pread64,newfstatat,openat,sendto -o "$TMP/quiet.strace" \
    "$DIAGTOP" -b -n 8 -d 0.3 -p "$S" --columns pid,diskr,diskw,wait,csw,oom,netr,netw,command \
    >"$TMP/quiet.txt" 2>"$TMP/quiet.err"
count() { grep -c "$1" "$TMP/quiet.strace"; }
SCHED=$(count "pread64([0-9]*</proc/$S/schedstat>")
IO=$(count "pread64([0-9]*</proc/$S/io>")
OOM=$(count "pread64([0-9]*</proc/$S/oom_score>")
LISTED=$(count "openat([0-9]*</proc>, \"$S/fd\"")
COUNTED=$(count "newfstatat([0-9]*</proc>, \"$S/fd\"")
# (its descriptors are counted at each refresh while another process's new connection is looked for: the other
# tests running beside this one make some, so the count is bounded, not fixed)
check "a sleeper over 8 refreshes: schedstat read each time ($SCHED), io once ($IO), oom_score once ($OOM), its fds listed once ($LISTED, counted $COUNTED)" \
    test "$SCHED" -ge 8 -a "$IO" -eq 1 -a "$OOM" -eq 1 -a "$LISTED" -eq 1 -a "$COUNTED" -le "$SCHED"
DUMPS=$(grep -c 'sendto([0-9]*<socket:\[[0-9]*\]>, .*NETLINK\|sendto(.*nlmsg_type=0x12' "$TMP/quiet.strace")
check "a socket-less process watched alone: one sock_diag dump (its first sample), not one a refresh ($DUMPS)" \
    test "$DUMPS" -eq 1
check "and its row still has every value (rates of 0, a score)" bash -c "
    grep -E '^ *$S ' '$TMP/quiet.txt' | tail -1 | grep -Eq '^ *$S +0 +0 +0\.0 +0 +[0-9]+ +0 +0 '"

# ---- a multi-threaded process: one pread a thread a refresh, its threads listed and opened once ----
start_target mt "$TARGETS/threads" 6 "$TMP/gap"; MT=$TARGET_PID
wait_ready mt || fail "threads target did not start"
NT=$(ls "/proc/$MT/task" | wc -l)
strace -f -y -e trace=openat,getdents64,pread64 -o "$TMP/mt.strace" \
    "$DIAGTOP" -b --json -n 6 -d 0.5 -p "$MT" >"$TMP/mt.json" 2>"$TMP/mt.err"
OPENED=$(grep -c "openat([0-9]*</proc>, \"$MT/task/[0-9]*/schedstat\"" "$TMP/mt.strace")
LISTED=$(grep -c "getdents64([0-9]*</proc/$MT/task>" "$TMP/mt.strace")
READ=$(grep -c "pread64([0-9]*</proc/$MT/task/[0-9]*/schedstat>" "$TMP/mt.strace")
check "$NT threads over 6 refreshes: each schedstat opened once ($OPENED), the threads listed once (getdents calls: $LISTED), read every refresh ($READ)" \
    test "$OPENED" -eq "$NT" -a "$LISTED" -le 2 -a "$READ" -ge $((NT * 5))
check "... and CSW/s is every thread's: the one that wakes each millisecond makes it about 1,000" json_eval "$TMP/mt.json" "
    all(700 <= proc($MT, d)['scheduler']['switches_per_sec'] <= 1300 for d in docs[1:])"
stop_pid "$MT"
start_target churn "$TARGETS/churn"; CH=$TARGET_PID
wait_ready churn || fail "churn target did not start"
"$DIAGTOP" -b --json -n 4 -d 0.5 -p "$CH" >"$TMP/churn.json" 2>"$TMP/churn.err"
check "threads born and ending all the time: WAIT% and CSW/s still read at every sample (listed again as needed)" \
    json_eval "$TMP/churn.json" "
    all(proc($CH, d)['scheduler']['switches_per_sec'] is not None and proc($CH, d)['scheduler']['switches_per_sec'] > 0
        for d in docs[1:])"
stop_pid "$CH"

# ---- a writer that starts after a quiet spell: the skipped reads must not hide its first bytes ----
start_target late "$BASH" -c "sleep 2.5; exec '$TARGETS/diskio' '$TMP' $((4 * MIB)) 0"; L=$TARGET_PID
"$DIAGTOP" -b --json -n 8 -d 1 -p "$L" >"$TMP/late.json" 2>"$TMP/late.err"
check "a writer quiet for 2.5 s: 0 while it sleeps, then within 10% of 4 MiB/s" json_eval "$TMP/late.json" "
    all(proc($L, d)['disk']['write_bytes_per_sec'] == 0 for d in docs[1:3]) and
    all(abs(proc($L, d)['disk']['write_bytes_per_sec'] - 4 * $MiB) <= 0.1 * 4 * $MiB for d in docs[-2:])"
stop_pid "$L"

# ---- a connection made while watched: its owner is looked for at once, not at the next periodic count ----
start_target rcv "$TARGETS/tcprate" recv; RCV=$TARGET_PID
wait_ready rcv || fail "receiver did not start"
"$DIAGTOP" -b --json -n 5 -d 1 -p "$RCV" >"$TMP/net.json" 2>"$TMP/net.err" &
WATCH=$!
PIDS+=("$WATCH")
sleep 1.2
start_target snd "$TARGETS/tcprate" send "$(awk '{print $2}' "$TMP/rcv.out")" $((3 * MIB)); SND=$TARGET_PID
wait "$WATCH"
check "a receiver sampled before it accepted: within 10% of 3 MiB/s two samples later (under the 5 s recount)" \
    json_eval "$TMP/net.json" "
    proc($RCV, docs[0])['network']['received_bytes'] == 0 and
    all(abs(proc($RCV, d)['network']['received_bytes_per_sec'] - 3 * $MiB) <= 0.1 * 3 * $MiB for d in docs[-2:])"
stop_pid "$SND"

# ---- a connection pool's reconnect: same descriptor number, same count, a new socket every 3 s ----
start_target pool "$TARGETS/tcprate" send "$(awk '{print $2}' "$TMP/rcv.out")" $((3 * MIB)) 3; POOL=$TARGET_PID
wait_ready pool || fail "reconnecting sender did not start"
"$DIAGTOP" -b --json -n 9 -d 1 -p "$RCV,$POOL" >"$TMP/pool.json" 2>"$TMP/pool.err"
check "a sender reconnecting every 3 s: every sample above 0, the mean over 8 s at least 70% of 3 MiB/s, both ends" \
    json_eval "$TMP/pool.json" "
    all(proc(p, d)['network'][k] > 0 for d in docs[1:] for p, k in (($POOL, 'sent_bytes_per_sec'),
                                                                    ($RCV, 'received_bytes_per_sec'))) and
    all(sum(proc(p, d)['network'][k] for d in docs[1:]) / len(docs[1:]) >= 0.7 * 3 * $MiB
        for p, k in (($POOL, 'sent_bytes_per_sec'), ($RCV, 'received_bytes_per_sec')))"
stop_pid "$POOL"
stop_pid "$RCV"

# ---- an oom_score_adj written while watched: the score follows within the recheck (5 s) ----
"$DIAGTOP" -b --json -n 8 -d 1 -p "$S" >"$TMP/oom.json" 2>"$TMP/oom.err" &
WATCH=$!
PIDS+=("$WATCH")
sleep 1.5
echo 700 >"/proc/$S/oom_score_adj"
wait "$WATCH"
NOW=$(cat "/proc/$S/oom_score")
check "oom_score_adj 700 written after 1.5 s: the last sample has the kernel's new score ($NOW)" \
    json_eval "$TMP/oom.json" "
    proc($S, docs[0])['oom_score'] != $NOW and proc($S)['oom_score'] == $NOW"
finish
