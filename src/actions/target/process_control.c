#include "process_control.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "collect/procstat.h"
#include "util/fileio.h"
#include "util/pidfd.h"

/* Opens a pidfd for pid and checks it is the identity we showed. Returns the fd or -errno. */
static int open_identity(int pid, unsigned long long start_ticks, char *err, size_t errlen)
{
    int fd = pidfd_of(pid);
    if (fd < 0) {
        int e = -fd;
        snprintf(err, errlen, "process %d: %s", pid, e == ESRCH ? "no longer exists" : strerror(e));
        return -e;
    }
    /* Read the start time only after holding the pidfd: if it matches now, the pidfd is that process. */
    struct procstat ps;
    if (procstat_read(pid, 0, &ps) < 0 || ps.starttime != start_ticks) {
        close(fd);
        snprintf(err, errlen, "process %d: no longer exists (its PID was reused)", pid);
        return -ESRCH;
    }
    return fd;
}

int process_signal(int pid, unsigned long long start_ticks, int sig, char *err, size_t errlen)
{
    int fd = open_identity(pid, start_ticks, err, errlen);
    if (fd < 0) return fd;
    int rc = pidfd_signal(fd, sig), e = -rc;
    close(fd);
    if (rc < 0) {
        snprintf(err, errlen, "signal %s to %d: %s", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", pid, strerror(e));
        return -e;
    }
    return 0;
}

int process_renice(int pid, unsigned long long start_ticks, int delta, char *err, size_t errlen)
{
    int fd = open_identity(pid, start_ticks, err, errlen);
    if (fd < 0) return fd;
    /* setpriority has no pidfd form: holding the pidfd keeps the PID from being reused meanwhile. */
    errno = 0;
    int cur = getpriority(PRIO_PROCESS, (id_t)pid);
    int rc = errno ? -1 : setpriority(PRIO_PROCESS, (id_t)pid, cur + delta);
    int e = errno;
    close(fd);
    if (rc < 0) {
        snprintf(err, errlen, "nice %+d for %d: %s%s", delta, pid, strerror(e),
                 e == EACCES && delta < 0 ? " (lowering nice needs CAP_SYS_NICE)" : "");
        return -e;
    }
    return 0;
}
