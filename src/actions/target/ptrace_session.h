/* ptrace_session: stopping every thread of a process at once, for a few milliseconds, and letting it go again.
 * PTRACE_SEIZE + PTRACE_INTERRUPT each thread, re-scanning /proc/PID/task until no new thread appears, waiting
 * for every stop with a deadline. Every path detaches: a signal consumed from a signal-delivery stop is handed
 * back on detach; a process that was already stopped (SIGSTOP) stays stopped. No option is ever set on the
 * target (no PTRACE_O_EXITKILL): if diagtop dies, the kernel detaches and the target runs on.
 * All calls of one session must come from the same thread (ptrace's rule). */
#ifndef DIAGTOP_PTRACE_SESSION_H
#define DIAGTOP_PTRACE_SESSION_H
#include <signal.h>
#include <stddef.h>

struct ptrace_thread {
    int tid;
    int stopped;     /* in a ptrace stop: registers and memory can be read */
    int pending_sig; /* a signal taken from a signal-delivery stop, re-injected on detach */
    int gone;        /* exited during the session (its exit status consumed) */
    int exiting;     /* on its way out: it will never stop; its exit is collected on detach */
    int held;        /* kept stopped by the session's owner when the others are released (signal_trap's hit) */
    int left;        /* ptrace_session_stop_leaving: one the caller saw in uninterruptible sleep (D), never seized */
};

struct ptrace_session {
    int pid;
    struct ptrace_thread *threads;
    int n, cap;
    int was_stopped;        /* the process was in a group stop (state T) before: it stays stopped */
    double stop_begin;      /* monotonic seconds: first PTRACE_INTERRUPT */
    double stop_end;        /* last detach */
    int detached;
    int boosted, old_nice; /* the calling thread's nice value, raised while the target is stopped */
    int only_tid;          /* ptrace_session_stop_thread: the one thread stopped, the others run on */
    const int *leave;      /* ptrace_session_stop_leaving: tids not to seize */
    int nleave;
};

/* Checks pid is a live user-space process (exists, not a zombie, not a kernel thread), saying why not in err.
 * Returns 0 or -errno. */
int ptrace_session_check_alive(int pid, char *err, size_t errlen);
/* Checks the target can be stopped (exists, not a zombie, not a kernel thread, not already traced) and says why
 * not in err. Returns 0 or -errno. Cheap; nothing is attached. */
int ptrace_session_check(int pid, char *err, size_t errlen);

/* Stops every thread of pid within timeout seconds. While the target is stopped the calling thread runs at nice
 * -20 where allowed (CAP_SYS_NICE), so that the threads it wakes do not preempt it; detach gives it back. cancel, when set by a signal handler or another thread,
 * aborts (detaching). On failure everything already attached is detached and -errno returned with a reason. */
int ptrace_session_stop(struct ptrace_session *s, int pid, double timeout, const volatile sig_atomic_t *cancel,
                        char *err, size_t errlen);

/* The same, but the threads in leave (the caller saw them in uninterruptible sleep, D, a moment before) are left
 * alone, their ptrace_thread marked left: a D thread would not stop before it wakes, which on a hung NFS mount or a
 * frozen cgroup is never, and a seized thread cannot be let go before it stops. Its user registers hold still while
 * it sleeps; the caller reads it unstopped and checks. The candidates come from the caller, which has just read
 * every thread's state: only they are read again (still in D?), so the stop holds no extra read per thread. leave
 * must live until the call returns. */
int ptrace_session_stop_leaving(struct ptrace_session *s, int pid, const int *leave, int nleave, double timeout,
                                const volatile sig_atomic_t *cancel, char *err, size_t errlen);

/* The same for one thread of pid only (the others keep running): a pause of that thread, e.g. to make it run a
 * system call. */
int ptrace_session_stop_thread(struct ptrace_session *s, int pid, int tid, double timeout,
                               const volatile sig_atomic_t *cancel, char *err, size_t errlen);

/* Detaches every thread (handing back pending signals). Threads that never reached their stop are waited for up to
 * linger seconds and then left to the kernel (which detaches them when this process exits). Idempotent. */
void ptrace_session_detach(struct ptrace_session *s, double linger);

/* Detaches every stopped thread but keep_tid and the held ones (handing back pending signals): the others run again
 * while those stay stopped, e.g. once a snapshot's copy exists. ptrace_session_detach does the rest. */
void ptrace_session_release_others(struct ptrace_session *s, int keep_tid);

/* Why access to pid was refused, naming what is missing (same uid, ptrace_scope, CAP_SYS_PTRACE). */
void ptrace_session_explain_eperm(int pid, char *err, size_t errlen);
/* Milliseconds between the first interrupt and the last detach. */
double ptrace_session_stopped_ms(const struct ptrace_session *s);
void ptrace_session_free(struct ptrace_session *s);
#endif
