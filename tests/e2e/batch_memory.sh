#!/usr/bin/env bash
# RES as top, ps and VmRSS show it (statm, not stat's lagging rss) on ten idle targets, in --json and sorted by
# RES; and RES, VIRT, SHR and RES/min in batch text carry a unit (65.2M, +58.0M) while --json keeps raw bytes.
. "$(dirname "$0")/../lib.sh"

HOGS=()
for mib in 1 2 3 5 8 13 21 34 48 64; do
    start_target "hog$mib" "$TARGETS/hog" "$mib"
    HOGS+=("$TARGET_PID")
done
for mib in 1 2 3 5 8 13 21 34 48 64; do wait_ready "hog$mib" || fail "hog $mib never allocated its memory"; done
HOG64=${HOGS[9]}
LIST=$(IFS=,; echo "${HOGS[*]}")
vmrss_json() { # the targets' VmRSS in bytes, as a JSON object keyed by pid
    local pid sep='' out='{'
    for pid in "${HOGS[@]}"; do
        out+="$sep\"$pid\": $(awk '/^VmRSS:/ {print $2 * 1024}' "/proc/$pid/status")"
        sep=', '
    done
    echo "$out}"
}

"$DIAGTOP" -b -n 2 -d 0.3 --json -p "$LIST" >"$TMP/rss.json"
vmrss_json >"$TMP/vmrss.json"
# stat's rss of an idle process stays up to a few hundred KiB behind: the check would fail on it
check "RES equals VmRSS within 8 KiB on ten processes" json_eval "$TMP/rss.json" "
    (lambda v: len(last['processes']) == 10 and all(abs(p['rss_bytes'] - v[str(p['pid'])]) <= 8192
     for p in last['processes']) or print(' ', [(p['pid'], p['rss_bytes'], v[str(p['pid'])])
     for p in last['processes']], file=sys.stderr))(json.load(open('$TMP/vmrss.json')))"
check "%MEM follows the same RES" json_eval "$TMP/rss.json" "
    all(abs(p['mem_percent'] - 100.0 * p['rss_bytes'] / last['system']['memory']['total_bytes']) < 0.02
        for p in last['processes'])"

"$DIAGTOP" -b -n 2 -d 0.3 --json -s res >"$TMP/sorted.json"
vmrss_json >"$TMP/vmrss2.json"
check "sorted by RES over the whole table: sorted by the exact value, which matches VmRSS" json_eval "$TMP/sorted.json" "
    (lambda v: all(a['rss_bytes'] >= b['rss_bytes'] for a, b in zip(last['processes'], last['processes'][1:])) and
     all(abs(proc(int(k))['rss_bytes'] - b) <= 8192 for k, b in v.items()))(json.load(open('$TMP/vmrss2.json')))"

start_target leaker "$TARGETS/leaker" 1; LEAKER=$TARGET_PID
sleep 0.5
"$DIAGTOP" -b -n 3 -d 1 -p "$HOG64,$LEAKER,$LIST" >"$TMP/text.txt"
# the last table's cells, by title (COMMAND last, so splitting on blanks keeps the other cells whole)
cells() { # cells PID|all: prints "TITLE=CELL" lines of PID's row (or every row) in the last table
    python3 - "$TMP/text.txt" "$1" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
head = max(i for i, l in enumerate(lines) if l.split()[:1] == ["PID"])
titles = lines[head].split()
for l in lines[head + 1:]:
    f = l.split()
    if f and (f[0] == sys.argv[2] or sys.argv[2] == "all"):
        for t, c in zip(titles, f):
            print("%s=%s" % (t, c))
PY
}
cells "$HOG64" >"$TMP/hog64.cells"
cells "$LEAKER" >"$TMP/leaker.cells"
check "batch text: a 64 MiB target's RES reads 6x.xM" grep -qE '^RES=6[0-9]\.[0-9]M$' "$TMP/hog64.cells"
check "batch text: VIRT and SHR carry a unit too" bash -c \
    "grep -qE '^VIRT=[0-9]+(\.[0-9])?[KMGTPE]$' '$TMP/hog64.cells' && grep -qE '^SHR=([0-9]+(\.[0-9])?[KMGTPE]|0)$' '$TMP/hog64.cells'"
check "batch text: RES/min of a target leaking 1 MiB/s reads +NN.NM (per minute, as its title says)" \
    grep -qE '^RES/min=\+[0-9]+(\.[0-9])?M$' "$TMP/leaker.cells"
cells all >"$TMP/all.cells"
check "batch text: no RES cell of the $(grep -c '^RES=' "$TMP/all.cells") rows is a bare number" bash -c \
    "grep '^RES=' '$TMP/all.cells' | grep -vE '^RES=([0-9]+(\.[0-9])?[KMGTPE]|0)$'; test \${PIPESTATUS[1]} -eq 1"
check "--json keeps raw bytes" json_eval "$TMP/rss.json" "
    all(isinstance(p['rss_bytes'], int) and isinstance(p['vsize_bytes'], int) for p in last['processes'])"
[ "$FAILS" -gt 0 ] && sed 's/^/  | /' "$TMP/text.txt" | cut -c1-120 | tail -15
finish
