#!/usr/bin/env bash
# diagtop -b --json against real targets: a CPU burner, a memory hog of known size and a sleeper whose command
# line has spaces, UTF-8, an escape sequence and a newline.
. "$(dirname "$0")/../lib.sh"

HOG_MIB=384
start_target burner "$TARGETS/burner"; BURNER=$TARGET_PID
start_target hog "$TARGETS/hog" $HOG_MIB; HOG=$TARGET_PID
start_target sleeper "$TARGETS/sleeper" "with space" "café" $'\e[31mred\e[0m' $'new\nline'; SLEEPER=$TARGET_PID
wait_ready hog || fail "hog never allocated its memory"
sleep 0.5 # let the burner accumulate CPU time

# Other tests run in parallel (with burners of their own): orderings are asserted among this test's targets
# (-p), and the whole table is checked for being sorted.
"$DIAGTOP" -b -n 2 -d 0.5 --json -s cpu >"$TMP/all.json" 2>"$TMP/all.err"
check "the whole table is sorted by CPU% descending" json_eval "$TMP/all.json" \
    "all(a['cpu_percent'] >= b['cpu_percent'] for a, b in zip(last['processes'], last['processes'][1:]))"
"$DIAGTOP" -b -n 2 -d 0.5 --json -s cpu -p "$BURNER,$HOG,$SLEEPER" >"$TMP/cpu.json" 2>"$TMP/cpu.err"
check "exit status 0 with two documents" test $? -eq 0 -a "$(wc -l <"$TMP/cpu.json")" -eq 2
check "every line is one JSON document with the schema's fields" json_eval "$TMP/cpu.json" "all(
    set(['time','timestamp','system','processes']) <= set(d) and
    set(['pid','ppid','user','uid','state','cpu_percent','mem_percent','rss_bytes','vsize_bytes','shared_bytes',
         'threads','nice','priority','start_time','user_cpu_seconds','system_cpu_seconds','name','cmdline','exe',
         'runtime','rss_growth_bytes_per_min','argv','agent']) <= set(d['processes'][0])
    for d in docs)"
check "sorted by cpu: the burner is first" json_eval "$TMP/cpu.json" "last['processes'][0]['pid'] == $BURNER"
check "the burner's CPU% is the CPU time it used over the interval (whatever the load of parallel tests)" \
    json_eval "$TMP/cpu.json" "
    (lambda used: abs(proc($BURNER)['cpu_percent'] - 100 * used / last['interval_seconds']) <= 8 and
                  proc($BURNER)['cpu_percent'] <= 110)(
        proc($BURNER)['user_cpu_seconds'] + proc($BURNER)['system_cpu_seconds'] -
        proc($BURNER, docs[0])['user_cpu_seconds'] - proc($BURNER, docs[0])['system_cpu_seconds'])"
check "the first document already shows current CPU over a short initial sample, not a lifetime average" \
    json_eval "$TMP/cpu.json" "0.1 <= docs[0]['interval_seconds'] <= 5 and proc($BURNER, docs[0])['cpu_percent'] > 0 and
        proc($HOG, docs[0])['cpu_percent'] < 5"
check "the sleeper is idle" json_eval "$TMP/cpu.json" "proc($SLEEPER)['cpu_percent'] < 5"

"$DIAGTOP" -b -n 1 -d 0.2 --json -s mem >"$TMP/mem.json"
"$DIAGTOP" -b -n 1 -d 0.2 --json -s mem -p "$BURNER,$HOG,$SLEEPER" >"$TMP/mem3.json"
check "sorted by mem: the hog is first" json_eval "$TMP/mem3.json" "last['processes'][0]['pid'] == $HOG"
check "the whole table is sorted by RSS" json_eval "$TMP/mem.json" \
    "all(a['rss_bytes'] >= b['rss_bytes'] for a, b in zip(last['processes'], last['processes'][1:]))"
check "the hog's RSS is its size (exact integer, within 8 MiB)" json_eval "$TMP/mem.json" \
    "isinstance(proc($HOG)['rss_bytes'], int) and 0 <= proc($HOG)['rss_bytes'] - $HOG_MIB*2**20 <= 8*2**20"
check "the hog's virtual size covers it" json_eval "$TMP/mem.json" "proc($HOG)['vsize_bytes'] >= $HOG_MIB*2**20"
check "%MEM matches RSS over total memory" json_eval "$TMP/mem.json" \
    "abs(proc($HOG)['mem_percent'] - 100.0*proc($HOG)['rss_bytes']/last['system']['memory']['total_bytes']) < 0.02"

check "argv is exact, escape and newline included" json_eval "$TMP/mem.json" \
    "proc($SLEEPER)['argv'] == ['$TARGETS/sleeper', 'with space', 'café', '\x1b[31mred\x1b[0m', 'new\nline']"
check "name, exe, user, runtime, state" json_eval "$TMP/mem.json" "
    proc($SLEEPER)['name'] == 'sleeper' and proc($SLEEPER)['exe'] == '$TARGETS/sleeper' and
    proc($SLEEPER)['user'] == '$(id -un)' and proc($SLEEPER)['uid'] == $(id -u) and
    proc($SLEEPER)['runtime'] == 'native' and proc($SLEEPER)['agent'] is False and proc($SLEEPER)['state'] == 'S'
    and proc($SLEEPER)['ppid'] == $$ and proc($SLEEPER)['threads'] == 1 and proc($SLEEPER)['nice'] == 0"
check "start time is ISO 8601 and recent" json_eval "$TMP/mem.json" "
    __import__('re').fullmatch(r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ', proc($SLEEPER)['start_time']) and
    abs(__import__('datetime').datetime.strptime(proc($SLEEPER)['start_time'], '%Y-%m-%dT%H:%M:%SZ')
        .replace(tzinfo=__import__('datetime').timezone.utc).timestamp() - last['timestamp']) < 120"
check "CPU seconds add up for the burner" json_eval "$TMP/cpu.json" \
    "proc($BURNER)['user_cpu_seconds'] + proc($BURNER)['system_cpu_seconds'] >= 0.5"
check "kernel threads have no command line and are flagged" json_eval "$TMP/mem.json" \
    "proc(2)['kernel_thread'] is True and proc(2)['cmdline'] is None and proc(2)['name'] == 'kthreadd'"
check "system totals: per-CPU usage and task counts" json_eval "$TMP/mem.json" "
    len(last['system']['cpu']['per_cpu']) == $(nproc) and last['system']['tasks']['total'] >= 4 and
    last['system']['tasks']['total'] == sum(last['system']['tasks'][k] for k in
        ('running','sleeping','stopped','zombie'))"

"$DIAGTOP" -b -n 1 -d 0.2 -p "$SLEEPER,$HOG" >"$TMP/text.txt"
check "text: -p shows only the given processes" test "$(awk '$1 ~ /^[0-9]+$/' "$TMP/text.txt" | wc -l)" -eq 2
check "text: the escape sequence is sanitized" grep -q 'sleeper with space café ?\[31mred?\[0m new?line' "$TMP/text.txt"
check "text: no control byte reaches the output" test "$(tr -d '\n' <"$TMP/text.txt" | tr -d '[:print:]' | LC_ALL=C tr -d '\200-\377' | wc -c)" -eq 0
check "text: header with tasks and memory" grep -Eq '^Tasks: [0-9]+ total' "$TMP/text.txt"

"$DIAGTOP" -b -n 1 -d 0.2 --json -p 999999 >"$TMP/gone.json"
check "a PID that does not exist gives an empty list, not an error" json_eval "$TMP/gone.json" "last['processes'] == []"
finish
