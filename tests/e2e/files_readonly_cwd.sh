#!/usr/bin/env bash
# Every file diagtop writes goes to the dump directory and its message names the file's absolute path: run in a
# read-only current directory with no --dump-dir, $DIAGTOP_DUMP_DIR or config, `diagtop heap` (the agent's heap
# profile, .pb.gz), `diagtop profile -f pprof` and `diagtop dump` still work, say where they wrote, and the files
# are there, 0600, in $XDG_STATE_HOME/diagtop/dumps; a relative $DIAGTOP_DUMP_DIR is said as an absolute path.
# (Tests run as root, for whom every mode bit is writable: the directory is a read-only bind mount in a private
# mount namespace, else immutable by chattr +i.)
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/targets/agent/lib.sh"
agent_targets || { fail "cannot build the agent's targets"; finish; }

start_agent leaky "$AT/leaky"; L=$TARGET_PID
start_target sleeper "$TARGETS/sleeper"; S=$TARGET_PID
wait_ready leaky && wait_socket "$L" || fail "targets did not start"

RO=$TMP/ro
mkdir -p "$RO"
OUT=$TMP/state/diagtop/dumps
# in_ro CMD...: CMD with the read-only directory as its current directory and no dump directory chosen.
if unshare -m true 2>/dev/null; then
    in_ro() { unshare -m bash -c 'mount --bind -o ro "$0" "$0" && cd "$0" && exec "$@"' "$RO" \
        env -u DIAGTOP_DUMP_DIR XDG_STATE_HOME="$TMP/state" "$@"; }
elif chattr +i "$RO" 2>/dev/null; then
    trap 'chattr -i "$RO"; cleanup' EXIT
    in_ro() { (cd "$RO" && exec env -u DIAGTOP_DUMP_DIR XDG_STATE_HOME="$TMP/state" "$@"); }
else
    skip "no way to make a read-only directory here (unshare -m and chattr +i refused)"
    finish
fi
check "the directory is read-only even for root" bash -c "$(declare -f in_ro); RO='$RO' TMP='$TMP'
    ! in_ro touch x 2>/dev/null"

# ---- heap ----
in_ro "$DIAGTOP" heap "$L" >"$TMP/heap.txt" 2>"$TMP/heap.err"
HEAP=$(sed -n 's/^saved as //p' "$TMP/heap.txt")
check "heap: works in a read-only directory" grep -q 'leak_block\|steady_block' "$TMP/heap.txt"
check "heap: says the absolute path, in \$XDG_STATE_HOME/diagtop/dumps" bash -c "
    [[ '$HEAP' == $OUT/heap.leaky.$L.*.pb.gz ]]"
check "heap: the file is there, 0600, gzip" bash -c "[ \$(stat -c %a '$HEAP') = 600 ] && gzip -t '$HEAP'"
check "heap: nothing was written in the current directory" bash -c "[ -z \"\$(ls -A '$RO')\" ]"

# ---- profile -f pprof (the sampler's file) ----
in_ro "$DIAGTOP" profile -d 0.5 -f pprof "$S" >"$TMP/prof.txt" 2>"$TMP/prof.err"
PROF=$(cat "$TMP/prof.txt")
check "profile -f pprof: says the absolute path in the dump directory, the file is there" bash -c "
    [[ '$PROF' == $OUT/cpu.sleeper.$S.*.pb.gz ]] && [ \$(stat -c %a '$PROF') = 600 ] && gzip -t '$PROF'"

# ---- dump (a core file) ----
in_ro "$DIAGTOP" dump "$S" >"$TMP/dump.txt" 2>"$TMP/dump.err"
CORE=$(head -1 "$TMP/dump.txt")
check "dump: says the absolute path in the dump directory, the file is there" bash -c "
    [[ '$CORE' == $OUT/core.sleeper.$S.* ]] && [ -s '$CORE' ] && [ \$(stat -c %a '$CORE') = 600 ]"

# ---- a relative dump directory is said in full ----
mkdir -p "$TMP/rel"
(cd "$TMP" && DIAGTOP_DUMP_DIR=rel "$DIAGTOP" heap --json "$L") >"$TMP/rel.json"
check "DIAGTOP_DUMP_DIR=rel: the saved path is absolute" json_eval "$TMP/rel.json" "
    last['saved_path'].startswith('$TMP/rel/heap.leaky.$L.')"
finish
