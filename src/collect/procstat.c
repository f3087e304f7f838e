#include "procstat.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fileio.h"
#include "util/tasks.h"

/* Reads the next space-separated decimal field (possibly negative) and advances *p. */
static int next_ll(const char **p, const char *end, long long *out)
{
    const char *s = *p;
    while (s < end && *s == ' ') s++;
    if (s >= end) return -1;
    int neg = 0;
    if (*s == '-') { neg = 1; s++; }
    if (s >= end || *s < '0' || *s > '9') return -1;
    unsigned long long v = 0;
    while (s < end && *s >= '0' && *s <= '9') v = v * 10 + (unsigned long long)(*s++ - '0');
    *out = neg ? -(long long)v : (long long)v;
    *p = s;
    return 0;
}

int procstat_parse(const char *buf, size_t len, struct procstat *out)
{
    const char *end = buf + len;
    const char *open = memchr(buf, '(', len);
    const char *close = NULL;
    for (const char *q = end - 1; q > buf; q--)
        if (*q == ')') { close = q; break; }
    if (!open || !close || close < open) return -1;

    memset(out, 0, sizeof *out);
    out->pid = atoi(buf);
    size_t clen = (size_t)(close - open - 1);
    if (clen >= sizeof out->comm) clen = sizeof out->comm - 1;
    memcpy(out->comm, open + 1, clen);
    out->comm[clen] = '\0';

    const char *p = close + 1;
    while (p < end && *p == ' ') p++;
    if (p >= end) return -1;
    out->state = *p++;

    /* Fields 4..42 (1-based, as in proc(5)): up to the block I/O delay, the last one we use. */
    long long f[39];
    int n = 0;
    while (n < 39 && next_ll(&p, end, &f[n]) == 0) n++;
    if (n < 21) return -1; /* up to and including rss (field 24) */
#define F(k) f[(k) - 4]
    out->ppid = (int)F(4);
    out->flags = (unsigned int)F(9);
    out->minflt = (unsigned long long)F(10);
    out->majflt = (unsigned long long)F(12);
    out->utime = (unsigned long long)F(14);
    out->stime = (unsigned long long)F(15);
    out->cutime = (unsigned long long)F(16);
    out->cstime = (unsigned long long)F(17);
    out->priority = (long)F(18);
    out->nice = (long)F(19);
    out->num_threads = (long)F(20);
    out->starttime = (unsigned long long)F(22);
    out->vsize = (unsigned long long)F(23);
    out->rss = F(24);
    if (n >= 28 - 3) {
        out->startcode = (unsigned long long)F(26);
        out->endcode = (unsigned long long)F(27);
        out->startstack = (unsigned long long)F(28);
    }
    if (n >= 39 - 3) out->processor = (int)F(39);
    if (n >= 41 - 3) {
        out->rt_priority = (unsigned int)F(40);
        out->policy = (unsigned int)F(41);
    }
    if (n >= 42 - 3) out->blkio_ticks = (unsigned long long)F(42);
#undef F
    return 0;
}

int procstat_parse_statm(const char *buf, struct procstatm *out)
{
    const char *p = buf, *end = buf + strlen(buf);
    long long v[7];
    for (int i = 0; i < 7; i++)
        if (next_ll(&p, end, &v[i]) < 0) return -1;
    out->size = (unsigned long long)v[0];
    out->resident = (unsigned long long)v[1];
    out->shared = (unsigned long long)v[2];
    out->text = (unsigned long long)v[3];
    out->data = (unsigned long long)v[5];
    return 0;
}

int procstat_read(int pid, int tid, struct procstat *out)
{
    char path[96], buf[1024];
    if (tid > 0) snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
    else snprintf(path, sizeof path, "/proc/%d/stat", pid);
    ssize_t n = fileio_read_at(AT_FDCWD, path, buf, sizeof buf);
    return n > 0 ? procstat_parse(buf, (size_t)n, out) : -1;
}

long long procstat_read_runtime_ns(int pid, int tid)
{
    char path[96], buf[128];
    snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", pid, tid);
    ssize_t n = fileio_read_at(AT_FDCWD, path, buf, sizeof buf);
    unsigned long long v;
    return n > 0 && sscanf(buf, "%llu", &v) == 1 ? (long long)v : -1;
}

int procstat_sample_threads(int pid, struct thread_sample *out, int max, int with_runtime)
{
    struct tasks it;
    if (tasks_open(&it, AT_FDCWD, pid) < 0) return 0;
    int n = 0, tid;
    struct procstat ps;
    while (n < max && (tid = tasks_next(&it))) {
        if (procstat_read(pid, tid, &ps) < 0) continue;
        out[n] = (struct thread_sample){tid, ps.utime + ps.stime, with_runtime ? procstat_read_runtime_ns(pid, tid) : -1,
                                        ps.state, ""};
        memcpy(out[n].name, ps.comm, sizeof out[n].name);
        n++;
    }
    tasks_close(&it);
    return n;
}
