/* tasks: the thread ids of a process, from /proc/PID/task. A thread that starts or ends while the listing runs
 * may or may not be seen (readdir's promise); callers that must see every thread list again until none is new. */
#ifndef DIAGTOP_TASKS_H
#define DIAGTOP_TASKS_H
#include <dirent.h>

struct tasks {
    DIR *dir;
};

/* Opens the listing of pid's threads. procfd: an open descriptor of /proc, or AT_FDCWD. Returns 0, or -errno
 * (errno set too: the process is gone, or its task directory cannot be read). */
int tasks_open(struct tasks *it, int procfd, int pid);
/* The next thread id, or 0 when there is no more. */
int tasks_next(struct tasks *it);
void tasks_close(struct tasks *it);
#endif
