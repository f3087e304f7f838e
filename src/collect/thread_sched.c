#include "thread_sched.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/fileio.h"
#include "util/grow.h"
#include "util/tasks.h"

void thread_sched_close(struct thread_sched *ts, size_t *kept)
{
    for (size_t i = 0; i < ts->n; i++)
        if (ts->list[i].fd >= 0) {
            close(ts->list[i].fd);
            (*kept)--;
        }
    free(ts->list);
    *ts = (struct thread_sched){0};
}

/* One thread's schedstat, through its kept descriptor or by path; -1 when it cannot be read (it ended). */
static int read_one(int procfd, int pid, const struct thread_sched_fd *f, struct proc_sched *one)
{
    char buf[128];
    ssize_t n;
    if (f->fd >= 0) {
        n = fileio_pread_once(f->fd, buf, sizeof buf - 1);
        if (n > 0) buf[n] = '\0';
    } else {
        char path[96];
        snprintf(path, sizeof path, "%d/task/%d/schedstat", pid, f->tid);
        n = fileio_read_at(procfd, path, buf, sizeof buf);
    }
    return n > 0 && procactivity_parse_sched(buf, one) == 0 ? 0 : -1;
}

/* The sum through the list as it is; -1 as soon as one thread does not read (the list is stale). */
static int sum_kept(const struct thread_sched *ts, int procfd, int pid, struct proc_sched *out)
{
    *out = (struct proc_sched){0};
    for (size_t i = 0; i < ts->n; i++) {
        struct proc_sched one;
        if (read_one(procfd, pid, &ts->list[i], &one) < 0) return -1;
        out->run_ns += one.run_ns;
        out->wait_ns += one.wait_ns;
        out->switches += one.switches;
    }
    return 0;
}

/* Lists the threads again and opens each one's schedstat, kept while the budget allows. */
static int relist(struct thread_sched *ts, int procfd, int pid, size_t *kept, size_t max_kept)
{
    thread_sched_close(ts, kept);
    struct tasks it;
    if (tasks_open(&it, procfd, pid) < 0) return -errno;
    int tid;
    while ((tid = tasks_next(&it))) {
        if (GROW(ts->list, ts->cap, ts->n, 16) < 0) break;
        int fd = -1;
        if (*kept < max_kept) {
            char path[96];
            snprintf(path, sizeof path, "%d/task/%d/schedstat", pid, tid);
            if ((fd = openat(procfd, path, O_RDONLY | O_CLOEXEC)) < 0) continue; /* ended meanwhile */
            (*kept)++;
        }
        ts->list[ts->n++] = (struct thread_sched_fd){tid, fd};
    }
    tasks_close(&it);
    return ts->n ? 0 : -ESRCH;
}

int thread_sched_read(struct thread_sched *ts, int procfd, int pid, long nlwp, size_t *kept, size_t max_kept,
                      struct proc_sched *out)
{
    if (ts->n > 0 && (long)ts->n == nlwp && sum_kept(ts, procfd, pid, out) == 0) return 0;
    int rc = relist(ts, procfd, pid, kept, max_kept);
    if (rc < 0) return rc;
    /* a thread that ends between the listing and its read is left out of this sum; the next read lists again */
    *out = (struct proc_sched){0};
    int seen = 0;
    for (size_t i = 0; i < ts->n; i++) {
        struct proc_sched one;
        if (read_one(procfd, pid, &ts->list[i], &one) < 0) continue;
        out->run_ns += one.run_ns;
        out->wait_ns += one.wait_ns;
        out->switches += one.switches;
        seen++;
    }
    return seen ? 0 : -ESRCH;
}
