/* procactivity: what a process does besides using CPU and memory, read only for rows whose columns show it: the
 * bytes it reads from and writes to storage (/proc/PID/io, as iotop), the time its threads wait for a CPU and how
 * often they are switched in (schedstat, summed over threads), the OOM killer's score, and the systemd unit or
 * container its cgroup names. Parsers are pure; readers take an open descriptor of /proc. */
#ifndef DIAGTOP_PROCACTIVITY_H
#define DIAGTOP_PROCACTIVITY_H
#include <stddef.h>

/* /proc/PID/io's storage counters: every thread's, the ones that ended included (the kernel sums them). */
struct proc_io {
    unsigned long long read_bytes, write_bytes;
};

/* schedstat's three fields: nanoseconds on a CPU, nanoseconds runnable but waiting for one, and how many times a
 * thread was put on a CPU (every context switch in, voluntary or not). */
struct proc_sched {
    unsigned long long run_ns, wait_ns, switches;
};

/* Parses /proc/PID/io text (its read_bytes and write_bytes). Returns 0 or -1. */
int procactivity_parse_io(const char *text, struct proc_io *out);
/* Parses one schedstat line ("run wait switches"). Returns 0 or -1. */
int procactivity_parse_sched(const char *text, struct proc_sched *out);

/* Reads /proc/<dir>/cgroup and names its unit as cgroup_unit does. Returns 0 or -errno. */
int procactivity_read_unit(int procfd, const char *dir, char *out, size_t outsz);
#endif
