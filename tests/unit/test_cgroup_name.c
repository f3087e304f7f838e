/* What cgroups name: containers from their paths, the UNIT column's short name from a whole /proc/PID/cgroup
 * (cgroup v2, v1 with systemd's named hierarchy, hybrid hosts), and schedstat's line. */
#include "check.h"
#include "collect/cgroup_name.h"
#include "collect/procactivity.h"

#define ID64 "4f1c2a3b5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70"

/* Paths as /proc/PID/cgroup shows them under each runtime and cgroup driver. */
static void container_from_cgroup_paths(void)
{
    struct cgroup_container c;
    CHECK_INT(cgroup_container_of("/system.slice/docker-" ID64 ".scope", &c), 1);
    CHECK_STR(c.runtime, "docker");
    CHECK_STR(c.id, ID64);
    CHECK_STR(c.pod_uid, "");
    CHECK_INT(cgroup_container_of("/docker/" ID64, &c), 1); /* cgroupfs driver, and v1's "12:memory:/docker/ID" */
    CHECK_STR(c.runtime, "docker");
    CHECK_STR(c.id, ID64);
    CHECK_INT(cgroup_container_of("/kubepods.slice/kubepods-burstable.slice/"
                                       "kubepods-burstable-pod0f3b1c2d_4e5f_6789_abcd_ef0123456789.slice/"
                                       "cri-containerd-" ID64 ".scope", &c), 1);
    CHECK_STR(c.runtime, "kubernetes");
    CHECK_STR(c.id, ID64);
    CHECK_STR(c.pod_uid, "0f3b1c2d-4e5f-6789-abcd-ef0123456789");
    CHECK_INT(cgroup_container_of("/kubepods/besteffort/pod0f3b1c2d-4e5f-6789-abcd-ef0123456789/" ID64, &c), 1);
    CHECK_STR(c.runtime, "kubernetes");
    CHECK_STR(c.id, ID64);
    CHECK_STR(c.pod_uid, "0f3b1c2d-4e5f-6789-abcd-ef0123456789");
    CHECK_INT(cgroup_container_of("/kubepods.slice/kubepods-pod0f3b1c2d_4e5f_6789_abcd_ef0123456789.slice/"
                                       "crio-" ID64 ".scope", &c), 1); /* guaranteed QoS: no QoS slice */
    CHECK_STR(c.pod_uid, "0f3b1c2d-4e5f-6789-abcd-ef0123456789");
    CHECK_STR(c.id, ID64);
    CHECK_INT(cgroup_container_of("/machine.slice/libpod-" ID64 ".scope/container", &c), 1);
    CHECK_STR(c.runtime, "podman");
    CHECK_STR(c.id, ID64);
    CHECK_INT(cgroup_container_of("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID64
                                       ".scope/container", &c), 1); /* rootless */
    CHECK_STR(c.runtime, "podman");
    CHECK_INT(cgroup_container_of("/system.slice/crio-" ID64 ".scope", &c), 1);
    CHECK_STR(c.runtime, "cri-o");
    CHECK_INT(cgroup_container_of("/lxc.payload.web1/system.slice/nginx.service", &c), 1);
    CHECK_STR(c.runtime, "lxc");
    CHECK_STR(c.id, "web1");
    CHECK_INT(cgroup_container_of("/lxc/web1", &c), 1);
    CHECK_STR(c.id, "web1");
    CHECK_INT(cgroup_container_of("/machine.slice/machine-debian\\x2dtest.scope/payload", &c), 1);
    CHECK_STR(c.runtime, "systemd-machine");
    CHECK_STR(c.id, "debian-test");
    /* The runtimes' own daemons, a user session, the root: no container. */
    CHECK_INT(cgroup_container_of("/system.slice/docker.service", &c), 0);
    CHECK_STR(c.runtime, "");
    CHECK_INT(cgroup_container_of("/system.slice/containerd.service", &c), 0);
    CHECK_INT(cgroup_container_of("/user.slice/user-1000.slice/session-3.scope", &c), 0);
    CHECK_INT(cgroup_container_of("/", &c), 0);
    CHECK_INT(cgroup_container_of(NULL, &c), 0);
    CHECK_INT(cgroup_container_of("/system.slice/docker-notanid.scope", &c), 0);
}

static void unit_names(void)
{
    char u[64];
    /* a systemd service, one with sub-cgroups of its own, a session, a user's service under user@.service */
    cgroup_unit("0::/system.slice/nginx.service\n", u, sizeof u);
    CHECK_STR(u, "nginx.service");
    cgroup_unit("0::/system.slice/postgresql@15-main.service/workers\n", u, sizeof u);
    CHECK_STR(u, "postgresql@15-main.service");
    cgroup_unit("0::/user.slice/user-1000.slice/session-3.scope\n", u, sizeof u);
    CHECK_STR(u, "session-3.scope");
    cgroup_unit("0::/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service\n", u, sizeof u);
    CHECK_STR(u, "foo.service");
    cgroup_unit("0::/system.slice\n", u, sizeof u);
    CHECK_STR(u, "system.slice");
    /* containers: the id cut as docker ps cuts it, a pod's uid cut to 8 with its container */
    cgroup_unit("0::/system.slice/docker-" ID64 ".scope\n", u, sizeof u);
    CHECK_STR(u, "docker:4f1c2a3b5d6e");
    cgroup_unit("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f3b1c2d_4e5f_6789_abcd_"
                "ef0123456789.slice/cri-containerd-" ID64 ".scope\n", u, sizeof u);
    CHECK_STR(u, "pod:0f3b1c2d/4f1c2a3b5d6e");
    cgroup_unit("0::/machine.slice/libpod-" ID64 ".scope/container\n", u, sizeof u);
    CHECK_STR(u, "podman:4f1c2a3b5d6e");
    cgroup_unit("0::/lxc.payload.web1/system.slice/nginx.service\n", u, sizeof u);
    CHECK_STR(u, "lxc:web1");
    cgroup_unit("0::/machine.slice/machine-debian\\x2dtest.scope/payload\n", u, sizeof u);
    CHECK_STR(u, "machine:debian-test");
    /* cgroup v1: systemd's named hierarchy, or a container in any controller's path, before other paths */
    cgroup_unit("12:memory:/user.slice\n11:name=systemd:/system.slice/cron.service\n0::/\n", u, sizeof u);
    CHECK_STR(u, "cron.service");
    cgroup_unit("9:name=systemd:/\n8:pids:/\n4:memory:/docker/" ID64 "\n0::/\n", u, sizeof u);
    CHECK_STR(u, "docker:4f1c2a3b5d6e");
    cgroup_unit("9:name=systemd:/\n4:memory:/process_api/a05b979ad41f\n0::/\n", u, sizeof u);
    CHECK_STR(u, "a05b979ad41f"); /* a form nobody names: its last component */
    /* the root everywhere, an empty or broken file, a tiny buffer */
    cgroup_unit("9:name=systemd:/\n0::/\n", u, sizeof u);
    CHECK_STR(u, "");
    cgroup_unit("", u, sizeof u);
    CHECK_STR(u, "");
    cgroup_unit("garbage without colons\n::\n", u, sizeof u);
    CHECK_STR(u, "");
    char small[6];
    CHECK_INT((int)cgroup_unit("0::/system.slice/nginx.service\n", small, sizeof small), 5);
    CHECK_STR(small, "nginx");
}

static void v2_path_of_a_file(void)
{
    size_t len = 0;
    const char *p = cgroup_file_v2_path("4:memory:/x\n0::/system.slice/a.service\n", &len);
    CHECK(p && len == strlen("/system.slice/a.service") && strncmp(p, "/system.slice/a.service", len) == 0);
    CHECK(cgroup_file_v2_path("4:memory:/x\n10::/not-v2\n", &len) == NULL);
}

static void schedstat_line(void)
{
    struct proc_sched s;
    CHECK_INT(procactivity_parse_sched("1234567 89012 345\n", &s), 0);
    CHECK(s.run_ns == 1234567 && s.wait_ns == 89012 && s.switches == 345);
    CHECK_INT(procactivity_parse_sched("1234567 89012\n", &s), -1);
    CHECK_INT(procactivity_parse_sched("", &s), -1);
}

int main(void)
{
    check_suite = "cgroup_name";
    RUN(container_from_cgroup_paths);
    RUN(unit_names);
    RUN(v2_path_of_a_file);
    RUN(schedstat_line);
    CHECK_EXIT();
}
