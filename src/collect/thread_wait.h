/* thread_wait: what a blocked thread waits on, from /proc alone: the system call it sits in
 * (/proc/PID/task/TID/syscall) with its arguments decoded, the descriptor it waits on resolved to what it is (a
 * file and offset, a socket's endpoints and state, a pipe and the process holding its other end, an eventfd, a
 * timerfd, an epoll set), the threads sharing its futex, its kernel stack (root, uninterruptible sleep only) and
 * how long ago it last ran (/proc/PID/task/TID/sched). Reading is one pass per thread, then one pass over them all
 * (thread_waits_link) for what needs the others: futex fellows, and the scan of /proc for pipes' other ends. */
#ifndef DIAGTOP_THREAD_WAIT_H
#define DIAGTOP_THREAD_WAIT_H
#include <stddef.h>

#define THREAD_WAIT_PEERS 16

struct thread_wait {
    int tid;
    long nr;                    /* system call number; -1 blocked outside one (a page fault, a stop) */
    int restarted;              /* the kernel said restart_syscall (a stop interrupted it); nr is the call's own */
    const char *syscall;        /* its name when decoded ("read"), static; NULL otherwise */
    unsigned long long args[6];
    unsigned long long sp, pc;  /* user stack pointer and the pc after the call */
    char call[200];             /* "read(fd 5, 64 bytes)", "futex(0x55dc8f502140, wait)"; "syscall 271(...)" */
    int fd;                     /* the descriptor it waits on; -1 none */
    int fd_flags;               /* its open flags (fdinfo); -1 unknown */
    char fd_kind[16];           /* "socket", "pipe", "file", "eventfd", "timerfd", "epoll", "signalfd", ... */
    char object[320];           /* what that descriptor is: "tcp 127.0.0.1:51234 -> 127.0.0.1:5432 ESTABLISHED" */
    unsigned long inode;        /* socket or pipe inode, to tell threads waiting on the same one; 0 otherwise */
    unsigned long long futex;   /* futex word waited on; 0 none */
    int peers[THREAD_WAIT_PEERS]; /* every thread (itself included) waiting on the same futex, by tid */
    int npeers, more_peers;     /* more_peers: beyond the array */
    char **kernel;              /* kernel stack ("kernel_clone+0x1d3/0x400"), read as root in state D; NULL */
    int nkernel;
    double since;               /* seconds since it last ran (sched's se.exec_start); -1 unknown */
};

/* /proc/PID/task/TID/syscall ("NR a1..a6 sp pc", "-1 sp pc" outside a call, or "running"): 1 blocked, with nr
 * (-1 outside a system call), the six arguments (0 outside one), sp and pc; 0 running; -1 unreadable. */
int thread_syscall_read(int pid, int tid, long *nr, unsigned long long args[6], unsigned long long *sp,
                        unsigned long long *pc);
/* Reads tid's wait. Returns 0, or -1 when it is running or its syscall file is unreadable (w is then unset). */
int thread_wait_read(int pid, int tid, char state, struct thread_wait *w);
/* What needs every thread: futex fellows and what holds the other end of each pipe (one scan of /proc). */
void thread_waits_link(int pid, struct thread_wait **waits, size_t n);
/* Whether two threads wait on the same thing (the same call on the same descriptor object or futex word). */
int thread_wait_same(const struct thread_wait *a, const struct thread_wait *b);
/* One line: "read(fd 5, 64 bytes) on socket tcp 127.0.0.1:1 -> 127.0.0.1:2 ESTABLISHED, for 3.2 s", not
 * sanitized (object holds paths). */
void thread_wait_describe(const struct thread_wait *w, char *buf, size_t n);
void thread_wait_free(struct thread_wait *w);
#endif
