#!/usr/bin/env bash
# When a snapshot would be unsafe or its clone fails, dumps fall back to stop-and-copy and say why (--snapshot
# fails instead): a process whose seccomp filter kills it on clone is never killed (diagtop suspends the filter with
# CAP_SYS_ADMIN; without it, it falls back); a process of an ordinary user under too low a `ulimit -u` gets EAGAIN
# from the clone (root would not: it ignores RLIMIT_NPROC), and the dump falls back in the same stop.
. "$(dirname "$0")/../lib.sh"

alive_untraced() { # PID: running (not stopped), untraced
    local i
    for i in $(seq 30); do
        [[ "$(awk '{print $3}' /proc/"$1"/stat 2>/dev/null)" == [SR] ]] &&
            [ "$(awk '/^TracerPid:/ {print $2}' /proc/"$1"/status)" = 0 ] && return 0
        sleep 0.1
    done
    echo "  $1: $(awk '{print $3}' /proc/"$1"/stat 2>/dev/null || echo gone)" >&2
    return 1
}
known_string() { # CORE NAME ADDR
    gdb -nx -batch "$TARGETS/snapseccomp" "$1" -ex "x/s $3" 2>&1 | grep -q 'DIAGTOP-SECCOMP-KNOWN'
}

status=$({ "$TARGETS/snapseccomp" fork >/dev/null 2>&1; echo $?; } 2>/dev/null)
check "the filter kills a process that clones (SIGSYS)" test "$status" -eq 159

start_target filter "$TARGETS/snapseccomp" filter; P=$TARGET_PID
wait_ready filter || fail "target did not start"
ADDR=$(sed -n 's/.*string=\(0x[0-9a-f]*\).*/\1/p' "$TMP/filter.out")
if [ "$(id -u)" -eq 0 ]; then
    "$DIAGTOP" dump --json -o "$TMP/suspended.core" "$P" >"$TMP/suspended.json" 2>&1
    check "seccomp, CAP_SYS_ADMIN: a snapshot, the filter suspended for the clone" json_eval "$TMP/suspended.json" \
        "last['mode'] == 'snapshot' and last['zombie'] is None"
    check "seccomp, CAP_SYS_ADMIN: the process lives on, untraced" alive_untraced "$P"
    check "seccomp, CAP_SYS_ADMIN: gdb reads the core" known_string "$TMP/suspended.core" suspended "$ADDR"
    capsh --drop=cap_sys_admin -- -c "exec '$DIAGTOP' dump --json -o '$TMP/fallback.core' $P" >"$TMP/fallback.json" 2>&1
    check "seccomp without CAP_SYS_ADMIN: stop-and-copy, saying why" json_eval "$TMP/fallback.json" "
        last['mode'] == 'stop' and 'seccomp filter that diagtop cannot suspend' in last['mode_reason']"
    check "seccomp without CAP_SYS_ADMIN: the process lives on, untraced" alive_untraced "$P"
    check "seccomp without CAP_SYS_ADMIN: gdb reads the core" known_string "$TMP/fallback.core" fallback "$ADDR"
    capsh --drop=cap_sys_admin -- -c "exec '$DIAGTOP' dump --snapshot -o '$TMP/refused.core' $P" >/dev/null 2>"$TMP/refused.err"
    check "seccomp without CAP_SYS_ADMIN, --snapshot: fails with the reason, no file" bash -c "[ $? -eq 1 ] &&
        grep -q 'no snapshot: the process has a seccomp filter' '$TMP/refused.err' && [ ! -e '$TMP/refused.core' ]"
    check "seccomp without CAP_SYS_ADMIN, --snapshot: the process lives on" alive_untraced "$P"
else
    skip "seccomp suspension needs root"
fi

# RLIMIT_NPROC: an ordinary user's process, ulimit -u 1.
if [ "$(id -u)" -eq 0 ]; then
    start_target nproc setpriv --reuid=nobody --regid=nogroup --clear-groups bash -c \
        "ulimit -u 1; exec '$TARGETS/snapseccomp' none"
    N=$TARGET_PID
    wait_ready nproc || fail "nproc target did not start"
    ADDR=$(sed -n 's/.*string=\(0x[0-9a-f]*\).*/\1/p' "$TMP/nproc.out")
    "$DIAGTOP" dump --json -o "$TMP/nproc.core" "$N" >"$TMP/nproc.json" 2>&1
    check "ulimit -u: the clone fails with EAGAIN, stop-and-copy in the same stop, saying why" json_eval \
        "$TMP/nproc.json" "last['mode'] == 'stop' and 'clone failed in the process: Resource temporarily unavailable'
        in last['mode_reason'] and 'ulimit -u' in last['mode_reason'] and len(last['pauses_ms']) == 1"
    check "ulimit -u: the process lives on, untraced, without a child" bash -c "$(declare -f alive_untraced);
        alive_untraced $N && [ -z \"\$(cat /proc/$N/task/*/children)\" ]"
    check "ulimit -u: gdb reads the core" known_string "$TMP/nproc.core" nproc "$ADDR"
    "$DIAGTOP" dump --snapshot -o "$TMP/nproc2.core" "$N" >/dev/null 2>"$TMP/nproc2.err"
    check "ulimit -u, --snapshot: fails with the reason, no file" bash -c "[ $? -eq 1 ] &&
        grep -q 'no snapshot: clone failed in the process: Resource temporarily unavailable' '$TMP/nproc2.err' &&
        [ ! -e '$TMP/nproc2.core' ]"
    check "ulimit -u, --snapshot: the process lives on" alive_untraced "$N"
else
    skip "a process of another user needs root"
fi
finish
