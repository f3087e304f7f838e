#!/usr/bin/env bash
# G on a JVM at 80x24: a full GC pauses the JVM for as long as its heap takes, so G asks first and names the heap
# (used and committed, from the JVM's hsperfdata). n runs nothing (the JVM's own GC log shows no System.gc()
# collection, no GC result appears, the status says it was cancelled); y runs it. (Go's GC and malloc_trim start at
# once: tests/tui/runtime_panes.sh, tests/e2e/agent_tui.sh.)
. "$(dirname "$0")/../lib.sh"
java_classes Leaky || fail "javac Leaky.java"
cd "$TMP" || exit 1
start_target leaky java -Xmx256m -Xlog:gc:file="$TMP/gc.log" -cp "$CP" Leaky; J=$TARGET_PID
cd "$ROOT" || exit 1
wait_ready leaky || fail "Leaky did not start"
full_gcs() { grep -c 'Pause Full' "$TMP/gc.log"; }

tui_start 80 24 "$DIAGTOP -d 1 -p $J"
tui_wait "^ *$J .* java" 10 || fail "no row for the JVM"
tui_keys G
check "G on a JVM asks first, naming the heap used and committed" tui_wait \
    "Full GC pauses $J: heap [0-9.]+ ([KMG]i)?B used, [0-9.]+ ([KMG]i)?B committed\. Run\? \[y/N\]" 5
check "... and runs nothing meanwhile" bash -c "sleep 1; [ \$(grep -c 'Pause Full' '$TMP/gc.log') = 0 ]"
tui_keys n
check "n: the status says the GC was cancelled" tui_wait 'GC cancelled: nothing was run' 5
check "n: no GC result, no pane" bash -c "$(declare -f tui_screen); TMUX_SOCKET=$TMUX_SOCKET
    sleep 1; ! tui_screen | grep -Eq 'GC by hotspot|GC of $J'"
check "n: the JVM ran no full GC" test "$(full_gcs)" = 0
tui_keys G
tui_wait "Full GC pauses $J: " 5 || fail "G did not ask again"
tui_keys y
check "y: the GC runs, by hotspot, with the heap before and after" tui_wait 'GC by hotspot in [0-9.]+ ms' 20
check "y: the JVM ran one full GC (Diagnostic Command: jcmd GC.run)" bash -c "for i in \$(seq 50); do
    [ \$(grep -c 'Pause Full' '$TMP/gc.log') = 1 ] && exit 0; sleep 0.1; done; cat '$TMP/gc.log' >&2; exit 1"
tui_keys Escape q
check "quits cleanly" tui_wait_exit
finish
