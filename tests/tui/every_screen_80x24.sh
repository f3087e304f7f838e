#!/usr/bin/env bash
# Every screen at exactly 80x24, walked as a new user would: the table, each details tab, each pane (stack and its
# runtime view, CPU profile, heap/leak), every prompt (D, k, filter, search) and refusal (G, A and v on a native
# process), F1 help, F2 setup and the user menu. On each: nothing is drawn past 80 columns; the last word of every
# message, prompt and hint is on screen; the bottom bar ends with a whole key, not a cut word; a line of a pane that
# reaches the last column is marked as cut (>) and scrolls sideways until its end is seen, or it wraps (a message,
# a hint, a detail: its end is on screen). On the table, COMMAND is at least 32 columns wide. The target's path
# and one of its environment variables are longer than the screen is wide.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/targets/agent/lib.sh"

LONG=$(mktemp -d /tmp/every-screen.XXXXXX)
trap 'cleanup; rm -rf "$LONG"' EXIT
BIN=$LONG/a-directory-whose-name-is-long-enough-that-the-path-passes-the-width/threads
mkdir -p "$(dirname "$BIN")"
cp "$TARGETS/threads" "$BIN"
NOTE="a value that is longer than the screen is wide, so that it must wrap to be read, and it ends with zebra-end"
start_target threads env EVERY_SCREEN_NOTE="$NOTE" "$BIN" 2; P=$TARGET_PID
wait_ready threads || fail "target did not start"
mkdir "$TMP/dumps"
export DIAGTOP_DUMP_DIR="$TMP/dumps"

# blankless: the screen's lines joined, without blanks: a path or a value that wrapped reads whole again.
blankless() { tui_screen | tr -d ' \n'; }
# shows WHAT TEXT: TEXT is on screen, possibly wrapped (blanks aside; waits for it).
shows() {
    local i want
    want=$(tr -d ' ' <<<"$2")
    for i in $(seq 50); do
        blankless | grep -qF -- "$want" && return 0
        sleep 0.1
    done
    echo "  $1: '$2' not on screen" >&2
    return 1
}
# last_word WHAT TEXT: the last word of TEXT is on one line of the screen, whole (waits for it).
last_word() {
    local w i
    w=$(awk '{print $NF}' <<<"$2")
    for i in $(seq 50); do
        tui_screen | grep -qF -- "$w" && return 0
        sleep 0.1
    done
    echo "  $1: its last word '$w' is not on screen" >&2
    return 1
}
no_line_over_80() { # in characters (the meters' sparkline is UTF-8)
    tui_screen | python3 -c 'import sys
bad = [l for l in sys.stdin.read().split("\n") if len(l) > 80]
for l in bad: print("  drawn past 80 columns: " + l, file=sys.stderr)
sys.exit(1 if bad else 0)'
}
# bar_whole: the bottom line is a key bar that ends with a whole key or its position, not a cut word.
bar_whole() {
    local bar
    bar=$(tui_screen | tail -1 | sed 's/ *$//')
    [ ${#bar} -le 80 ] && grep -qE '(F10Quit|\[[0-9]+/[0-9]+\]|PgUp/PgDn|Left/Right|scroll|sideways)$' <<<"$bar" && return 0
    echo "  bar: '$bar'" >&2
    return 1
}
# body_marked: every line between the pane's title and its bar that reaches column 80 ends with the cut marker,
# or is a whole line of the pane's text (S saves it to the dump directory: exactly as wide as the screen), or goes
# on on the next line (a message wraps).
body_marked() {
    local saved
    tui_screen >"$TMP/screen.txt"
    tui_keys S Enter
    tui_wait '^saved [0-9]+ lines to' 5 || { echo "  S saved nothing" >&2; return 1; }
    saved=$(ls -t "$TMP"/dumps/* | head -1)
    python3 - "$TMP/screen.txt" "$saved" "$(header_rows)" <<'PY'
import sys
screen = open(sys.argv[1]).read().split("\n")
whole = set(l.rstrip() for l in open(sys.argv[2]).read().split("\n"))
body = screen[int(sys.argv[3]) + 1:23]
def wrapped(i):  # the line goes on on the next one: both are in one line of the text
    nxt = body[i + 1].strip() if i + 1 < len(body) else ""
    return nxt and any(body[i].rstrip() + sep + nxt in w for w in whole for sep in ("", " "))
bad = [l for i, l in enumerate(body) if len(l) == 80 and not l.endswith(">") and l.rstrip() not in whole
       and not wrapped(i)]
for l in bad: print("  cut without a marker: " + l, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}
header_rows() { tui_screen | awk '/^ *$/ { print NR; exit }'; } # the meters end with a blank line
# screen_ok NAME: the checks of every screen.
screen_ok() {
    check "$1: nothing drawn past 80 columns" no_line_over_80
}
pane_ok() {
    screen_ok "$1"
    check "$1: the bar ends with a whole key" bar_whole
}

tui_start 80 24 "$DIAGTOP -d 1"
tui_wait "PID USER" || fail "no table"
# ---- the table ----
check "table: COMMAND starts 32 columns or more from the right edge" command_column_wide
check "table: the meters' task counts end with a whole word" tui_wait 'Tasks: [0-9]+.* (sleeping|sleep)$'
if [ -r /proc/pressure/cpu ]; then
    check "header: pressure after the uptime, in whole percent (a fifth line only on tall terminals)" \
        tui_wait 'Uptime: [0-9:]+  PSI cpu [0-9]+ io [0-9]+ mem [0-9]+$'
fi
pane_ok table
tui_keys F4
tui_keys -l "$BIN"
check "filter: a typed path longer than the line wraps, its end on screen" shows filter "Filter: $BIN"
check "filter: the terminal cursor after the text" bash -c "
    [ \"\$(tmux -L '$TMUX_SOCKET' display -p '#{cursor_flag} #{cursor_y}')\" = '1 23' ]"
screen_ok filter
tui_keys Enter
check "filter: the header shows the path, to its end" tui_wait "^filter: \.\.\..*/threads\$"
tui_wait "^ *$P " || fail "no row of the target under the filter"
tui_keys / t h r e a d s
check "search: the prompt" tui_wait '^Search: threads'
tui_keys Enter

# ---- the details pane, each tab ----
tui_keys Enter
tui_wait '\[1 General\]' || fail "the details pane did not open"
TABS=(General Memory Modules FDs Threads Environment "I/O" History)
for i in 1 2 3 4 5 6 7 8; do
    tui_keys "$i"
    check "details tab $i: its name on screen" tui_wait "\[$i ${TABS[$((i - 1))]}\]" 5
    pane_ok "details tab $i"
    case $i in
    1)
        check "tab 1: the executable's long path, to its end" shows exe "Executable$BIN"
        check "tab 1: the command line, to its last argument" shows cmdline "Command line$BIN 2"
        tui_keys -l '/user:['; tui_keys Enter
        check "tab 1: the namespaces, to the last one" last_word ns "user:[$(stat -L -c %i /proc/$P/ns/user)]"
        ;;
    3) check "tab 3: the module's long path, to its end" shows module "$BIN" ;;
    6)
        tui_keys -l '\'; tui_keys E V E R Y Enter
        check "tab 6: a value longer than the screen, to its last word" shows env "EVERY_SCREEN_NOTE=$NOTE"
        ;;
    8) check "tab 8: each field's line fits, its maximum on the same line" tui_wait '^CPU% .* max [0-9.]+%$' ;;
    esac
done
tui_keys Escape

# ---- the stack pane: frames are cut with a marker and scroll sideways; v says why there is no runtime view ----
tui_keys b
tui_wait "Stack of $P" 15 || fail "the stack pane did not open"
pane_ok stack
check "stack: a line that reaches column 80 is marked as cut" body_marked
check "stack: some frame line is long enough to be cut here" bash -c "tmux -L '$TMUX_SOCKET' capture-pane -p | grep -q '>\$'"
for i in $(seq 12); do tui_keys Right; done
check "stack: Right scrolls to the ends of the lines, marked < on the left" tui_wait '^<' 5
check "stack: no line is cut any more" bash -c "! tmux -L '$TMUX_SOCKET' capture-pane -p | sed '\$d' | grep -q '>\$'"
check "stack: the bar names Left/Right (once S's message expired)" tui_wait 'Left/Right +\[[0-9]+/[0-9]+\]$' 15
for i in $(seq 12); do tui_keys Left; done
check "stack: Left scrolls back" bash -c "! tmux -L '$TMUX_SOCKET' capture-pane -p | grep -q '^<'"
tui_keys v
check "v on a native process: the reason, to its last word" last_word v \
    "no runtime view: a native process (Go with the gops agent, or a JVM, has one)"
screen_ok v
tui_keys Escape

# ---- prompts and refusals ----
tui_keys D
check "D: the question, to its answer keys" last_word D "? [y/N]"
screen_ok D
tui_keys n
check "D: n answers" tui_wait '^no dump written'
tui_keys k
check "k: the signal menu" tui_wait 'Send signal'
screen_ok "signal menu"
tui_keys Enter
check "k: the question, to its answer keys" tui_wait "^Send SIG[A-Z]+ to $P \(threads\)\? \[y/N\]"
tui_keys n
check "k: n answers" tui_wait '^no signal sent'
tui_keys G
check "G: the refusal, to its last word" last_word G "(LD_PRELOAD=libdiagtop-agent.so)"
screen_ok G
tui_keys A
check "A: the refusal, to its last word" last_word A "(LD_PRELOAD=libdiagtop-agent.so)"
sleep 8 # the refusal expires: the bar is back

# ---- CPU profile ----
tui_keys C
tui_wait "CPU profile of $P" 15 || fail "the CPU pane did not open"
sleep 2
pane_ok cpu
check "cpu: a line that reaches column 80 is marked as cut" body_marked
tui_keys C Escape

# ---- F1, F2, u ----
tui_keys F1
check "F1: the help" tui_wait 'diagtop keys'
screen_ok help
tui_keys Escape F2
check "F2: the columns menu, its title to the last word" tui_wait 'Esc done'
screen_ok setup
tui_keys Escape F6
check "F6: the sort menu, each description to its last word" tui_wait 'an agent listens'
screen_ok sort
tui_keys Escape u
check "u: the user menu" tui_wait 'root'
screen_ok user
tui_keys Escape q
check "quits cleanly" tui_wait_exit

# ---- the heap/leak pane, on a native program under the agent ----
if agent_targets 2>/dev/null; then
    start_agent leaky DIAGTOP_AGENT_SAMPLE_INTERVAL=32768 "$AT/leaky"; L=$TARGET_PID
    wait_socket "$L" || fail "the agent did not listen"
    tui_start 80 24 "env DIAGTOP_AGENT_DIR=$AGENT_DIR $DIAGTOP -d 1 -p $L"
    tui_wait "^ *$L " || fail "no row of the agent's target"
    tui_keys A
    tui_wait 'heap' 15 || fail "the heap pane did not open"
    sleep 2
    pane_ok heap
    check "heap: a line that reaches column 80 is marked as cut" body_marked
    tui_keys Escape q
    tui_wait_exit
else
    skip "the heap pane: the agent's targets could not be built"
fi
finish
