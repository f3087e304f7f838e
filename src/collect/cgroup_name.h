/* cgroup_name: what a process's cgroups say it belongs to: the container a cgroup path names (docker, podman,
 * containerd, cri-o, Kubernetes pods, lxc, systemd machines), or else the systemd unit. Pure functions over the
 * text of /proc/PID/cgroup and its paths. */
#ifndef DIAGTOP_CGROUP_NAME_H
#define DIAGTOP_CGROUP_NAME_H
#include <stddef.h>

/* A container named by a cgroup path: the runtime, its container id, and for Kubernetes the pod's uid. */
struct cgroup_container {
    char runtime[16];
    char id[80];
    char pod_uid[48];
};

/* The container a cgroup v2 (or v1) path names: docker-ID.scope, /docker/ID, kubepods.../podUID/ID,
 * libpod-ID.scope, /lxc/NAME, lxc.payload.NAME, machine-NAME.scope. Returns 1 when it names one, else 0 (out
 * zeroed). The path may end at a newline. */
int cgroup_container_of(const char *path, struct cgroup_container *out);

/* The unified (v2) path of a /proc/PID/cgroup text ("0::PATH" line), with its length; NULL when there is none. */
const char *cgroup_file_v2_path(const char *text, size_t *len);
/* The container a /proc/PID/cgroup text names: its v2 path's, else the first v1 hierarchy's naming one. */
int cgroup_file_container(const char *text, struct cgroup_container *out);

/* A short name for the table's UNIT column, into out: the container as "docker:0123456789ab" (its id cut to 12,
 * as docker ps shows it), "pod:0f3b1c2d/0123456789ab" (a pod's uid cut to 8, its container), "lxc:NAME" or
 * "machine:NAME"; else the systemd unit, the deepest service or scope ("nginx.service", "session-3.scope"), else
 * the deepest slice; else the path's last component. The path read is the v2 one, else systemd's named v1
 * hierarchy's, else the first v1 one off the root; "" when every one is the root. Returns the length. */
size_t cgroup_unit(const char *text, char *out, size_t outsz);
#endif
