#!/usr/bin/env bash
# A Go program without the gops agent: `diagtop stack` lists its goroutines read from its memory (the runtime's
# list through its DWARF, each stack walked with its own tables), checked against what the program printed of
# itself (runtime.Stack); the process runs on untraced; --native still gives its OS threads; without DWARF it falls
# back to the threads and says why.
. "$(dirname "$0")/../lib.sh"

start_target goparked env GOPARKED_TRACE="$TMP/goparked.trace" "$TARGETS/goparked"; P=$TARGET_PID
wait_ready goparked || fail "goparked did not start"
"$DIAGTOP" stack "$P" --json >"$TMP/live.json" 2>"$TMP/live.err"
check "no agent: the goroutines read from memory (provider go-memory)" json_eval "$TMP/live.json" \
    "last['provider'] == 'go-memory' and len(last['threads']) == 13"
check "... the ids, states, frames and creators the program printed of itself" \
    python3 "$ROOT/tests/tools/compare_goroutines.py" "$TMP/goparked.trace" "$TMP/live.json"
check "... how long each parked goroutine has waited (since the GC recorded it), in whole seconds" json_eval "$TMP/live.json" \
    "all(t['wait_seconds'] is not None and 0 <= t['wait_seconds'] < 600 for t in last['threads'] if t['state'] in ('chan receive', 'select', 'semacquire'))"
check "the process runs on, untraced" bash -c "[ \$(awk '{print \$3}' /proc/$P/stat) = S ] &&
    [ \$(awk '/^TracerPid:/ {print \$2}' /proc/$P/status) = 0 ]"
LAYOUT=$(ls "$XDG_CACHE_HOME"/diagtop/debug/go-*.golayout 2>/dev/null | head -1)
check "runtime.g's layout is kept for this build (go-BUILDID.golayout in the debug cache)" \
    bash -c "[ -n '$LAYOUT' ] && grep -q '^diagtop-go-layout 1 ' '$LAYOUT'"
"$DIAGTOP" stack "$P" --json >"$TMP/kept.json" 2>&1
check "... and the next capture, which reads no DWARF for it, gives the same goroutines" \
    python3 "$ROOT/tests/tools/compare_goroutines.py" "$TMP/goparked.trace" "$TMP/kept.json"
[ -n "$LAYOUT" ] && echo "diagtop-go-layout 1 garbage" >"$LAYOUT"
"$DIAGTOP" stack "$P" --json >"$TMP/spoilt.json" 2>&1
check "a spoilt kept layout is not believed: DWARF is read again" \
    python3 "$ROOT/tests/tools/compare_goroutines.py" "$TMP/goparked.trace" "$TMP/spoilt.json"
"$DIAGTOP" stack "$P" >"$TMP/live.txt" 2>&1
check "text: grouped like gops stack" bash -c "
    grep -q '^Goroutines of $P, from go-memory: 13 goroutines' '$TMP/live.txt' &&
    grep -Eq '^5 goroutines: [0-9 ]+ chan receive' '$TMP/live.txt' && grep -q '  main.waitRecv .*goparked/main.go:18' '$TMP/live.txt'"
"$DIAGTOP" stack "$P" --native --json >"$TMP/native.json" 2>&1
check "--native: the OS threads, as before" json_eval "$TMP/native.json" \
    "'provider' not in last and all('tid' in t for t in last['threads']) and len(last['threads']) >= 2"
mkdir -p "$TMP/nodwarf"
objcopy --strip-debug "$TARGETS/goparked" "$TMP/nodwarf/goparked"
start_target nodwarf "$TMP/nodwarf/goparked"; N=$TARGET_PID
wait_ready nodwarf || fail "goparked without DWARF did not start"
"$DIAGTOP" stack "$N" >"$TMP/nodwarf.txt" 2>&1
check "without DWARF: the OS threads, and why there are no goroutines" bash -c "
    grep -q 'go-memory: no DWARF (a stripped binary?): goroutines not shown; showing the OS threads' '$TMP/nodwarf.txt' &&
    grep -Eq '^Process $N \(goparked\): [0-9]+ threads, stopped for' '$TMP/nodwarf.txt'"
finish
