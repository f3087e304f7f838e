#!/usr/bin/env bash
# The details of a process in namespaces of its own, as a container or `unshare` gives them: its NSpid (its PID
# here and inside), and which namespaces are not diagtop's (marked in text, listed in JSON); and the container its
# cgroup names, for targets moved into cgroups named as docker and Kubernetes name theirs.
. "$(dirname "$0")/../lib.sh"

pid_namespaces_or_skip

start_in_pid_namespace; P=$NS_PID
[ -n "$P" ] || fail "no process inside the new PID namespace"
"$DIAGTOP" info --json --section general "$P" >"$TMP/pidns.json"
check "pid namespace: NSpid is its PID here, then 1" json_eval "$TMP/pidns.json" "
    last['general']['nspid'] == [$P, 1]"
check "pid namespace: pid and mnt differ from diagtop's, net does not" json_eval "$TMP/pidns.json" "
    set(last['general']['namespaces_differing']) == {'pid', 'mnt'}"
"$DIAGTOP" info --section general "$P" >"$TMP/pidns.txt"
check "text: NSpid, the namespaces apart, and the marks" bash -c "
    grep -q '^NSpid  *$P 1 (PID 1 in its own PID namespace)' '$TMP/pidns.txt' &&
    grep -q '^Namespaces apart  *mnt pid$' '$TMP/pidns.txt' &&
    grep '^Namespaces ' '$TMP/pidns.txt' | grep -q 'pid:\[[0-9]*\]\*' &&
    ! grep '^Namespaces ' '$TMP/pidns.txt' | grep -q 'net:\[[0-9]*\]\*'"

start_target netns unshare -n "$TARGETS/sleeper"; N=$TARGET_PID
wait_exec "$N" "$TARGETS/sleeper"
"$DIAGTOP" info --json --section general "$N" >"$TMP/netns.json"
check "net namespace: only net differs, NSpid has one PID" json_eval "$TMP/netns.json" "
    last['general']['namespaces_differing'] == ['net'] and last['general']['nspid'] == [$N]"
"$DIAGTOP" info --section general "$N" >"$TMP/netns.txt"
check "text: net marked" bash -c "grep -q '^Namespaces apart  *net$' '$TMP/netns.txt' &&
    grep '^Namespaces ' '$TMP/netns.txt' | grep -q 'net:\[[0-9]*\]\*'"

start_target plain "$TARGETS/sleeper"; S=$TARGET_PID
sleep 0.2
"$DIAGTOP" info --json --section general "$S" >"$TMP/plain.json"
check "a plain target: none differs" json_eval "$TMP/plain.json" "
    last['general']['namespaces_differing'] == [] and last['general']['nspid'] == [$S]"

# The cgroup v2 hierarchy (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid host), if this box lets us make one.
CG2=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/self/mounts)
ID=$(head -c32 /dev/urandom | od -An -tx1 | tr -d ' \n')
POD=0f3b1c2d_4e5f_6789_abcd_$(printf %012x $$)
DOCKER=$CG2/docker-$ID.scope
KUBE=$CG2/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod$POD.slice/cri-containerd-$ID.scope
if [ -z "$CG2" ] || ! mkdir "$DOCKER" 2>/dev/null; then
    skip "no writable cgroup v2 hierarchy to name a container in"
    finish
fi
trap 'cleanup; rmdir "$DOCKER" "$KUBE" "${KUBE%/*}" "${KUBE%/*/*}" "${KUBE%/*/*/*}" 2>/dev/null' EXIT
mkdir -p "$KUBE"
echo "$S" >"$DOCKER/cgroup.procs"
"$DIAGTOP" info --json --section general "$S" >"$TMP/docker.json"
check "docker-ID.scope: container docker with its full id" json_eval "$TMP/docker.json" "
    last['general']['container'] == {'runtime': 'docker', 'id': '$ID', 'pod_uid': None}"
"$DIAGTOP" info --section general "$S" >"$TMP/docker.txt"
check "text: the container and its short id" grep -q "^Container  *docker ${ID:0:12}\$" "$TMP/docker.txt"
echo "$S" >"$KUBE/cgroup.procs"
"$DIAGTOP" info --json --section general "$S" >"$TMP/kube.json"
check "kubepods...podUID.slice/cri-containerd-ID.scope: kubernetes, the id and the pod's uid" json_eval "$TMP/kube.json" "
    last['general']['container'] == {'runtime': 'kubernetes', 'id': '$ID', 'pod_uid': '${POD//_/-}'}"
stop_pid "$S"
finish
