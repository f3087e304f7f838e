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

# w in the leak view: who holds the class under the cursor (the first row)
tui_keys A
check "A: the JVM's leak view, w offered" tui_wait 'w who holds it' 20
tui_keys w
check "w asks first: the JVM pauses for a full GC and the write" tui_wait \
    "Who holds .*: a heap dump pauses $R for a full GC and its write \(heap .* used" 10
check "... naming the free disk where the dump goes (the question wraps)" tui_wait "\([0-9.]+ GiB free\), then read" 5
CLS=$(tui_screen | sed -n 's/.*Who holds \(.*\): a heap dump pauses.*/\1/p' | head -1)
tui_keys y
check "y: the merged paths from GC roots to every instance of $CLS, each with its retained bytes" tui_wait \
    "Shortest paths from GC roots to [0-9]+ instances of .*: [0-9]+ held through strong references" 40
check "... the tree, from a root down" tui_wait "^ +[0-9]+ +[0-9.]+ ([KMG]i)?B +(class |thread |local )" 5
check "... in a pane titled by the question" tui_wait "Who holds ${CLS//[/\\[} in $R" 5
tui_keys Escape
check "Esc: back" tui_wait "^ *$R .* java" 5
check "the JVM runs on" kill -0 "$R"
tui_keys q
check "quits cleanly" tui_wait_exit
finish
