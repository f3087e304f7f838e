/* pidfd: a descriptor that names one process, so that a check and a signal concern the same process even if
 * its PID is reused meanwhile. The only place that knows the system call numbers (older libc lacks them). */
#ifndef DIAGTOP_PIDFD_H
#define DIAGTOP_PIDFD_H

/* pidfd_open(pid): a close-on-exec descriptor that polls readable when the process exits. Returns it, or -errno
 * with errno set (ESRCH: no such process). */
int pidfd_of(int pid);
/* Sends sig to the process of the pidfd. Returns 0 or -errno with errno set. Only a system call: safe in a child
 * forked from a multi-threaded process. */
int pidfd_signal(int fd, int sig);
#endif
