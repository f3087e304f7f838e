#!/usr/bin/env bash
# Many processes, processes vanishing mid-run, threads, a leaking process, and the user filter.
. "$(dirname "$0")/../lib.sh"

start_target forker "$TARGETS/forker" 10000; FORKER=$TARGET_PID
wait_ready forker || fail "forker did not start its children"
MADE=$(awk '{print $2}' "$TMP/forker.out")
"$DIAGTOP" -b -n 1 -d 0.2 --json >"$TMP/many.json"
check "10,000 processes: every child of the forker is listed ($MADE made)" json_eval "$TMP/many.json" \
    "sum(1 for p in last['processes'] if p['ppid'] == $FORKER) == $MADE and $MADE == 10000"

# Processes vanish between refreshes: stop the forker (and its 10,000 children) while diagtop samples, let it
# sample twice more after they are gone, then end it with SIGTERM (a clean exit in batch mode).
"$DIAGTOP" -b -n 400 -d 0.25 --json >"$TMP/vanish.json" 2>"$TMP/vanish.err" &
DT=$!
PIDS+=("$DT")
lines_at_least() { # N: waits up to 60 s for N documents
    local i
    for i in $(seq 600); do [ "$(wc -l <"$TMP/vanish.json")" -ge "$1" ] && return 0; sleep 0.1; done
    return 1
}
lines_at_least 1 # the first document classifies 10,000 new processes: slow under ASan
stop_pid "$FORKER"
lines_at_least $(($(wc -l <"$TMP/vanish.json") + 2))
kill -TERM "$DT"
wait "$DT"
DT_STATUS=$?
check "processes vanishing mid-refresh: no error; SIGTERM ends batch output cleanly" bash -c \
    "test $DT_STATUS -eq 0 -a \$(wc -l <'$TMP/vanish.json') -ge 3 -a ! -s '$TMP/vanish.err' || { echo status $DT_STATUS; wc -l '$TMP/vanish.json'; head -3 '$TMP/vanish.err'; } >&2; test $DT_STATUS -eq 0 -a \$(wc -l <'$TMP/vanish.json') -ge 3 -a ! -s '$TMP/vanish.err'"
check "the vanished children are gone from the last document" json_eval "$TMP/vanish.json" \
    "sum(1 for p in last['processes'] if p['ppid'] == $FORKER) == 0 and len(docs[0]['processes']) > 10000"

start_target threads "$TARGETS/threads" 8; THREADS=$TARGET_PID
wait_ready threads || fail "threads target did not start"
"$DIAGTOP" -b -n 1 -d 0.2 --json -H -p "$THREADS" >"$TMP/thr.json"
check "-H: the process and its 8 threads, named" json_eval "$TMP/thr.json" "
    len(last['processes']) == 9 and proc($THREADS)['threads'] == 9 and
    sorted(p['name'] for p in last['processes'] if p['thread']) == sorted('worker-%d' % k for k in range(8)) and
    all(p['tgid'] == $THREADS for p in last['processes'])"
"$DIAGTOP" -b -n 1 -d 0.2 --json -p "$THREADS" >"$TMP/nothr.json"
check "without -H threads are hidden" json_eval "$TMP/nothr.json" "len(last['processes']) == 1"
"$DIAGTOP" -b -n 1 -d 0.2 -t -H -p "$THREADS" >"$TMP/tree.txt"
check "tree view hangs threads under their process" bash -c "grep -c 'worker-' '$TMP/tree.txt' | grep -qx 8 && grep -q '└─ worker-' '$TMP/tree.txt'"

start_target leaker "$TARGETS/leaker" 8; LEAKER=$TARGET_PID
"$DIAGTOP" -b -n 4 -d 1 --json -p "$LEAKER" -s growth >"$TMP/leak.json"
check "RES/min of a process leaking 8 MiB/s is about 480 MiB/min" json_eval "$TMP/leak.json" \
    "200*2**20 <= proc($LEAKER)['rss_growth_bytes_per_min'] <= 700*2**20"
check "the first document has no growth yet (no history)" json_eval "$TMP/leak.json" \
    "proc($LEAKER, docs[0])['rss_growth_bytes_per_min'] is None"

"$DIAGTOP" -b -n 1 -d 0.2 --json -u root >"$TMP/root.json"
check "-u root shows only root's processes" json_eval "$TMP/root.json" \
    "len(last['processes']) > 0 and all(p['uid'] == 0 for p in last['processes'])"
finish
