#include "signal_trap.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/tasks.h"

static struct ptrace_thread *find(struct ptrace_session *s, int tid)
{
    for (int i = 0; i < s->n; i++)
        if (s->threads[i].tid == tid && !s->threads[i].gone) return &s->threads[i];
    return NULL;
}

static struct ptrace_thread *add(struct ptrace_session *s, int tid)
{
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 64;
        struct ptrace_thread *t = realloc(s->threads, (size_t)cap * sizeof *t);
        if (!t) return NULL;
        s->threads = t;
        s->cap = cap;
    }
    s->threads[s->n] = (struct ptrace_thread){.tid = tid};
    return &s->threads[s->n++];
}

int signal_trap_parse(const char *list, unsigned long long *want)
{
    static const struct { const char *name; int sig; } names[] = {
        {"SEGV", SIGSEGV}, {"ABRT", SIGABRT}, {"BUS", SIGBUS}, {"FPE", SIGFPE}, {"ILL", SIGILL}, {"TRAP", SIGTRAP},
        {"SYS", SIGSYS}, {"TERM", SIGTERM}, {"INT", SIGINT}, {"HUP", SIGHUP}, {"QUIT", SIGQUIT}, {"USR1", SIGUSR1},
        {"USR2", SIGUSR2}, {"PIPE", SIGPIPE}, {"ALRM", SIGALRM}, {"XCPU", SIGXCPU}, {"XFSZ", SIGXFSZ}};
    *want = 0;
    char buf[256];
    if (!list || !*list || strlen(list) >= sizeof buf) return -1;
    strcpy(buf, list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (strncmp(tok, "SIG", 3) == 0) tok += 3;
        int sig = 0;
        for (size_t i = 0; i < sizeof names / sizeof *names && !sig; i++)
            if (strcmp(tok, names[i].name) == 0) sig = names[i].sig;
        if (!sig) {
            char *end;
            long v = strtol(tok, &end, 10);
            if (*end || end == tok || v < 1 || v > 64 || v == SIGKILL || v == SIGSTOP) return -1;
            sig = (int)v;
        }
        *want |= 1ull << (sig - 1);
    }
    return *want ? 0 : -1;
}

/* Seizes every thread of the process not yet held, rescanning until no new one appears. */
static int seize_all(struct signal_trap *t, char *err, size_t errlen)
{
    long opts = PTRACE_O_TRACECLONE | (t->on_exit ? PTRACE_O_TRACEEXIT : 0);
    for (int pass = 0, added = 1; added && pass < 100; pass++) {
        struct tasks it;
        if (tasks_open(&it, AT_FDCWD, t->pid) < 0) {
            snprintf(err, errlen, "no process %d", t->pid);
            return -ESRCH;
        }
        int tid;
        added = 0;
        while ((tid = tasks_next(&it))) {
            if (find(&t->s, tid)) continue;
            if (ptrace(PTRACE_SEIZE, tid, 0, (void *)opts) < 0) {
                int e = errno;
                if (e == ESRCH || (e == EPERM && t->s.n > 0)) continue; /* exited, or exiting */
                tasks_close(&it);
                if (e == EPERM) ptrace_session_explain_eperm(t->pid, err, errlen);
                else snprintf(err, errlen, "cannot attach to thread %d of %d: %s", tid, t->pid, strerror(e));
                return -e;
            }
            if (!add(&t->s, tid)) {
                ptrace(PTRACE_DETACH, tid, 0, 0);
                tasks_close(&it);
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
            }
            added++;
        }
        tasks_close(&it);
    }
    return 0;
}

int signal_trap_arm(struct signal_trap *t, int pid, unsigned long long want, int on_exit, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->want = want;
    t->on_exit = on_exit;
    t->s.pid = pid;
    int rc = ptrace_session_check(pid, err, errlen);
    if (rc < 0) return rc;
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &chld, &t->old_mask);
    if ((rc = seize_all(t, err, errlen)) < 0) signal_trap_release(t);
    return rc;
}

/* Whether a thread at its exit stop leaves alone (pthread_exit: SYS_exit, not killed), the process living on: what
 * --exit does not wait for. The system call it is in says it (exit_group or another one a group exit or a fatal
 * signal interrupted). */
static int thread_alone_exits(int pid, int tid, int status)
{
    if (tid == pid || WIFSIGNALED(status)) return 0;
    char path[64], buf[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", pid, tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    return atol(buf) == SYS_exit;
}

static int is_stop_signal(int sig)
{
    return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* One wait status of a tracee. Returns 1 when it is a hit, else 0 (it was let go on). */
static int on_status(struct signal_trap *t, struct ptrace_thread *th, int status)
{
    int tid = th->tid;
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
        th->gone = 1;
        if (tid == t->pid) t->exit_code = status;
        return 0;
    }
    if (!WIFSTOPPED(status)) return 0;
    int sig = WSTOPSIG(status), event = status >> 16;
    unsigned long msg = 0;
    switch (event) {
    case PTRACE_EVENT_CLONE: /* the new thread is attached already; it reports its own first stop */
        if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0 && !find(&t->s, (int)msg)) add(&t->s, (int)msg);
        ptrace(PTRACE_CONT, tid, 0, 0);
        return 0;
    case PTRACE_EVENT_EXIT:
        ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg);
        if (t->on_exit && !thread_alone_exits(t->pid, tid, (int)msg)) {
            th->stopped = th->held = 1;
            t->hit_tid = tid;
            t->hit_sig = 0;
            t->exit_code = (int)msg;
            return 1;
        }
        ptrace(PTRACE_CONT, tid, 0, 0);
        return 0;
    case PTRACE_EVENT_STOP: /* a group stop stays one (job control as without diagtop); else a new thread's */
        if (is_stop_signal(sig)) ptrace(PTRACE_LISTEN, tid, 0, 0);
        else ptrace(PTRACE_CONT, tid, 0, 0);
        return 0;
    case 0:
        break;
    default: ptrace(PTRACE_CONT, tid, 0, 0); return 0;
    }
    /* A signal-delivery stop: ours to hold, or passed on as it came. */
    if (sig >= 1 && sig <= 64 && (t->want >> (sig - 1) & 1)) {
        th->stopped = th->held = 1;
        th->pending_sig = sig;
        t->hit_tid = tid;
        t->hit_sig = sig;
        ptrace(PTRACE_GETSIGINFO, tid, 0, &t->hit_info);
        return 1;
    }
    ptrace(PTRACE_CONT, tid, 0, (void *)(long)sig);
    return 0;
}

/* Every status waiting now, without blocking. Returns 1 on a hit. */
static int drain(struct signal_trap *t)
{
    int hit = 0;
    for (;;) {
        int status;
        pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
        if (tid <= 0) return hit;
        struct ptrace_thread *th = find(&t->s, tid);
        if (!th && !(th = add(&t->s, tid))) continue; /* a clone whose stop came before its parent's event */
        if (hit) { /* after the hit: every other stop is kept, its signal held for the release */
            if (WIFSTOPPED(status)) {
                th->stopped = 1;
                int sig = WSTOPSIG(status), event = status >> 16;
                if (event == 0 && !is_stop_signal(sig)) th->pending_sig = sig;
            } else {
                th->gone = 1;
            }
            continue;
        }
        hit = on_status(t, th, status);
    }
}

/* After a hit: every other thread interrupted and waited for, so the process is still as a whole. */
static void stop_others(struct signal_trap *t)
{
    t->s.stop_begin = clock_monotonic_seconds();
    for (int i = 0; i < t->s.n; i++)
        if (!t->s.threads[i].gone && !t->s.threads[i].stopped) ptrace(PTRACE_INTERRUPT, t->s.threads[i].tid, 0, 0);
    double deadline = t->s.stop_begin + 2.0;
    for (;;) {
        int left = 0;
        for (int i = 0; i < t->s.n; i++) {
            struct ptrace_thread *th = &t->s.threads[i];
            if (th->gone || th->stopped) continue;
            int status;
            pid_t r = waitpid(th->tid, &status, __WALL | WNOHANG);
            if (r == th->tid && WIFSTOPPED(status)) {
                th->stopped = 1;
                int sig = WSTOPSIG(status), event = status >> 16;
                if (event == 0 && !is_stop_signal(sig)) th->pending_sig = sig;
            } else if (r == th->tid || (r < 0 && errno == ECHILD)) {
                th->gone = 1;
            } else {
                left++;
            }
        }
        if (!left || clock_monotonic_seconds() > deadline) break;
        clock_sleep(0.0005, NULL);
    }
}

int signal_trap_wait(struct signal_trap *t, double timeout, const volatile sig_atomic_t *cancel, char *err,
                     size_t errlen)
{
    double deadline = clock_monotonic_seconds() + timeout;
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    for (;;) {
        if (drain(t)) {
            stop_others(t);
            return 1;
        }
        struct ptrace_thread *leader = find(&t->s, t->pid);
        if (!leader) {
            snprintf(err, errlen, "process %d exited", t->pid);
            return -ESRCH;
        }
        double left = deadline - clock_monotonic_seconds();
        if (left <= 0 || (cancel && *cancel)) return 0;
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        sigtimedwait(&chld, NULL, &ts); /* a stop, the time, or a signal (a cancel) */
    }
}

void signal_trap_release(struct signal_trap *t)
{
    if (!t->s.detached) {
        /* Running threads cannot be detached: stop them first (a thread in a group stop is in a ptrace stop). */
        stop_others(t);
        ptrace_session_detach(&t->s, 0.5);
        /* A thread born during the last moments, attached by TRACECLONE but never listed: found and let go. */
        int status;
        pid_t tid;
        while ((tid = waitpid(-1, &status, __WALL | WNOHANG)) > 0)
            if (WIFSTOPPED(status))
                ptrace(PTRACE_DETACH, tid, 0, (void *)(long)((status >> 16) == 0 && !is_stop_signal(WSTOPSIG(status))
                                                                 ? WSTOPSIG(status) : 0));
    }
    ptrace_session_free(&t->s);
    memset(&t->s, 0, sizeof t->s);
    t->s.detached = 1;
    pthread_sigmask(SIG_SETMASK, &t->old_mask, NULL);
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    struct timespec zero = {0, 0};
    while (sigtimedwait(&chld, NULL, &zero) > 0) {
    } /* what the tracees sent is not for the rest of diagtop */
}
