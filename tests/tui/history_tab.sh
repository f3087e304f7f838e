#!/usr/bin/env bash
# The details pane's History tab in a real terminal: a process that sleeps 3 s and spins 3 s, watched for a while
# before the pane opens, shows on opening a CPU% line that goes high and low again and again (the history is the
# table's, kept from before the pane opened), with RES and the rates read while the pane is open.
. "$(dirname "$0")/../lib.sh"

start_target busyidle "$TARGETS/idlespin" 3 3 repeat; B=$TARGET_PID
wait_ready busyidle || fail "target did not start"
tui_start 160 40 "$DIAGTOP -d 0.5 -p $B"
tui_wait "^ *$B " || fail "no row"
sleep 22 # about 22 samples (one a second): nearly four busy/idle cycles
tui_keys Enter 8
check "8 opens the History tab" tui_wait '\[8 History\]'
check "the history holds what was sampled before the pane opened" tui_wait 'The last [0-9]+s: (1[5-9]|2[0-9]|3[0-9]) samples'

# The CPU% line's blocks: runs of high (the upper half) and low (the lower quarter) alternate at least 4 times.
cpu_alternates() {
    tui_screen | python3 -c '
import sys
line = next((l for l in sys.stdin if l.startswith("CPU%")), "")
spark = line[4:].split("last")[0].strip()
levels = ["H" if c in "▅▆▇█" else "L" if c in "▁▂" else "" for c in spark]
runs = [x for i, x in enumerate(levels) if x and x != next((y for y in reversed(levels[:i]) if y), None)]
print("CPU% line:", spark, "runs:", "".join(runs), file=sys.stderr)
sys.exit(0 if len(runs) >= 5 else 1)'
}
check "CPU% alternates high and low" cpu_alternates
# (busy phases reach one CPU when the machine is idle; under the parallel tests' load, a share of it)
check "CPU% spans idle to busy: min under 10%, max over half a CPU" tui_wait '^CPU% .* min [0-9]\.[0-9]%  max ([5-9][0-9]|1[0-9][0-9])\.[0-9]%'
check "RES is drawn with its last value" tui_wait '^RES +[▁▂▃▄▅▆▇█]+ +last [0-9.]+ [KMG]iB'
check "WAIT% is read while the pane is open" tui_wait '^WAIT% +[▁▂▃▄▅▆▇█ ]+ +last [0-9.]+%' 5
check "DISK W/s is read while the pane is open" tui_wait '^DISK W/s +[▁▂▃▄▅▆▇█ ]+ +last ' 5
tui_keys 2
check "Memory: RSS over the time kept, with its rate" tui_wait 'RSS, last [0-9]+ s \([0-9]+ samples\): [▁▂▃▄▅▆▇█]+ .*[+-][0-9.]+ [KMG]?i?B/min'
tui_keys Escape q
check "quits cleanly" tui_wait_exit
check "exit status 0" test "$TUI_EXIT" = 0
stop_pid "$B"
finish
