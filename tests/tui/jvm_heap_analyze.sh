#!/usr/bin/env bash
# D then h on a JVM writes its heap dump; a in the dump pane reads it there, in the pane's worker with its progress:
# the summary, the leak suspect (class Retention, accumulated in its map's table over the map's nodes) and the
# histogram with retained sizes, in a real terminal (the summary's line wraps at 100 columns). Esc closes the pane, and the JVM runs on.
. "$(dirname "$0")/../lib.sh"
JAR=$TARGETS/java/retention.jar
[ -f "$JAR" ] || { fail "no $JAR (make targets)"; finish; }
export DIAGTOP_DUMP_DIR=$TMP/dumps
mkdir -p "$DIAGTOP_DUMP_DIR"
start_target ret java -Xmx256m -javaagent:"$JAR" --add-opens java.base/java.util=ALL-UNNAMED \
    --add-opens java.base/java.lang=ALL-UNNAMED -cp "$JAR" Retention 20000
R=$TARGET_PID
wait_ready ret || fail "Retention did not start"

tui_start 100 40 "$DIAGTOP -d 1 -p $R"
tui_wait "^ *$R .* java" 10 || fail "no row for the JVM"
tui_keys D
check "D on a JVM offers its heap dump" tui_wait 'h heap dump \(\.hprof\.gz by the JVM\)\? \[c/h/N\]' 10
tui_keys h
check "h: the JVM writes it, and the pane offers to analyze it" tui_wait 'a: analyze it here' 30
tui_keys a
check "a: the summary, with the layout inferred" tui_wait 'layout: compressed oops' 30
check "... naming the file read, its objects and classes" tui_wait "/dumps/heap\.java\.$R\.[0-9-]+\.hprof\.gz: [0-9]+\$" 5
check "... the leak suspect, class Retention, and where its bytes pile up" tui_wait \
    '1\. class Retention @0x[0-9a-f]+ retains' 5
check "... accumulated in the map's table over its 20000 nodes" tui_wait \
    'accumulated in java\.util\.HashMap\$Node\[\] @0x[0-9a-f]+ .*over 20000 objects' 5
check "the key bar offers a" tui_wait 'a analyze' 5
tui_keys Escape
check "Esc: back to the table" tui_wait "^ *$R .* java" 5
check "the JVM runs on" kill -0 "$R"
tui_keys q
check "quits cleanly" tui_wait_exit
finish
