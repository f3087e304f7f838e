#!/usr/bin/env bash
# Stacks are read from the very files a process maps, not from whatever its paths name in diagtop's filesystem:
# a program whose path names another file in ours (it runs in another mount namespace, as in a container), and a
# program deleted while it runs (a binary upgraded under a running service). In both, the threads are named from
# the program's own symbols and lines (spin_leaf <- spin_middle <- spinner at unwindme.c).
. "$(dirname "$0")/../lib.sh"

UNWINDME=$ROOT/tests/targets/unwind/unwindme.c
# spinner_chain JSON: the spinner thread is spin_leaf <- spin_middle <- spinner, each at a line of unwindme.c.
spinner_chain() {
    python3 - "$1" <<'PY'
import json, sys
for t in json.load(open(sys.argv[1]))["threads"]:
    if t["name"] != "spinner":
        continue
    f = [(x["function"], (x.get("file") or "").endswith("unwindme.c")) for x in t["frames"]]
    if f[:3] == [("spin_leaf", True), ("spin_middle", True), ("spinner", True)] and not t["error"]:
        sys.exit(0)
    print("  spinner:", f, t["error"], file=sys.stderr)
    sys.exit(1)
print("  no spinner thread", file=sys.stderr)
sys.exit(1)
PY
}

# 1. Another mount namespace: there, $TMP/app holds the target; here, a program of the same name that is not it.
mkdir -p "$TMP/app" "$TMP/inside"
cp "$TARGETS/unwind-nofp" "$TMP/inside/service"
cp "$TARGETS/sleeper" "$TMP/app/service"
if unshare -m true 2>/dev/null; then
    start_target ns unshare -m sh -c "mount --make-rprivate / && mount --bind '$TMP/inside' '$TMP/app' && exec '$TMP/app/service'"
    P=$TARGET_PID
    wait_ready ns || fail "the target in its own mount namespace did not start: $(cat "$TMP/ns.err")"
    check "another mount namespace: its maps name a file that is another one here" bash -c "
        grep -q ' $TMP/app/service\$' /proc/$P/maps && ! cmp -s '$TMP/app/service' /proc/$P/exe"
    "$DIAGTOP" stack --json "$P" >"$TMP/ns.json" 2>"$TMP/ns.stack.err"
    check "another mount namespace: the program's own names and lines" spinner_chain "$TMP/ns.json"
    check "another mount namespace: the target runs on" kill -0 "$P"
    stop_pid "$P"
else
    echo "  (no mount namespaces here: unshare -m is refused; the container case is not run)"
fi

# 2. A program deleted while it runs: its maps say "(deleted)"; libdw alone would read only its loaded segments.
cp "$TARGETS/unwind-nofp" "$TMP/upgraded"
start_target deleted "$TMP/upgraded"; P=$TARGET_PID
wait_ready deleted || fail "the target did not start"
rm "$TMP/upgraded"
check "deleted program: its maps say (deleted)" grep -q "$TMP/upgraded (deleted)" "/proc/$P/maps"
"$DIAGTOP" stack --json "$P" >"$TMP/deleted.json" 2>"$TMP/deleted.err"
check "deleted program: the names and lines of its symbol table and DWARF" spinner_chain "$TMP/deleted.json"
check "deleted program: its module is named as its maps say, (deleted)" python3 -c "
import json; d = json.load(open('$TMP/deleted.json'))
assert any(f.get('module') == 'upgraded (deleted)' for t in d['threads'] for f in t['frames']), d"
check "deleted program: the target runs on" kill -0 "$P"
finish
