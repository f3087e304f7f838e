#include "ptrace_sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/procstat.h"
#include "util/clock.h"
#include "util/fileio.h"
#include "util/tasks.h"
#include "actions/target/ptrace_session.h"
#include "actions/stack/unwind.h"

#define STOP_WAIT_SECONDS 0.05 /* a running thread reaches its interrupt stop in microseconds */
#define PAGE 4096ULL

struct traced {
    int tid;
    int gone;           /* exited (its exit collected) */
    int group_stopped;  /* in a group stop (SIGSTOP...), listening: not sampled, left stopped */
    long long runtime;  /* schedstat ns at the previous sample */
};

struct ptrace_sampler {
    int pid;
    struct traced *t;
    int n, cap;
    long long stopped_ns;
    unsigned char stack[PERF_SAMPLER_STACK];
};

static struct traced *find(struct ptrace_sampler *s, int tid)
{
    for (int i = 0; i < s->n; i++)
        if (s->t[i].tid == tid) return &s->t[i];
    return NULL;
}

/* Threads not yet seized are seized (PTRACE_SEIZE: no stop, no signal). Returns how many threads there are. */
static int seize_new(struct ptrace_sampler *s, char *err, size_t errlen)
{
    struct tasks it;
    if (tasks_open(&it, AT_FDCWD, s->pid) < 0) return -ESRCH;
    int rc = 0, tid;
    while ((tid = tasks_next(&it))) {
        if (find(s, tid)) continue;
        if (s->n == s->cap) {
            int cap = s->cap ? s->cap * 2 : 32;
            struct traced *t = realloc(s->t, (size_t)cap * sizeof *t);
            if (!t) {
                rc = -ENOMEM;
                break;
            }
            s->t = t;
            s->cap = cap;
        }
        if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0) {
            if (errno == ESRCH || (errno == EPERM && s->n > 0)) continue; /* exiting meanwhile */
            rc = -errno;
            if (errno == EPERM) ptrace_session_explain_eperm(s->pid, err, errlen);
            else snprintf(err, errlen, "cannot attach to %d: %s", tid, strerror(errno));
            break;
        }
        s->t[s->n++] = (struct traced){tid, 0, 0, procstat_read_runtime_ns(s->pid, tid)};
    }
    tasks_close(&it);
    return rc;
}

/* What a wait status says of t. Returns 1 when t is in the interrupt stop diagtop asked for. Signals meant for
 * the target are handed back at once; a group stop is kept (PTRACE_LISTEN) so SIGCONT still works. */
static int handle_status(struct traced *t, int st)
{
    if (WIFEXITED(st) || WIFSIGNALED(st)) {
        t->gone = 1;
        return 0;
    }
    if (!WIFSTOPPED(st)) return 0;
    int sig = WSTOPSIG(st), event = st >> 16;
    if (event == PTRACE_EVENT_STOP) {
        if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
            t->group_stopped = 1;
            ptrace(PTRACE_LISTEN, t->tid, 0, 0);
            return 0;
        }
        t->group_stopped = 0;
        return 1;
    }
    ptrace(PTRACE_CONT, t->tid, 0, (void *)(long)(event == 0 ? sig : 0));
    return 0;
}

/* Events that came without being asked for (signals, exits, group stops and their end). */
static void collect_events(struct ptrace_sampler *s)
{
    for (int i = 0; i < s->n; i++) {
        struct traced *t = &s->t[i];
        int st;
        while (!t->gone) {
            pid_t r = waitpid(t->tid, &st, __WALL | WNOHANG);
            if (r == 0) break;
            if (r < 0) {
                t->gone = 1;
                break;
            }
            if (handle_status(t, st)) ptrace(PTRACE_CONT, t->tid, 0, 0); /* a late interrupt stop: let it go */
        }
    }
}

/* Interrupts t and waits for its interrupt stop. Returns 1 when stopped, 0 when it went away or did not stop. */
static int interrupt(struct traced *t)
{
    if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0) return 0;
    double deadline = clock_monotonic_seconds() + STOP_WAIT_SECONDS;
    for (;;) {
        int st;
        pid_t r = waitpid(t->tid, &st, __WALL | WNOHANG);
        if (r < 0) {
            t->gone = 1;
            return 0;
        }
        if (r > 0 && handle_status(t, st)) return 1;
        if (t->gone || t->group_stopped) return 0;
        double now = clock_monotonic_seconds();
        if (now > deadline) return 0; /* collected later by collect_events */
        /* The stop takes microseconds: poll without sleeping at first (a nanosleep costs its timer slack, 50 us,
         * during which the target stays stopped), then yield the CPU to the target's thread if they share one. */
        if (now + STOP_WAIT_SECONDS - deadline > 0.0002) sched_yield();
    }
}

int ptrace_sampler_open(struct ptrace_sampler **out, int pid, char *err, size_t errlen)
{
    *out = NULL;
    int rc = ptrace_session_check(pid, err, errlen);
    if (rc < 0) return rc;
    struct ptrace_sampler *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    s->pid = pid;
    if ((rc = seize_new(s, err, errlen)) < 0 || s->n == 0) {
        if (rc == 0) snprintf(err, errlen, "process %d has no threads left", pid);
        ptrace_sampler_close(s);
        return rc < 0 ? rc : -ESRCH;
    }
    *out = s;
    return 0;
}

int ptrace_sampler_tick(struct ptrace_sampler *s, void (*on_sample)(void *, const struct perf_sample *, long long),
                        void *arg)
{
    char err[256];
    if (seize_new(s, err, sizeof err) == -ESRCH) return -ESRCH;
    collect_events(s);
    int samples = 0, live = 0;
    for (int i = 0; i < s->n; i++) {
        struct traced *t = &s->t[i];
        if (t->gone) continue;
        live++;
        struct procstat ps;
        if (t->group_stopped || procstat_read(s->pid, t->tid, &ps) < 0 || ps.state != 'R') continue;
        double stop_begin = clock_monotonic_seconds();
        if (!interrupt(t)) continue;
        struct arch_regs regs;
        int have = arch_regs_read(t->tid, &regs) == 0;
        size_t len = have ? unwind_copy_stack(t->tid, arch_regs_sp(&regs), s->stack, sizeof s->stack) : 0;
        ptrace(PTRACE_CONT, t->tid, 0, 0); /* running again before anything else is done */
        s->stopped_ns += (long long)((clock_monotonic_seconds() - stop_begin) * 1e9);
        long long now = procstat_read_runtime_ns(s->pid, t->tid), used = now >= 0 && t->runtime >= 0 ? now - t->runtime : 0;
        t->runtime = now;
        if (!have || used <= 0) continue;
        struct perf_sample sample = {s->pid, t->tid, (unsigned long long)(clock_monotonic_seconds() * 1e9), {0},
                                     s->stack, len};
        arch_regs_dwarf(&regs, sample.regs, ARCH_DWARF_REGS);
        on_sample(arg, &sample, used);
        samples++;
    }
    return live ? samples : -ESRCH;
}

long long ptrace_sampler_stopped_ns(const struct ptrace_sampler *s) { return s->stopped_ns; }

void ptrace_sampler_close(struct ptrace_sampler *s)
{
    if (!s) return;
    collect_events(s);
    for (int i = 0; i < s->n; i++) {
        struct traced *t = &s->t[i];
        if (t->gone) continue;
        /* Detaching needs a ptrace stop: interrupt (a listening thread re-traps too), then detach; a signal met
         * on the way goes back with the detach. A thread that does not stop is left to the kernel, which
         * detaches it when diagtop exits. */
        if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0) continue;
        double deadline = clock_monotonic_seconds() + 0.5;
        int sig = 0, stopped = 0;
        while (!stopped && clock_monotonic_seconds() < deadline) {
            int st;
            pid_t r = waitpid(t->tid, &st, __WALL | WNOHANG);
            if (r < 0 || (r > 0 && (WIFEXITED(st) || WIFSIGNALED(st)))) break;
            if (r > 0 && WIFSTOPPED(st)) {
                if ((st >> 16) == 0) sig = WSTOPSIG(st); /* a signal for the target: handed back on detach */
                else stopped = 1;
                if (!stopped && ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)sig) == 0) break;
                continue;
            }
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
        if (stopped) ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)sig);
    }
    free(s->t);
    free(s);
}
