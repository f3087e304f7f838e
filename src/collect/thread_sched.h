/* thread_sched: a multi-threaded process's schedstat summed over its threads (WAIT%, CSW/s), through a descriptor
 * kept per thread: at each refresh one pread a thread, with no listing of /proc/PID/task and no open or close,
 * while the threads kept are as many as stat counts and every one still reads (a thread that ended fails: ESRCH).
 * Otherwise the threads are listed and opened again. Descriptors come out of the caller's budget; past it a
 * thread's file is opened and closed at each read, as before. */
#ifndef DIAGTOP_THREAD_SCHED_H
#define DIAGTOP_THREAD_SCHED_H
#include <stddef.h>

#include "procactivity.h"

struct thread_sched_fd {
    int tid, fd; /* fd -1: over budget, read by path */
};

struct thread_sched {
    struct thread_sched_fd *list;
    size_t n, cap;
};

/* The sum over process pid's live threads (nlwp: its thread count from stat this refresh). *kept counts the
 * descriptors held against max_kept. Returns 0 or -errno. */
int thread_sched_read(struct thread_sched *ts, int procfd, int pid, long nlwp, size_t *kept, size_t max_kept,
                      struct proc_sched *out);
/* Closes every descriptor (*kept goes down by them) and frees the list. */
void thread_sched_close(struct thread_sched *ts, size_t *kept);
#endif
