#include "procactivity.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "util/fileio.h"
#include "util/tasks.h"
#include "cgroup_name.h"
#include "procinfo.h"

int procactivity_parse_sched(const char *text, struct proc_sched *out)
{
    return sscanf(text, "%llu %llu %llu", &out->run_ns, &out->wait_ns, &out->switches) == 3 ? 0 : -1;
}

int procactivity_read_io(int procfd, const char *dir, struct proc_io *out)
{
    char path[96], buf[512];
    snprintf(path, sizeof path, "%s/io", dir);
    ssize_t n = fileio_read_at(procfd, path, buf, sizeof buf);
    if (n < 0) return (int)n;
    struct pi_io io;
    procinfo_parse_io(buf, &io);
    if (io.read_bytes < 0 || io.write_bytes < 0) return -EINVAL;
    *out = (struct proc_io){(unsigned long long)io.read_bytes, (unsigned long long)io.write_bytes};
    return 0;
}

static int read_sched_at(int procfd, const char *path, struct proc_sched *out)
{
    char buf[128];
    ssize_t n = fileio_read_at(procfd, path, buf, sizeof buf);
    if (n < 0) return (int)n;
    return procactivity_parse_sched(buf, out) == 0 ? 0 : -EINVAL;
}

int procactivity_read_sched(int procfd, int pid, const char *dir, int all_threads, struct proc_sched *out)
{
    char path[96];
    if (!all_threads) {
        snprintf(path, sizeof path, "%s/schedstat", dir);
        return read_sched_at(procfd, path, out);
    }
    /* /proc/PID/schedstat is the main thread's alone: a process's share is the sum over its threads. */
    struct tasks it;
    if (tasks_open(&it, procfd, pid) < 0) return -errno;
    *out = (struct proc_sched){0};
    int tid, seen = 0;
    while ((tid = tasks_next(&it))) {
        struct proc_sched one;
        snprintf(path, sizeof path, "%d/task/%d/schedstat", pid, tid);
        if (read_sched_at(procfd, path, &one) < 0) continue; /* ended meanwhile */
        out->run_ns += one.run_ns;
        out->wait_ns += one.wait_ns;
        out->switches += one.switches;
        seen++;
    }
    tasks_close(&it);
    return seen ? 0 : -ESRCH;
}

int procactivity_read_oom(int procfd, const char *dir)
{
    char path[96], buf[32];
    snprintf(path, sizeof path, "%s/oom_score", dir);
    int score;
    return fileio_read_at(procfd, path, buf, sizeof buf) > 0 && sscanf(buf, "%d", &score) == 1 ? score : -1;
}

int procactivity_read_unit(int procfd, const char *dir, char *out, size_t outsz)
{
    char path[96], buf[4096];
    snprintf(path, sizeof path, "%s/cgroup", dir);
    ssize_t n = fileio_read_at(procfd, path, buf, sizeof buf);
    if (n < 0) return (int)n;
    cgroup_unit(buf, out, outsz);
    return 0;
}
