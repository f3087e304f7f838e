#include "api_target.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fileio.h"
#include "util/text.h"

/* The thread group of a task: Tgid in /proc/PID/status, or -1. */
static int tgid_of(int pid)
{
    char *st = fileio_read_proc(AT_FDCWD, pid, "status", 1 << 14, NULL);
    if (!st) return -1;
    int tgid = -1;
    text_status_pid(st, "Tgid:", &tgid);
    free(st);
    return tgid;
}

int api_target_check(int pid, int acting, struct procstat *ps, struct api_reply *r)
{
    if (procstat_read(pid, 0, ps) < 0) return api_reply_error(r, 404, "no process %d", pid);
    int tgid = tgid_of(pid);
    if (tgid > 0 && tgid != pid) return api_reply_error(r, 404, "%d is a thread of process %d, not a process", pid, tgid);
    if (!acting) return 0;
    if (ps->flags & PROCSTAT_PF_KTHREAD)
        return api_reply_error(r, 422, "process %d is a kernel thread: it has no user space to act on", pid);
    if (pid == getpid()) return api_reply_error(r, 422, "process %d is this diagtop server", pid);
    if (ps->state == 'Z') return api_reply_error(r, 422, "process %d is a zombie: it has exited", pid);
    return 0;
}
