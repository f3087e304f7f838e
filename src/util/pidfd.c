#include "pidfd.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

int pidfd_of(int pid)
{
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    return fd < 0 ? -errno : fd;
}

int pidfd_signal(int fd, int sig)
{
    return syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0) < 0 ? -errno : 0;
}
