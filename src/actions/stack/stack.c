#include "stack.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "collect/procstat.h"
#include "util/clock.h"
#include "util/fileio.h"
#include "actions/target/arch_regs.h"
#include "modules.h"
#include "symbolize.h"
#include "unwind.h"
#include "actions/target/ptrace_session.h"

#define MAX_SAMPLES 16384

struct stack_cache {
    int pid;
    unsigned long long start_ticks; /* identity of the process the caches belong to */
    struct modules *modules;
    struct unwinder *unwinder;
    struct symbolizer *sym;
};

void stack_options_default(struct stack_options *o)
{
    memset(o, 0, sizeof *o);
    o->source = 1;
    o->cpu_sample = 0.02; /* the capture itself spans most of it: the one-shot command waits for nothing */
    o->timeout = 2.0;
    o->waits = 1;
}

struct stack_cache *stack_cache_new(void) { return calloc(1, sizeof(struct stack_cache)); }

static void cache_reset(struct stack_cache *c)
{
    unwinder_free(c->unwinder);
    symbolizer_free(c->sym);
    modules_free(c->modules);
    c->unwinder = NULL;
    c->sym = NULL;
    c->modules = NULL;
}

void stack_cache_free(struct stack_cache *c)
{
    if (!c) return;
    cache_reset(c);
    free(c);
}

/* ---- thread facts, read around the stop ---- */

static const struct thread_sample *sample_of(const struct thread_sample *s, int n, int tid)
{
    for (int i = 0; i < n; i++)
        if (s[i].tid == tid) return &s[i];
    return NULL;
}

/* Name and state as they were before the stop; CPU% over the sample, the stop excluded (nothing ran then).
 * schedstat's nanoseconds where the kernel has them, else clock ticks. */
static void fill_thread_facts(struct stack_thread *t, const struct thread_sample *before, int nbefore,
                              const struct thread_sample *after, int nafter, double running_seconds, long hertz)
{
    const struct thread_sample *b = sample_of(before, nbefore, t->tid), *a = sample_of(after, nafter, t->tid);
    const struct thread_sample *facts = b ? b : a;
    t->cpu_percent = -1;
    if (facts) {
        snprintf(t->name, sizeof t->name, "%s", facts->name);
        t->state = facts->state;
    }
    if (!a || !b || running_seconds <= 0) return;
    if (a->runtime_ns >= 0 && b->runtime_ns >= 0 && a->runtime_ns >= b->runtime_ns)
        t->cpu_percent = 100.0 * (double)(a->runtime_ns - b->runtime_ns) / 1e9 / running_seconds;
    else if (a->ticks >= b->ticks)
        t->cpu_percent = 100.0 * (double)(a->ticks - b->ticks) / ((double)hertz * running_seconds);
    if (t->cpu_percent > 100.0) t->cpu_percent = 100.0; /* sampling jitter on a thread that never slept */
}

/* ---- what blocked threads wait on ---- */

/* Before the stop, for every thread not running: a stop would turn a sleep into restart_syscall. */
static struct thread_wait **read_waits(int pid, const struct thread_sample *ts, int n, int only_tid)
{
    struct thread_wait **w = calloc((size_t)(n ? n : 1), sizeof *w);
    for (int i = 0; w && i < n; i++) {
        if ((only_tid && ts[i].tid != only_tid) || ts[i].state == 'R' || !(w[i] = malloc(sizeof *w[i]))) continue;
        if (thread_wait_read(pid, ts[i].tid, ts[i].state, w[i]) == 0) continue;
        free(w[i]);
        w[i] = NULL;
    }
    return w;
}

/* After: a thread keeps the wait read for it when its stack begins where that call returns to (it did not wake
 * meanwhile); then what needs them all (futex fellows, sockets, pipes' other ends) is filled in. */
static void attach_waits(int pid, struct stack_result *r, const struct thread_sample *ts, struct thread_wait **w,
                         int n)
{
    struct thread_wait **kept = calloc((size_t)(r->nthreads ? r->nthreads : 1), sizeof *kept);
    size_t nkept = 0;
    for (int k = 0; kept && k < r->nthreads; k++) {
        struct stack_thread *t = &r->threads[k];
        for (int i = 0; i < n; i++) {
            if (!w[i] || ts[i].tid != t->tid) continue;
            if (t->npcs > 0 && t->pcs[0].pc == w[i]->pc) {
                kept[nkept++] = t->wait = w[i];
                w[i] = NULL;
            }
            break;
        }
    }
    thread_waits_link(pid, kept, nkept);
    free(kept);
    for (int i = 0; i < n; i++) {
        thread_wait_free(w[i]);
        free(w[i]);
    }
}

/* ---- naming, after the process runs again ---- */

/* Whether function, or function.abi0 (a Go assembly function's symbol), is one of names. */
static int named(const char *function, const char *const *names, size_t nnames)
{
    for (size_t i = 0; function && i < nnames; i++) {
        size_t n = strlen(names[i]);
        if (strncmp(function, names[i], n) == 0 && (function[n] == '\0' || strcmp(function + n, ".abi0") == 0))
            return 1;
    }
    return 0;
}

/* Go's stacks: a goroutine starts on a return address into runtime.goexit, and runtime.mcall, systemstack and
 * morestack switch between a goroutine's stack and its thread's. A thread's own stack begins in runtime.clone (the
 * child's first call, at the very top of its new stack) or rt0_go (entered by a jump, with argc above it). What
 * unwinds past one of these is not this stack: eu-stack goes on into whatever the words there point at (the word
 * above a pooled g0 stack is its neighbour's, now and then a stale return address), diagtop ends the stack there. */
int stack_go_end(const char *function)
{
    static const char *const ends[] = {"runtime.goexit",    "runtime.mcall", "runtime.systemstack",
                                       "runtime.morestack", "runtime.clone", "runtime.rt0_go"};
    return named(function, ends, sizeof ends / sizeof ends[0]);
}

/* Where a thread's stack begins: glibc's (clone, clone3, start_thread; _start, __libc_start_main and, since glibc
 * 2.34, __libc_start_call_main) and Go's (the ends above; runtime.mstart, which a cgo thread enters from
 * crosscall_amd64, a C trampoline without unwind info). */
int stack_outermost(const char *function)
{
    static const char *const firsts[] = {"clone",          "__clone",           "clone3",
                                         "__clone3",       "start_thread",      "_start",
                                         "runtime.mstart", "__libc_start_main", "__libc_start_main_impl",
                                         "__libc_start_call_main"};
    return stack_go_end(function) || named(function, firsts, sizeof firsts / sizeof firsts[0]);
}

void stack_trim(struct stack_thread *t)
{
    int unwind_error = t->error[0] && !t->capture_error;
    for (int i = 0; i < t->nframes; i++) {
        if (t->frames[i].inlined || !stack_go_end(t->frames[i].function)) continue;
        for (int k = i + 1; k < t->nframes; k++) stack_frame_clear(&t->frames[k]);
        t->nframes = i + 1;
        if (unwind_error) t->error[0] = '\0';
        return;
    }
    /* Unwinding failed, but past the thread's first frame: what it could not read is not this thread's code. */
    for (int i = t->nframes - 1; unwind_error && i >= 0; i--) {
        if (t->frames[i].inlined || !stack_outermost(t->frames[i].function)) continue;
        for (int k = i + 1; k < t->nframes; k++) stack_frame_clear(&t->frames[k]);
        t->nframes = i + 1;
        t->error[0] = '\0';
        return;
    }
}

static void symbolize_thread(struct symbolizer *sy, struct stack_thread *t, int source)
{
    struct stack_frame tmp[STACK_MAX_FRAMES];
    int n = 0;
    for (int i = 0; i < t->npcs && n < STACK_MAX_FRAMES; i++) {
        if (sy) n += symbolizer_lookup(sy, t->pcs[i].pc, !t->pcs[i].exact, source, tmp + n, STACK_MAX_FRAMES - n);
        else tmp[n++] = (struct stack_frame){.pc = t->pcs[i].pc};
    }
    t->frames = calloc((size_t)(n ? n : 1), sizeof *t->frames);
    if (!t->frames) {
        for (int i = 0; i < n; i++) stack_frame_clear(&tmp[i]);
        return;
    }
    memcpy(t->frames, tmp, (size_t)n * sizeof *tmp);
    t->nframes = n;
    stack_trim(t);
}

/* Tells a one-shot capture's modules every address its frames will be looked up at (and also's), before any debug
 * file is read: then only the DWARF units they need are inflated (modules_expect). */
static void expect_lookups(struct modules *m, const struct stack_result *r, const unsigned long long *also,
                           size_t nalso)
{
    size_t n = nalso;
    for (int i = 0; i < r->nthreads; i++) n += (size_t)r->threads[i].npcs;
    unsigned long long *addrs = malloc((n ? n : 1) * sizeof *addrs);
    if (!addrs) return; /* then every debug file is inflated whole */
    if (nalso) memcpy(addrs, also, nalso * sizeof *also);
    n = nalso;
    for (int i = 0; i < r->nthreads; i++)
        for (int k = 0; k < r->threads[i].npcs; k++)
            addrs[n++] = symbolizer_address(r->threads[i].pcs[k].pc, !r->threads[i].pcs[k].exact);
    modules_expect(m, addrs, n);
    free(addrs);
}

void stack_name_frames(struct modules *one_shot, const unsigned long long *also, size_t nalso, struct symbolizer *sy,
                       struct stack_result *r, int source)
{
    if (one_shot) expect_lookups(one_shot, r, also, nalso);
    for (int i = 0; i < r->nthreads; i++) symbolize_thread(sy, &r->threads[i], source);
}

static unsigned long long start_ticks_of(int pid)
{
    struct procstat ps;
    return procstat_read(pid, 0, &ps) == 0 ? ps.starttime : 0;
}

/* After /proc/PID/maps could not be read: the process is gone (ESRCH) or belongs to someone we may not trace
 * (EPERM, with the reason naming what is missing). Returns 1 when err now says which. */
static int access_denied_or_gone(int pid, char *err, size_t errlen)
{
    struct procstat ps;
    if (procstat_read(pid, 0, &ps) < 0 || ps.state == 'Z' || ps.state == 'X') {
        snprintf(err, errlen, "process %d exited", pid);
        return 1;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC); /* procfs checks ptrace access at open, not by mode bits */
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    if (errno != EACCES && errno != EPERM) return 0;
    ptrace_session_explain_eperm(pid, err, errlen);
    return 1;
}

/* Makes sure cache holds the modules, unwinder and symbolizer of this very process, with the unwind tables of
 * every module loaded: nothing is read from files once the process is stopped. */
static int cache_prepare(struct stack_cache *cache, int pid, char *err, size_t errlen)
{
    unsigned long long start = start_ticks_of(pid);
    if (cache->pid != pid || cache->start_ticks != start) {
        cache_reset(cache);
        cache->pid = pid;
        cache->start_ticks = start;
    }
    int rc = cache->modules ? modules_sync(cache->modules, err, errlen) : 0;
    if (rc == 0 && !cache->modules && !(cache->modules = modules_new(pid, err, errlen))) rc = -EIO;
    if (rc < 0) { /* the mappings could not be read: say why as the ptrace attempt would */
        if (access_denied_or_gone(pid, err, errlen)) return -EPERM;
        return rc;
    }
    if (!cache->unwinder) cache->unwinder = unwinder_new(cache->modules);
    if (!cache->sym) cache->sym = symbolizer_new(cache->modules);
    if (!cache->unwinder || !cache->sym || unwinder_prepare(cache->unwinder) < 0) {
        snprintf(err, errlen, "cannot prepare the unwinder: %s", dwfl_errmsg(-1));
        return -ENOMEM;
    }
    return 0;
}

/* ---- reading a thread without stopping it ---- */

#define NO_STOP_STACK 65536 /* bytes of stack copied per blocked thread: cheap, and deep stacks fit */

/* A thread blocked in a system call: its user sp and pc (collect/thread_wait reads the syscall file). Returns 1 when
 * blocked with sp and pc known, 0 when running or unreadable. */
static int blocked_at(int pid, int tid, unsigned long long *sp, unsigned long long *pc)
{
    long nr;
    unsigned long long args[6];
    return thread_syscall_read(pid, tid, &nr, args, sp, pc) == 1 && *sp != 0 && *pc != 0;
}

/* One thread read while the process runs: a blocked one unwound from a copy of its stack, checked to have stayed
 * blocked meanwhile (else read again, once); a running one cannot be read without stopping it. */
static void capture_running_thread(int pid, struct unwinder *uw, unsigned char *stack, struct stack_thread *t)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        unsigned long long sp, pc, sp2, pc2;
        if (!blocked_at(pid, t->tid, &sp, &pc)) {
            snprintf(t->error, sizeof t->error, "running: its stack cannot be read without stopping it");
            t->capture_error = 1;
            t->npcs = 0;
            return;
        }
        size_t len = unwind_copy_stack(pid, sp, stack, NO_STOP_STACK);
        /* Only sp and pc are known: the unwinder starts from them (CFI mostly needs no more); the other
         * registers are unknown, so frames addressed by one of them may end the stack early. */
        unsigned long long regs[ARCH_DWARF_REGS] = {0};
        regs[ARCH_DWARF_SP] = sp;
        regs[ARCH_DWARF_PC] = pc;
        t->npcs = unwinder_copy(uw, t->tid, regs, stack, sp, len, t->pcs, STACK_MAX_FRAMES, t->error, sizeof t->error);
        if (blocked_at(pid, t->tid, &sp2, &pc2) && sp2 == sp && pc2 == pc) return;
    }
    snprintf(t->error, sizeof t->error, "woke up while being read: this stack may mix two moments");
    t->capture_error = 1;
}

/* Stops every thread but those in D when sampled (ts: read unstopped), unwinds the ones asked for to bare PCs,
 * detaches. */
static int capture_stopped(int pid, const struct stack_options *o, struct unwinder *uw, const struct thread_sample *ts,
                           int nts, struct stack_result *out, char *err, size_t errlen)
{
    int *asleep = malloc((size_t)(nts ? nts : 1) * sizeof *asleep), nasleep = 0;
    for (int i = 0; asleep && i < nts; i++)
        if (ts[i].state == 'D') asleep[nasleep++] = ts[i].tid;
    struct ptrace_session s;
    int rc = ptrace_session_stop_leaving(&s, pid, asleep, nasleep, o->timeout, o->cancel, err, errlen);
    free(asleep);
    if (rc < 0) {
        ptrace_session_free(&s);
        return rc;
    }
    unwinder_begin(uw);
    out->threads = calloc((size_t)s.n, sizeof *out->threads);
    unsigned char *copy = NULL; /* a sleeping thread's stack, for the ones left in D */
    for (int i = 0; out->threads && i < s.n; i++) {
        const struct ptrace_thread *pt = &s.threads[i];
        if (pt->gone || !(pt->stopped || pt->left) || (o->tid && pt->tid != o->tid)) continue;
        struct stack_thread *t = &out->threads[out->nthreads++];
        t->tid = pt->tid;
        if (!pt->stopped) {
            t->left_running = 1;
            if (copy || (copy = malloc(NO_STOP_STACK))) capture_running_thread(pid, uw, copy, t);
            continue;
        }
        t->npcs = unwinder_thread(uw, t->tid, t->pcs, STACK_MAX_FRAMES, t->error, sizeof t->error);
    }
    free(copy);
    ptrace_session_detach(&s, 0.5);
    out->stopped_ms = ptrace_session_stopped_ms(&s);
    out->target_was_stopped = s.was_stopped;
    ptrace_session_free(&s);
    if (!out->threads) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    if (o->tid && out->nthreads == 0) {
        snprintf(err, errlen, "%d is not a thread of process %d", o->tid, pid);
        return -ESRCH;
    }
    return 0;
}

static int capture_running(int pid, const struct stack_options *o, struct unwinder *uw, const struct thread_sample *ts,
                           int nts, struct stack_result *out, char *err, size_t errlen)
{
    out->not_stopped = 1;
    out->threads = calloc((size_t)(nts ? nts : 1), sizeof *out->threads);
    unsigned char *stack = malloc(NO_STOP_STACK);
    if (!out->threads || !stack) {
        free(stack);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    for (int i = 0; i < nts; i++) {
        if (o->tid && ts[i].tid != o->tid) continue;
        struct stack_thread *t = &out->threads[out->nthreads++];
        t->tid = ts[i].tid;
        capture_running_thread(pid, uw, stack, t);
    }
    free(stack);
    if (o->tid && out->nthreads == 0) {
        snprintf(err, errlen, "%d is not a thread of process %d", o->tid, pid);
        return -ESRCH;
    }
    return 0;
}

int stack_capture(int pid, const struct stack_options *o, struct stack_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->pid = pid;
    double t0 = clock_monotonic_seconds();
    int rc = ptrace_session_check(pid, err, errlen);
    if (rc == -EBUSY && o->no_stop) rc = 0; /* traced by a debugger: reading /proc is still fine */
    if (rc < 0) return rc;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    if (fileio_read_at(AT_FDCWD, path, out->comm, sizeof out->comm) > 0) out->comm[strcspn(out->comm, "\n")] = '\0';

    struct stack_cache local = {0}, *cache = o->cache ? o->cache : &local;
    struct thread_sample *before = calloc(MAX_SAMPLES, sizeof *before), *after = NULL;
    int nbefore = 0, nafter = 0;
    struct thread_wait **waits = NULL; /* by sample, until attached */
    if (!before || (o->cpu_sample > 0 && !(after = calloc(MAX_SAMPLES, sizeof *after)))) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
        goto out;
    }
    /* Names and states before anything stops; the CPU sample starts here and runs across the capture. */
    double sample_start = clock_monotonic_seconds();
    nbefore = procstat_sample_threads(pid, before, MAX_SAMPLES, o->cpu_sample > 0);
    waits = o->waits ? read_waits(pid, before, nbefore, o->tid) : NULL;

    if ((rc = cache_prepare(cache, pid, err, errlen)) < 0) goto out;
    if (o->no_stop) rc = capture_running(pid, o, cache->unwinder, before, nbefore, out, err, errlen);
    else rc = capture_stopped(pid, o, cache->unwinder, before, nbefore, out, err, errlen);
    if (rc < 0) goto out;
    if (waits) attach_waits(pid, out, before, waits, nbefore);
    free(waits);
    waits = NULL;

    /* Running again: name the frames, then end the CPU sample. */
    stack_name_frames(o->cache ? NULL : cache->modules, NULL, 0, cache->sym, out, o->source);
    double running = 0;
    if (o->cpu_sample > 0) {
        double left = sample_start + o->cpu_sample - clock_monotonic_seconds();
        if (left > 0) clock_sleep(left, o->cancel);
        nafter = procstat_sample_threads(pid, after, MAX_SAMPLES, 1);
        running = clock_monotonic_seconds() - sample_start - out->stopped_ms / 1000.0;
    }
    long hertz = sysconf(_SC_CLK_TCK);
    for (int i = 0; i < out->nthreads; i++)
        fill_thread_facts(&out->threads[i], before, nbefore, after, nafter, running, hertz);
    if (o->cancel && *o->cancel) { /* asked to stop (Esc, SIGTERM): the process runs again; say so */
        snprintf(err, errlen, "cancelled");
        rc = -ECANCELED;
        goto out;
    }
    out->total_ms = (clock_monotonic_seconds() - t0) * 1000.0;
out:
    for (int i = 0; waits && i < nbefore; i++) {
        thread_wait_free(waits[i]);
        free(waits[i]);
    }
    free(waits);
    free(before);
    free(after);
    if (!o->cache) cache_reset(&local);
    if (rc < 0) stack_result_free(out);
    return rc;
}

void stack_result_free(struct stack_result *r)
{
    for (int i = 0; i < r->nthreads; i++) {
        for (int k = 0; k < r->threads[i].nframes; k++) stack_frame_clear(&r->threads[i].frames[k]);
        free(r->threads[i].frames);
        thread_wait_free(r->threads[i].wait);
        free(r->threads[i].wait);
    }
    free(r->threads);
    memset(r, 0, sizeof *r);
}
