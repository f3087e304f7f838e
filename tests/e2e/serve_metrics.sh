#!/usr/bin/env bash
# diagtop serve's /metrics: promtool accepts the exposition, and a sleeping target's values are those of
# `diagtop -b --json` (RSS, virtual size, threads, CPU seconds; the machine's memory total), its block I/O delay
# the kernel's (absent while delay accounting is off).
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/tools/serve_lib.sh"

start_target threads "$TARGETS/threads" 3; T=$TARGET_PID
wait_ready threads || fail "target did not start"
serve_start server --tokens "$TOKENS" || fail "server did not start"
curl -s -H "$AUTH_READ" "$URL/metrics?top=100000" >"$TMP/all.prom"
check "promtool check metrics passes (every process)" bash -c "promtool check metrics <'$TMP/all.prom' >'$TMP/promtool.txt' 2>&1 || { cat '$TMP/promtool.txt' >&2; false; }"
check "text/plain version 0.0.4" bash -c "curl -s -D - -o /dev/null -H '$AUTH_READ' '$URL/metrics' | grep -qi '^Content-Type: text/plain; version=0.0.4'"
DELAYACCT=$(cat /proc/sys/kernel/task_delayacct 2>/dev/null || echo 0)
curl -s -H "$AUTH_READ" "$URL/metrics?filter=$T&top=10" >"$TMP/t.prom"
# (another test may switch delay accounting meanwhile: then the IO delay is not judged)
[ "$(cat /proc/sys/kernel/task_delayacct 2>/dev/null || echo 0)" = "$DELAYACCT" ] || DELAYACCT=changed
"$DIAGTOP" -b --json -n 1 -p "$T" >"$TMP/batch.json"
check "the target's values match -b --json" python3 - "$TMP/t.prom" "$TMP/batch.json" "$T" "$DELAYACCT" <<'PY'
import json, os, re, sys
prom, batch, pid = open(sys.argv[1]).read(), json.loads(open(sys.argv[2]).read().splitlines()[-1]), sys.argv[3]
p = [x for x in batch["processes"] if x["pid"] == int(pid)][0]
def val(name, extra=""):
    m = re.search(r'^%s\{pid="%s",comm="[^"]*"%s\} (\S+)$' % (name, pid, extra), prom, re.M)
    assert m, name
    return float(m.group(1))
assert val("diagtop_process_resident_memory_bytes") == p["rss_bytes"]
assert val("diagtop_process_virtual_memory_bytes") == p["vsize_bytes"]
assert val("diagtop_process_threads") == p["threads"]
assert abs(val("diagtop_process_cpu_seconds_total", ',mode="user"') - p["user_cpu_seconds"]) < 0.02
assert abs(val("diagtop_process_cpu_seconds_total", ',mode="system"') - p["system_cpu_seconds"]) < 0.02
assert val("diagtop_process_open_fds") >= 3
mem = float(re.search(r"^diagtop_system_memory_total_bytes (\S+)$", prom, re.M).group(1))
assert mem == batch["system"]["memory"]["total_bytes"]
assert re.search(r'^diagtop_processes_exported 1$', prom, re.M)
# IO delay: stat's field 42 in seconds while delay accounting is on, absent (not 0) while it is off
delayacct = sys.argv[4]
blkio = int(open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()[39]) / os.sysconf("SC_CLK_TCK")
present = re.search(r'^diagtop_process_io_delay_seconds_total\{pid="%s",' % pid, prom, re.M)
if delayacct != "changed":
    assert (val("diagtop_process_io_delay_seconds_total") == blkio) if delayacct == "1" else not present
PY
check "top=3 exports three" grep -q '^diagtop_processes_exported 3$' <(curl -s -H "$AUTH_READ" "$URL/metrics?top=3")
check "a bad top 400" test "$(code GET '/metrics?top=x' -H "$AUTH_READ")" = 400
check "stops cleanly" serve_stop
finish
