#!/usr/bin/env bash
# At exactly 80x24 no prompt or message is cut: each wraps onto as many lines as it needs, from the bottom up, and
# the table gives up those lines while it is shown. Checked on the messages a new user hit (issue 27): the D
# question with its answer keys, the refusals of G and A with what would make them work, and permission refusals
# with their cause. For each: its last word is on screen, and the screen's lines joined read the whole message.
. "$(dirname "$0")/../lib.sh"

start_target threads "$TARGETS/threads" 2; P=$TARGET_PID
wait_ready threads || fail "target did not start"
mkdir "$TMP/dumps"
export DIAGTOP_DUMP_DIR="$TMP/dumps"

# joined: the screen's lines joined by one space, so that a wrapped message reads as one line again.
joined() { tui_screen | sed 's/^ *//; s/ *$//' | paste -sd' '; }
# shows WHAT REGEX LAST_WORD: the message is on screen whole (joined) and its last word is on a line of it.
shows() {
    local i
    for i in $(seq 50); do
        joined | grep -Eq -- "$2" && tui_screen | grep -qF -- "$3" && return 0
        sleep 0.1
    done
    echo "  $1: no match for /$2/ with '$3' on screen" >&2
    return 1
}
# no_line_over_80: tmux cuts nothing itself; this says that nothing was drawn past the width either.
no_line_over_80() { ! tui_screen | awk 'length($0) > 80 { bad = 1 } END { exit !bad }'; }

tui_start 80 24 "$DIAGTOP -d 1 -p $P"
tui_wait "^ *$P " || fail "no row"

tui_keys D
check "D: the whole question with its answer keys" shows D \
    "Dump $P to $TMP/dumps/core\.threads\.$P\.[0-9-]+ \(up to [0-9]+ MiB, [^)]*\)\? \[y/N\]" "[y/N]"
check "D: nothing drawn past 80 columns" no_line_over_80
check "D: the table keeps its row while the question is shown" tui_wait "^ *$P "
tui_keys n
check "n: no dump written" tui_wait '^no dump written'
check "n wrote nothing" test -z "$(ls -A "$TMP/dumps")"

tui_keys G
check "G: the refusal whole, down to what would give a GC" shows G \
    'GC is not available for this process: it needs a Go program with the gops agent or a JVM \(HotSpot attach\) or a native program with the diagtop agent \(LD_PRELOAD=libdiagtop-agent\.so\)' \
    "(LD_PRELOAD=libdiagtop-agent.so)"
check "G: the table keeps its row while the refusal is shown" tui_wait "^ *$P "
tui_keys A
check "A: the refusal whole, down to what would give a heap summary" shows A \
    'heap summary is not available for this process: it needs a Go program .* \(LD_PRELOAD=libdiagtop-agent\.so\)' \
    "(LD_PRELOAD=libdiagtop-agent.so)"
check "A: nothing drawn past 80 columns" no_line_over_80

# The help wraps each key's text under itself.
tui_keys h
for i in $(seq 40); do tui_screen | grep -q '^ Mouse:' && break; tui_keys Down; sleep 0.1; done
check "help: C's text whole, to its last word" shows help \
    "CPU profile: live top functions by diagtop's sampler \(Go: the runtime's 30 s pprof; Java: JFR, live\)" "JFR, live)"
check "help: the mouse line whole" shows mouse "again to invert\)\." "invert)."
tui_keys Escape
sleep 8 # the longest message above expires (a long one stays longer, to be read)
check "the key bar is back once the message expired" bash -c "tmux -L '$TMUX_SOCKET' capture-pane -p | tail -1 | grep -q '^F1Help'"
tui_keys q
check "quits cleanly" tui_wait_exit

# Permission refusals: their cause and what would help are the end of the message.
if [ "$(id -u)" = 0 ]; then
    # Another user's process: diagtop as nobody, the target is root's.
    tui_start 80 24 "env XDG_CONFIG_HOME=/nonexistent XDG_CACHE_HOME=/nonexistent HOME=/nonexistent \
        DIAGTOP_DUMP_DIR=/tmp setpriv --reuid=nobody --regid=nogroup \
        --clear-groups --inh-caps=-all $DIAGTOP -d 1 -p $P"
    tui_wait "^ *$P " || fail "no row as nobody"
    tui_keys D
    check "another user's process: the refusal down to its remedy" shows uid \
        "cannot attach to $P: permission denied \(it runs as uid 0, diagtop as uid [0-9]+; run as that user or with CAP_SYS_PTRACE, e.g\. through sudo\)" \
        "through sudo)"
    tui_keys q
    check "quits cleanly as nobody" tui_wait_exit

    # A process that is not dumpable, seen by root without CAP_SYS_PTRACE: the message of the issue.
    start_target nodump python3 -c 'import ctypes, time
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
print("ready", flush=True)
time.sleep(600)'
    Q=$TARGET_PID
    wait_ready nodump || fail "non-dumpable target did not start"
    tui_start 80 24 "capsh --drop=cap_sys_ptrace -- -c 'exec $DIAGTOP -d 1 -p $Q'"
    tui_wait "^ *$Q " || fail "no row without CAP_SYS_PTRACE"
    tui_keys D
    check "not dumpable: the question whole" shows nodump-ask "Dump $Q to .*\? \[y/N\]" "[y/N]"
    tui_keys y
    check "not dumpable: the refusal down to its cause and remedy" shows nodump \
        "dump failed: cannot attach to $Q: permission denied \(the process is not dumpable, or a security module refuses; needs CAP_SYS_PTRACE\)" \
        "CAP_SYS_PTRACE)"
    check "not dumpable: nothing drawn past 80 columns" no_line_over_80
    tui_keys Escape q
    check "quits cleanly without CAP_SYS_PTRACE" tui_wait_exit
else
    skip "permission refusals: the test starts diagtop as nobody and without CAP_SYS_PTRACE, which needs root"
fi
finish
