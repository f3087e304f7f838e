/* signal_trap: waits, attached but never stopping the process, for the moment it receives one of some signals
 * (SIGSEGV, SIGABRT, ...) or is about to exit, and holds it there with every thread stopped, so that a core can
 * be written before the signal does its work; then lets it go with the signal delivered unchanged (its siginfo
 * kept). Every thread is PTRACE_SEIZEd with PTRACE_O_TRACECLONE (new threads follow) and, for exits,
 * PTRACE_O_TRACEEXIT; no PTRACE_O_EXITKILL, so diagtop's death detaches and the process runs on. Signals not
 * asked for are passed on untouched, group stops are kept with PTRACE_LISTEN (job control behaves as without
 * diagtop). All calls from one thread (ptrace's rule); SIGCHLD is blocked in it while armed (its stops are
 * collected with sigtimedwait). */
#ifndef DIAGTOP_SIGNAL_TRAP_H
#define DIAGTOP_SIGNAL_TRAP_H
#include <signal.h>
#include <stddef.h>

#include "ptrace_session.h"

struct signal_trap {
    int pid;
    unsigned long long want; /* bit (sig - 1) for each signal asked */
    int on_exit;
    struct ptrace_session s; /* the seized threads; stopped after a hit */
    int hit_tid, hit_sig;    /* the thread and the signal that hit (hit_sig 0 for an exit) */
    siginfo_t hit_info;
    int exit_code;           /* an exit's status, as wait gives it */
    sigset_t old_mask;
};

/* Attaches to every thread of pid. Returns 0, or -errno with a reason (nothing stays attached). */
int signal_trap_arm(struct signal_trap *t, int pid, unsigned long long want, int on_exit, char *err, size_t errlen);
/* Collects what the threads do for up to timeout seconds, passing on what is not asked for. Returns 1 on a hit
 * (every thread then stopped in t->s, the hit one holding its signal to be delivered at release), 0 when the time
 * ran out, -ESRCH when the process is gone (exit_code set), or -errno with a reason. */
int signal_trap_wait(struct signal_trap *t, double timeout, const volatile sig_atomic_t *cancel, char *err,
                     size_t errlen);
/* Detaches every thread: each held signal is delivered (the hit one with its siginfo). Idempotent. */
void signal_trap_release(struct signal_trap *t);
/* "SEGV,ABRT" or "11,6" into a mask. Returns 0, or -1. */
int signal_trap_parse(const char *list, unsigned long long *want);
#endif
