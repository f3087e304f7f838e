#!/usr/bin/env bash
# Attach across users and namespaces (needs root): root attaches as the JVM's own uid and gid (the fake JVM sees
# its peer's credentials and the trigger's owner), to another user's real JVM, whose heap dump goes to the user
# who ran sudo; a user who is not the JVM's (uid, or gid) is refused before anything is sent; a JVM in its own
# PID and mount namespaces (its pid there is 1, its /tmp a private tmpfs) is reached through /proc/PID/root.
. "$(dirname "$0")/../lib.sh"
if [ "$(id -u)" -ne 0 ]; then
    skip "needs root"
    exit 0
fi
java_classes Leaky || fail "javac Leaky.java"
PROBE=$ROOT/build/asan/unit/test_hotspot
NOBODY_UID=$(id -u nobody)
NOGROUP_GID=$(getent group nogroup | cut -d: -f3)
AS_NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all"
# The classes and the fake must be readable by nobody; the JVM's working directory is not writable by it (the
# trigger then goes to /tmp).
chmod 755 "$TMP"
mkdir -p "$TMP/ro" "$TMP/dumps"
cp -r "$CP" "$TMP/classes" && chmod -R a+rX "$TMP/classes"
cp "$ROOT/tests/targets/fake_hotspot.py" "$TMP/fake.py" && chmod 644 "$TMP/fake.py"
# no_jvm_dirs TMPDIR [OWNER]: no diagtop-jvm-* directory stays there (one of a test running beside this one goes
# in milliseconds).
no_jvm_dirs() {
    local i
    for i in 1 2 3 4; do
        [ -z "$(find "$1/" -maxdepth 1 -name 'diagtop-jvm-*' ${2:+-user "$2"})" ] && return 0
        sleep 0.5
    done
    return 1
}

cd "$TMP/ro" || exit 1
start_target fake $AS_NOBODY /usr/bin/python3 "$TMP/fake.py" ok; F=$TARGET_PID # not root's pyenv
start_target jvm $AS_NOBODY java -cp "$TMP/classes" Leaky 1000; J=$TARGET_PID
start_target rootjvm java -cp "$TMP/classes" Leaky 1000; R=$TARGET_PID
start_target gidjvm setpriv --reuid=nobody --regid=0 --clear-groups java -cp "$TMP/classes" Leaky 1000; G=$TARGET_PID
cd "$ROOT" || exit 1
wait_ready fake && wait_ready jvm && wait_ready rootjvm && wait_ready gidjvm || fail "targets did not start"

"$DIAGTOP" stack --json "$F" >"$TMP/fake.json" 2>/dev/null
check "root to nobody's fake JVM: connected as nobody/nogroup, trigger owned by nobody (in /tmp)" bash -c "
    grep -qx 'peer pid=[0-9]* uid=$NOBODY_UID gid=$NOGROUP_GID' '$TMP/fake.out' &&
    grep -qx 'sigquit trigger=/tmp uid=$NOBODY_UID' '$TMP/fake.out' && [ ! -e /tmp/.attach_pid$F ]"

"$DIAGTOP" stack --json "$J" >"$TMP/jvm.json" 2>/dev/null
check "root to nobody's JVM: its threads" json_eval "$TMP/jvm.json" "
    last['provider'] == 'hotspot' and any(t['name'] == 'leaky-sleeper' for t in last['threads'])"
SUDO_UID=4242 SUDO_GID=4343 "$DIAGTOP" dump "$J" --heap --dump-dir "$TMP/dumps" >/dev/null 2>"$TMP/hd.err"
HD=$(ls "$TMP"/dumps/heap.java."$J".*.hprof.gz 2>/dev/null | head -1)
check "under sudo, the heap dump belongs to the user who asked, 0600" bash -c "
    [ -n '$HD' ] && [ \"\$(stat -c '%u %g %a' '$HD')\" = '4242 4343 600' ] &&
    [ \"\$(gzip -dc '$HD' | head -c 18)\" = 'JAVA PROFILE 1.0.2' ]"
check "... and the JVM's private directory is gone from its /tmp" no_jvm_dirs /tmp nobody

$AS_NOBODY "$PROBE" --probe "$R" >"$TMP/uid.probe"
check "nobody to root's JVM: refused before anything is sent, saying who may" \
    grep -q "process $R runs as uid 0 gid 0, and a JVM takes attach requests only from root or that uid and gid; diagtop runs as uid $NOBODY_UID" "$TMP/uid.probe"
$AS_NOBODY "$PROBE" --probe "$G" >"$TMP/gid.probe"
check "nobody/nogroup to a JVM of nobody/root: the gid counts too" \
    grep -q "process $G runs as uid $NOBODY_UID gid 0, and a JVM takes attach requests only from root" "$TMP/gid.probe"
$AS_NOBODY "$PROBE" --probe "$J" >"$TMP/same.probe"
check "nobody to nobody's JVM: allowed" grep -q '^probe 0: ok' "$TMP/same.probe"
check "the refused JVMs were never signalled" bash -c "
    kill -0 $R && kill -0 $G && ! grep -q 'Full thread dump' '$TMP/rootjvm.out' '$TMP/gidjvm.out' &&
    [ ! -e /tmp/.java_pid$R ] && [ ! -e /tmp/.java_pid$G ]"

# Its own PID and mount namespaces, a private /tmp (a tmpfs that also holds the classes, which were in ours): the
# socket is /proc/PID/root/tmp/.java_pid1.
start_target ns unshare -m -p -f --mount-proc sh -c "mount -t tmpfs tmpfs /mnt && cp -r '$TMP/classes' /mnt/classes &&
    mount --move /mnt /tmp && exec java -cp /tmp/classes Leaky 1000"
wait_ready ns || fail "the namespaced JVM did not start"
NS=$(pgrep -P "$TARGET_PID" | head -1) # unshare forks; the child execs sh, which execs java
PIDS+=("$NS")                           # stopped by its PID too: unshare's end would not end it
check "the namespaced JVM is pid 1 in its namespace" bash -c "[ \"\$(awk '/^NStgid/ {print \$3}' /proc/$NS/status)\" = 1 ]"
"$DIAGTOP" stack --json "$NS" >"$TMP/ns.json" 2>/dev/null
check "namespaced JVM: its threads, through its own /tmp" json_eval "$TMP/ns.json" "
    last['provider'] == 'hotspot' and any(t['name'] == 'leaky-waiter' for t in last['threads'])"
check "... whose socket is .java_pid1 there and not in ours" bash -c "
    [ -S /proc/$NS/root/tmp/.java_pid1 ] && [ ! -e /tmp/.java_pid1 -o -S /tmp/.java_pid1 ]"
"$DIAGTOP" dump "$NS" --heap --dump-dir "$TMP/dumps" --json >"$TMP/nshd.json" 2>"$TMP/nshd.err"
check "namespaced JVM: the heap dump it wrote in its /tmp is copied back" json_eval "$TMP/nshd.json" "
    last['path'].startswith('$TMP/dumps/heap.java.$NS.') and last['bytes'] > 1000"
check "... and removed from its /tmp" no_jvm_dirs /proc/$NS/root/tmp
finish
