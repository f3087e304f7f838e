#!/usr/bin/env bash
# Bad input on the command line gets a clear error and a non-zero status; no terminal means no TUI.
. "$(dirname "$0")/../lib.sh"

expect_error() { # expect_error MESSAGE_REGEX ARGS...
    local re=$1
    shift
    "$DIAGTOP" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
    local rc=$?
    if [ $rc -eq 2 ] && grep -Eq "$re" "$TMP/err" && [ ! -s "$TMP/out" ]; then ok "rejects $*"
    else fail "diagtop $* gave status $rc: $(cat "$TMP/err")"; fi
}
expect_error "not a number of seconds" -b -d abc
expect_error "not a number of seconds" -b -d -1
expect_error "not a number of seconds" -b -d 1e9
expect_error "unknown sort key 'bogus'" -b -s bogus
expect_error "not a process id" -b -p 0
expect_error "not a process id" -b -p 12,abc
expect_error "unknown user 'no-such-user-here'" -b -u no-such-user-here
expect_error "not a positive count" -b -n 0
expect_error "unknown column 'nope'" -b --columns pid,nope
expect_error "unknown option" -b --frobnicate
expect_error "needs a value" -b -d
expect_error "not a terminal; use -b" -d 1

"$DIAGTOP" --help >"$TMP/help"
check "--help lists every option and sort key" bash -c "grep -q -- '--json' '$TMP/help' && grep -q 'growth runtime' '$TMP/help'"
"$DIAGTOP" -b -n 1 -d 0.1 | head -3 >/dev/null
check "a closed pipe ends batch output quietly" test "${PIPESTATUS[0]}" -eq 0

# A config file with junk: a warning, then the defaults.
mkdir -p "$XDG_CONFIG_HOME/diagtop"
printf 'sort=res\nfoo=bar\n' >"$XDG_CONFIG_HOME/diagtop/config"
"$DIAGTOP" -b -n 1 -d 0.1 --json >"$TMP/cfg.json" 2>"$TMP/cfg.err"
check "a bad config line is reported and the rest applies" bash -c \
    "grep -q 'config:2: ignoring unknown setting' '$TMP/cfg.err' && python3 -c '
import json; d = json.loads(open(\"$TMP/cfg.json\").readline())
r = [p[\"rss_bytes\"] for p in d[\"processes\"]]
assert r == sorted(r, reverse=True)'"
finish
