#!/usr/bin/env bash
# Another user's processes give partial fields (null), never an error; /proc mounted with hidepid hides them
# without breaking anything. Needs root to switch users and mount /proc.
. "$(dirname "$0")/../lib.sh"
if [ "$(id -u)" -ne 0 ]; then
    skip "needs root"
    exit 0
fi
start_target sleeper "$TARGETS/sleeper"; SLEEPER=$TARGET_PID
AS_NOBODY="env XDG_CONFIG_HOME=/nonexistent HOME=/nonexistent setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all"

$AS_NOBODY "$DIAGTOP" -b -n 1 -d 0.2 --json -p "1,$SLEEPER" >"$TMP/nobody.json" 2>"$TMP/nobody.err"
check "as nobody: exit 0, nothing on stderr" test $? -eq 0 -a ! -s "$TMP/nobody.err"
check "as nobody: root's process shows, exe and runtime are null" json_eval "$TMP/nobody.json" "
    proc($SLEEPER) is not None and proc($SLEEPER)['user'] == 'root' and proc($SLEEPER)['exe'] is None and
    proc($SLEEPER)['runtime'] is None and proc($SLEEPER)['rss_bytes'] > 0 and
    proc($SLEEPER)['cmdline'] == '$TARGETS/sleeper'"

# hidepid=invisible: a private mount namespace with its own /proc.
unshare -m --propagation private sh -c "mount -t proc -o hidepid=invisible proc /proc &&
    exec $AS_NOBODY '$DIAGTOP' -b -n 1 -d 0.2 --json" >"$TMP/hidden.json" 2>"$TMP/hidden.err"
check "hidepid: exit 0 without errors" test $? -eq 0 -a ! -s "$TMP/hidden.err"
check "hidepid: only nobody's own processes are listed" json_eval "$TMP/hidden.json" "
    len(last['processes']) >= 1 and all(p['user'] == 'nobody' for p in last['processes']) and
    proc($SLEEPER) is None"
finish
