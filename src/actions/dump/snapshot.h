/* snapshot: a frozen copy of a live process, made by the process itself, so that a dump reads the copy while the
 * process runs on (Windows' PssCaptureSnapshot, done with ptrace). With every thread stopped, the main thread is
 * made to call clone(CLONE_FILES | CLONE_FS, exit signal 0); the kernel copies the page tables (~12 ms a GiB, the
 * only pause) and the copy, born traced by diagtop, never leaves its first stop. Afterwards the copy is killed and
 * the main thread, stopped alone for a moment, reaps it with wait4.
 *
 * What the process sees: no signal (exit signal 0: its waitpid(-1) never sees the copy, only __WALL does), no
 * descriptor held open by the copy (the table is shared, so a pipe it closes reaches EOF at once), its main thread's
 * registers, signal mask and options exactly as they were (an interrupted system call restarts as it would have).
 * The copy has oom_score_adj 1000 and PTRACE_O_EXITKILL; the process's own threads never get EXITKILL.
 *
 * If diagtop dies at any instant (SIGKILL; catchable signals are blocked and its oom_score_adj is -1000 during the
 * stops, where allowed): before the clone, the thread runs a harmless getpid; in every case it returns from the
 * call into the recovery frame of arch_regs.h, which restores its registers (a call interrupted through a restart
 * block returns EINTR instead of restarting); the copy, killed by EXITKILL, or if not yet held, running only its
 * own frame's exit_group, dies at once and stays a zombie under the process (exit signal 0: until the process
 * exits). */
#ifndef DIAGTOP_SNAPSHOT_H
#define DIAGTOP_SNAPSHOT_H
#include <signal.h>
#include <stddef.h>

#include "actions/target/arch_regs.h"
#include "actions/target/ptrace_session.h"

struct snapshot_plan { /* found before anything stops */
    int pid;
    struct arch_inject_sites sites;
    unsigned long long stack_lo, stack_hi; /* the main thread's [stack] mapping, where the frames go */
    int suspend_seccomp;                   /* the process has a seccomp filter, which diagtop may suspend */
};

/* Whether a snapshot of pid can be taken safely, with what it needs. Returns 0, or -errno and why not (a process
 * already stopped, a seccomp filter diagtop cannot suspend, a shadow stack, no usable code sequences...). Reads
 * /proc only: status, maps and a few pages of code. */
int snapshot_prepare(int pid, struct snapshot_plan *p, char *why, size_t whylen);

struct snapshot {
    int pid, tid;     /* the process, and the thread that made (and reaps) the copy */
    int copy;         /* the copy's pid; 0 when there is none */
    int held, dead;   /* EXITKILL and oom_score_adj set; killed (or died) */
    int killed;       /* SIGKILL sent */
    int reaped;       /* the zombie is gone */
    int released;     /* snapshot_release ran */
    int others_released; /* the other threads run again (from the clone's event on): the process is no longer
                          * stopped as it was, so a failure cannot fall back to copying it stopped */
    double clone_ms;  /* the clone call alone, from the entry stop to the event */
    double reap_ms;   /* the main thread's stop to reap it (0 when none was needed) */
    char reap_err[256]; /* why the zombie stayed under the process, when it did */
};

/* While every thread of s is stopped: the main thread (whose saved registers are main_regs, as read at its stop)
 * clones the copy and is put back exactly. during(arg), when not NULL, runs while the kernel copies (the other
 * threads still stopped: the time to read their registers); they are detached as soon as the copy exists, and the
 * main thread once it is back (the caller's ptrace_session_detach). On failure before the copy existed nothing was
 * created and the process is still stopped and unchanged, so the caller can copy from it instead; -errno with the
 * reason (the call's own error: EAGAIN from a process limit, ENOMEM under strict overcommit; a thread in a signal's
 * delivery; code that changed). A failure after it (sn->others_released: the thread died, say) kills the copy. */
int snapshot_take(struct snapshot *sn, const struct snapshot_plan *p, struct ptrace_session *s,
                  const struct arch_core_regs *main_regs, void (*during)(void *arg), void *arg, char *err,
                  size_t errlen);

/* After the process runs again: waits for the copy's first stop, then sets PTRACE_O_EXITKILL and oom_score_adj
 * 1000 on it. Returns 0 or -errno (the copy is then killed). */
int snapshot_hold(struct snapshot *sn, double timeout, char *err, size_t errlen);

/* 1 while the copy is there, stopped; 0 once it died (the OOM killer may pick it). */
int snapshot_alive(struct snapshot *sn);

/* Sends the copy SIGKILL once it is read: the kernel tears down its memory while the last writes go on. */
void snapshot_kill(struct snapshot *sn);

/* Kills the copy (if not yet), then has the main thread reap the zombie in a short stop of that thread alone (sn->reap_ms):
 * retried a few times if the thread is busy; when it cannot be, the zombie stays and reap_err says why.
 * Idempotent. */
void snapshot_release(struct snapshot *sn, const struct snapshot_plan *p, double timeout,
                      const volatile sig_atomic_t *cancel);

/* diagtop's protections while a target is stopped for a snapshot: catchable signals blocked in the calling
 * thread, oom_score_adj -1000 where allowed (CAP_SYS_RESOURCE). end restores both. */
struct snapshot_guard {
    sigset_t old_mask;
    char old_oom[16];
    int oom_set;
};
void snapshot_guard_begin(struct snapshot_guard *g);
void snapshot_guard_end(struct snapshot_guard *g);
#endif
