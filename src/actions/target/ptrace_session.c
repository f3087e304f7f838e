#include "ptrace_session.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/procstat.h"
#include "util/clock.h"
#include "util/fileio.h"
#include "util/tasks.h"
#include "util/text.h"

#define WAIT_POLL_NS 50000 /* 50 us between waitpid(WNOHANG) polls: stops take 10-100 us each */

/* ---- why a process cannot be traced ---- */

/* The reason ptrace was refused, naming what is missing (never gain privileges; say which is missing). */
void ptrace_session_explain_eperm(int pid, char *err, size_t errlen)
{
    char scope_text[16] = "";
    int scope = fileio_read_at(AT_FDCWD, "/proc/sys/kernel/yama/ptrace_scope", scope_text, sizeof scope_text) > 0
                    ? atoi(scope_text)
                    : -1;
    char status[4096] = "";
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    fileio_read_at(AT_FDCWD, path, status, sizeof status);
    const char *uid_line = strstr(status, "\nUid:");
    long target_uid = uid_line ? strtol(uid_line + 5, NULL, 10) : -1;
    long me = (long)geteuid();
    if (target_uid >= 0 && target_uid != me)
        snprintf(err, errlen,
                 "cannot attach to %d: permission denied (it runs as uid %ld, diagtop as uid %ld; run as that user "
                 "or with CAP_SYS_PTRACE, e.g. through sudo)",
                 pid, target_uid, me);
    else if (scope >= 1)
        snprintf(err, errlen,
                 "cannot attach to %d: permission denied by the ptrace policy (/proc/sys/kernel/yama/ptrace_scope = "
                 "%d; needs CAP_SYS_PTRACE%s)",
                 pid, scope, scope == 1 ? ", or ptrace_scope 0 for non-descendants" : "");
    else
        snprintf(err, errlen,
                 "cannot attach to %d: permission denied (the process is not dumpable, or a security module refuses; "
                 "needs CAP_SYS_PTRACE)",
                 pid);
}

int ptrace_session_check_alive(int pid, char *err, size_t errlen)
{
    struct procstat ps;
    if (procstat_read(pid, 0, &ps) < 0) {
        snprintf(err, errlen, "no process %d", pid);
        return -ESRCH;
    }
    if (ps.flags & PROCSTAT_PF_KTHREAD) {
        snprintf(err, errlen, "%d is a kernel thread: it has no user-space code", pid);
        return -EINVAL;
    }
    if (ps.state == 'Z' || ps.state == 'X') {
        snprintf(err, errlen, "%d is a zombie: it has exited and has no threads to show", pid);
        return -ESRCH;
    }
    return 0;
}

int ptrace_session_check(int pid, char *err, size_t errlen)
{
    char path[64], buf[4096];
    int rc = ptrace_session_check_alive(pid, err, errlen);
    if (rc < 0) return rc;
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    if (fileio_read_at(AT_FDCWD, path, buf, sizeof buf) > 0) {
        int tracer;
        if (text_status_pid(buf, "TracerPid:", &tracer) == 0) {
            char comm[64] = "?";
            snprintf(path, sizeof path, "/proc/%d/comm", tracer);
            if (fileio_read_at(AT_FDCWD, path, comm, sizeof comm) > 0) comm[strcspn(comm, "\n")] = '\0';
            snprintf(err, errlen, "%d is already traced by process %d (%s): detach that debugger first", pid, tracer,
                     comm);
            return -EBUSY;
        }
    }
    return 0;
}

/* ---- the session ---- */

static struct ptrace_thread *find(struct ptrace_session *s, int tid)
{
    for (int i = 0; i < s->n; i++)
        if (s->threads[i].tid == tid) return &s->threads[i];
    return NULL;
}

static int add(struct ptrace_session *s, int tid)
{
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 64;
        struct ptrace_thread *t = realloc(s->threads, (size_t)cap * sizeof *t);
        if (!t) return -ENOMEM;
        s->threads = t;
        s->cap = cap;
    }
    s->threads[s->n++] = (struct ptrace_thread){.tid = tid};
    return 0;
}

/* One the caller saw in D and still in D now: only those few are read again, inside the stop's window. */
static int left_alone(const struct ptrace_session *s, int tid)
{
    struct procstat ps;
    for (int i = 0; i < s->nleave; i++)
        if (s->leave[i] == tid) return procstat_read(s->pid, tid, &ps) == 0 && ps.state == 'D';
    return 0;
}

/* Seizes and interrupts every thread not yet in the session; returns how many were new, or -errno. */
static int seize_new_threads(struct ptrace_session *s, char *err, size_t errlen)
{
    struct tasks it;
    if (tasks_open(&it, AT_FDCWD, s->pid) < 0) {
        snprintf(err, errlen, "process %d exited", s->pid);
        return -ESRCH;
    }
    int added = 0, rc = 0, tid;
    while (rc == 0 && (tid = tasks_next(&it))) {
        if (find(s, tid) || (s->only_tid && tid != s->only_tid)) continue;
        /* Room first, so that a seized thread is always in the session and always detached. */
        if (add(s, tid) < 0) {
            rc = -ENOMEM;
            snprintf(err, errlen, "out of memory");
            break;
        }
        if (left_alone(s, tid)) {
            s->threads[s->n - 1].left = 1;
            continue;
        }
        if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0) {
            int e = errno;
            s->n--;
            if (e == ESRCH) continue; /* exited meanwhile */
            /* An exiting thread (exit_state set, not yet reaped) also answers EPERM. Permission is the
             * process's: once another thread was seized, EPERM means that thread is on its way out. */
            if (e == EPERM && s->n > 0) continue;
            if (e == EPERM) {
                ptrace_session_explain_eperm(s->pid, err, errlen);
                rc = -EPERM;
            } else {
                rc = -e;
                snprintf(err, errlen, "cannot attach to thread %d of %d: %s", tid, s->pid, strerror(e));
            }
            break;
        }
        if (s->stop_begin == 0) s->stop_begin = clock_monotonic_seconds();
        ptrace(PTRACE_INTERRUPT, tid, 0, 0);
        added++;
    }
    tasks_close(&it);
    return rc < 0 ? rc : added;
}

/* Collects one wait status for t without blocking; returns 1 when t changed state. */
static int poll_thread(struct ptrace_session *s, struct ptrace_thread *t)
{
    int st;
    pid_t r = waitpid(t->tid, &st, __WALL | WNOHANG);
    if (r == 0) return 0;
    if (r < 0) { /* ECHILD: it is gone (or was reaped by an exec in another thread) */
        t->gone = 1;
        return 1;
    }
    if (WIFEXITED(st) || WIFSIGNALED(st)) {
        t->gone = 1;
        return 1;
    }
    if (!WIFSTOPPED(st)) return 0;
    int sig = WSTOPSIG(st), event = st >> 16;
    if (event == PTRACE_EVENT_STOP) {
        /* Our interrupt, or a group stop (SIGSTOP, SIGTSTP...) in which the process already was. */
        if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) s->was_stopped = 1;
    } else if (event == 0) {
        /* A signal-delivery stop came first: keep the signal to hand it back on detach. */
        t->pending_sig = sig;
    }
    t->stopped = 1;
    return 1;
}

/* A thread that is exiting (killed with its process, say) never reaches a ptrace stop, and the leader of a
 * dying process is reported only after every other thread: such a thread counts as gone. */
static int thread_exiting(int pid, int tid)
{
    struct procstat ps;
    return procstat_read(pid, tid, &ps) < 0 || ps.state == 'Z' || ps.state == 'X';
}

/* Waits until every live thread is stopped or the deadline passes. */
static int wait_all(struct ptrace_session *s, double deadline, const volatile sig_atomic_t *cancel, char *err,
                    size_t errlen)
{
    for (int round = 0;; round++) {
        int waiting = 0;
        for (int i = 0; i < s->n; i++) {
            struct ptrace_thread *t = &s->threads[i];
            if (t->stopped || t->gone || t->exiting || t->left) continue;
            if (poll_thread(s, t)) continue;
            if (round % 64 == 63 && thread_exiting(s->pid, t->tid)) { /* every few ms */
                t->exiting = 1;
                continue;
            }
            waiting++;
        }
        if (!waiting) return 0;
        if (cancel && *cancel) {
            snprintf(err, errlen, "cancelled");
            return -ECANCELED;
        }
        if (clock_monotonic_seconds() > deadline) {
            snprintf(err, errlen,
                     "%d thread%s of %d did not stop in time (uninterruptible sleep, state D?): nothing was captured",
                     waiting, waiting == 1 ? "" : "s", s->pid);
            return -ETIMEDOUT;
        }
        struct timespec ts = {0, WAIT_POLL_NS};
        nanosleep(&ts, NULL);
    }
}

static int stop_threads(struct ptrace_session *s, int pid, int only_tid, const int *leave, int nleave, double timeout,
                        const volatile sig_atomic_t *cancel, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->pid = pid;
    s->only_tid = only_tid;
    s->leave = leave;
    s->nleave = nleave;
    int rc = ptrace_session_check(pid, err, errlen);
    if (rc < 0) return rc;
    pid_t self = (pid_t)syscall(SYS_gettid);
    errno = 0;
    s->old_nice = getpriority(PRIO_PROCESS, (id_t)self);
    s->boosted = errno == 0 && setpriority(PRIO_PROCESS, (id_t)self, -20) == 0;
    double deadline = clock_monotonic_seconds() + timeout;
    /* Threads created by a thread we had not stopped yet are found by scanning again, until a scan after all
     * stops finds nothing new: then no thread is left running to create another. */
    for (int round = 0;; round++) {
        int added = seize_new_threads(s, err, errlen);
        if (added < 0) {
            rc = added;
            break;
        }
        if (added == 0 && round > 0) break;
        if (s->n == 0) {
            if (only_tid) snprintf(err, errlen, "thread %d of %d is gone", only_tid, pid);
            else snprintf(err, errlen, "process %d has no threads left", pid);
            rc = -ESRCH;
            break;
        }
        rc = wait_all(s, deadline, cancel, err, errlen);
        if (rc < 0) break;
    }
    int live = 0;
    for (int i = 0; i < s->n; i++)
        live += s->threads[i].left || (s->threads[i].stopped && !s->threads[i].gone && !s->threads[i].exiting);
    if (rc == 0 && live == 0) {
        snprintf(err, errlen, "process %d exited", pid);
        rc = -ESRCH;
    }
    if (rc < 0) ptrace_session_detach(s, 0.5);
    return rc;
}

int ptrace_session_stop(struct ptrace_session *s, int pid, double timeout, const volatile sig_atomic_t *cancel,
                        char *err, size_t errlen)
{
    return stop_threads(s, pid, 0, NULL, 0, timeout, cancel, err, errlen);
}

int ptrace_session_stop_leaving(struct ptrace_session *s, int pid, const int *leave, int nleave, double timeout,
                                const volatile sig_atomic_t *cancel, char *err, size_t errlen)
{
    return stop_threads(s, pid, 0, leave, nleave, timeout, cancel, err, errlen);
}

int ptrace_session_stop_thread(struct ptrace_session *s, int pid, int tid, double timeout,
                               const volatile sig_atomic_t *cancel, char *err, size_t errlen)
{
    return stop_threads(s, pid, tid, NULL, 0, timeout, cancel, err, errlen);
}

void ptrace_session_detach(struct ptrace_session *s, double linger)
{
    if (s->detached) return;
    s->detached = 1;
    int left = 0;
    for (int i = 0; i < s->n; i++) {
        struct ptrace_thread *t = &s->threads[i];
        if (t->gone || t->left) continue; /* never seized */
        if (!t->stopped) {
            left++;
            continue;
        }
        if (ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)t->pending_sig) == 0 || errno == ESRCH) t->gone = 1;
    }
    s->stop_end = clock_monotonic_seconds();
    if (s->boosted) { /* the target runs again: back to the caller's priority */
        setpriority(PRIO_PROCESS, (id_t)(pid_t)syscall(SYS_gettid), s->old_nice);
        s->boosted = 0;
    }
    /* A thread seized but not yet stopped cannot be detached until it stops; give it a moment. An exiting one is
     * waited for, so that its parent, not diagtop, gets to reap it. */
    double deadline = s->stop_end + linger;
    while (left > 0 && clock_monotonic_seconds() < deadline) {
        left = 0;
        for (int i = 0; i < s->n; i++) {
            struct ptrace_thread *t = &s->threads[i];
            if (t->gone || t->left) continue;
            if (!t->stopped && !poll_thread(s, t)) {
                left++;
                continue;
            }
            if (!t->gone) ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)t->pending_sig);
            t->gone = 1;
        }
        if (left) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
}

void ptrace_session_release_others(struct ptrace_session *s, int keep_tid)
{
    for (int i = 0; i < s->n; i++) {
        struct ptrace_thread *t = &s->threads[i];
        if (t->tid == keep_tid || t->held || t->gone || !t->stopped) continue;
        if (ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)t->pending_sig) == 0 || errno == ESRCH) t->gone = 1;
    }
    s->stop_end = clock_monotonic_seconds();
}

double ptrace_session_stopped_ms(const struct ptrace_session *s)
{
    if (s->stop_begin == 0 || s->stop_end < s->stop_begin) return 0;
    return (s->stop_end - s->stop_begin) * 1000.0;
}

void ptrace_session_free(struct ptrace_session *s)
{
    free(s->threads);
    s->threads = NULL;
    s->n = s->cap = 0;
}
