#include "cpu_profile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/procstat.h"
#include "util/clock.h"
#include "util/fileio.h"
#include "actions/stack/modules.h"
#include "perf_sampler.h"
#include "ptrace_sampler.h"
#include "actions/target/ptrace_session.h"
#include "actions/stack/stack.h"
#include "actions/stack/symbolize.h"
#include "actions/stack/unwind.h"

#define BUCKETS 4096
#define MAX_THREADS 4096
#define SYNC_SECONDS 1.0 /* how often the mappings are checked for dlopen/dlclose */
#define MAX_PROGRAMS 8   /* programs one profile follows through execve(); the exec after the last one ends it */

/* One distinct stack of one thread and what it got. */
struct agg {
    unsigned long long hash;
    int tid, n, truncated;
    struct unwind_frame *pcs;
    long long samples, cpu_ns;
    struct agg *next;
};

/* The stacks sampled in one program image, with what names their pcs: the modules of that program's mappings
 * (after an execve() the process no longer has them). */
struct program {
    struct modules *modules;
    struct symbolizer *sym;
    struct agg *buckets[BUCKETS];
};

/* What tells one program image from the next in one process: an execve() moves the code and the stack (ASLR,
 * another binary, other arguments); dlopen and mmap do not. */
struct image_id {
    unsigned long long startcode, endcode, startstack;
};

struct profiler {
    const struct cpu_profile_options *o;
    /* execve() during the profile: a pc means something only in the program it was sampled in, so the stacks of
     * each program are named with that program's modules, and a sample counts only once it is known to be of the
     * program the current modules describe (sample_current). The current program is the last. */
    struct program *programs[MAX_PROGRAMS];
    int nprograms;
    struct unwinder *unwinder; /* over the current program's modules */
    int nstacks;               /* of every program */
    int track_exec;             /* the image is readable: execs are followed */
    struct image_id image;      /* of the program the current modules describe */
    long long image_since_ns;   /* samples taken before may be of the program before */
    long long image_checked_ns; /* a check of the image that began then saw that program */
    int exec_seen;              /* a sample was of another program: follow the exec */
    long long loading_until_ns; /* the dynamic loader may still be mapping the new program's libraries */
    long long samples, lost, sampled_cpu_ns;
    long long period_ns;
    struct cpu_thread threads[MAX_THREADS];
    int nthreads;
    struct unwind_frame frames[STACK_MAX_FRAMES];
    int oom; /* a stack could not be kept */
};

void cpu_profile_options_default(struct cpu_profile_options *o, int pid)
{
    memset(o, 0, sizeof *o);
    o->pid = pid;
    o->seconds = 10;
    o->hz = 100;
    o->method = cpu_profile_method_from_env();
}

enum cpu_method cpu_profile_method_from_env(void)
{
    const char *m = getenv("DIAGTOP_PROFILE_METHOD");
    if (m && strcmp(m, "ptrace") == 0) return CPU_METHOD_PTRACE;
    if (m && strcmp(m, "perf") == 0) return CPU_METHOD_PERF;
    return CPU_METHOD_AUTO;
}

static struct program *current(const struct profiler *pr) { return pr->programs[pr->nprograms - 1]; }

static long long now_ns(void) { return (long long)(clock_monotonic_seconds() * 1e9); }

/* ---- which program a sample is of ---- */

/* The image thread tid runs, or through the leader the process's (tid gone, or 0). -1 when not known: the leader
 * is a zombie (a thread other than the main one is in the middle of an execve) or the memory is not ours to see. */
static int image_of(int pid, int tid, struct image_id *id)
{
    struct procstat ps;
    for (int leader = tid > 0 ? 0 : 1; leader < 2; leader++)
        if (procstat_read(pid, leader ? 0 : tid, &ps) == 0 && ps.state != 'Z' && ps.state != 'X' &&
            (ps.startcode || ps.endcode || ps.startstack)) {
            *id = (struct image_id){ps.startcode, ps.endcode, ps.startstack};
            return 0;
        }
    return -1;
}

/* Whether a sample taken at taken_ns (CLOCK_MONOTONIC) is of the program the current modules describe. A check
 * of the image that began after the sample was taken and still saw that program proves it (an image does not
 * change back); one that sees another program, or none (mid-exec), says to follow the exec, and the sample is
 * dropped: it may be of either program. Samples taken before the modules followed the exec are dropped too. */
static int sample_current(struct profiler *pr, int tid, long long taken_ns)
{
    if (!pr->track_exec) return 1;
    if (taken_ns < pr->image_since_ns) return 0;
    if (taken_ns <= pr->image_checked_ns) return 1;
    long long begin = now_ns();
    struct image_id id;
    if (image_of(pr->o->pid, tid, &id) < 0 || memcmp(&id, &pr->image, sizeof id) != 0) {
        pr->exec_seen = 1;
        return 0;
    }
    pr->image_checked_ns = begin;
    return 1;
}

/* ---- aggregation ---- */

static unsigned long long stack_hash(int tid, const struct unwind_frame *f, int n)
{
    unsigned long long h = 1469598103934665603ULL ^ (unsigned)tid;
    for (int i = 0; i < n; i++) h = (h ^ (f[i].pc + (unsigned)f[i].exact)) * 1099511628211ULL;
    return h;
}

static void thread_seen(struct profiler *pr, int tid, long long samples)
{
    for (int i = 0; i < pr->nthreads; i++)
        if (pr->threads[i].tid == tid) {
            pr->threads[i].samples += samples;
            return;
        }
    if (pr->nthreads == MAX_THREADS) return;
    struct cpu_thread *t = &pr->threads[pr->nthreads++];
    t->tid = tid;
    t->samples = samples;
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d/comm", pr->o->pid, tid);
    if (fileio_read_at(AT_FDCWD, path, t->name, sizeof t->name) > 0) t->name[strcspn(t->name, "\n")] = '\0';
}

static void add_stack(struct profiler *pr, int tid, const struct unwind_frame *f, int n, int truncated, long long ns)
{
    unsigned long long h = stack_hash(tid, f, n);
    struct agg **b = &current(pr)->buckets[h % BUCKETS], *a;
    for (a = *b; a; a = a->next)
        if (a->hash == h && a->tid == tid && a->n == n && memcmp(a->pcs, f, (size_t)n * sizeof *f) == 0) break;
    if (!a) {
        a = calloc(1, sizeof *a);
        if (a) a->pcs = malloc((size_t)(n ? n : 1) * sizeof *f);
        if (!a || !a->pcs) {
            free(a);
            pr->oom = 1;
            return;
        }
        memcpy(a->pcs, f, (size_t)n * sizeof *f);
        *a = (struct agg){h, tid, n, truncated, a->pcs, 0, 0, *b};
        *b = a;
        pr->nstacks++;
    }
    a->samples++;
    a->cpu_ns += ns;
    pr->samples++;
    pr->sampled_cpu_ns += ns;
    thread_seen(pr, tid, 1);
}

/* A sample: its copy unwound now (the thread has moved on; only the copy is read), its stack counted. */
static void on_sample_weighted(struct profiler *pr, const struct perf_sample *s, long long cpu_ns)
{
    char why[128];
    if (!sample_current(pr, s->tid, (long long)s->time_ns)) { /* around an execve: not named against either */
        pr->lost++;
        return;
    }
    int n = unwinder_copy(pr->unwinder, s->tid, s->regs, s->stack, s->regs[ARCH_DWARF_SP], s->stack_len,
                          pr->frames, STACK_MAX_FRAMES, why, sizeof why);
    /* Just after an exec the modules may lack the libraries ld.so mapped since (the next check of the mappings is
     * up to a second away): when unwinding stopped early and the mappings changed, unwind again with them. */
    if (why[0] && now_ns() < pr->loading_until_ns) {
        struct modules *m = current(pr)->modules;
        unsigned generation = modules_generation(m);
        char e2[256];
        if (modules_sync(m, e2, sizeof e2) == 0 && modules_generation(m) != generation &&
            unwinder_prepare(pr->unwinder) == 0)
            n = unwinder_copy(pr->unwinder, s->tid, s->regs, s->stack, s->regs[ARCH_DWARF_SP], s->stack_len,
                              pr->frames, STACK_MAX_FRAMES, why, sizeof why);
    }
    if (n == 0) { /* no frame at all: keep the bare pc so the sample is not lost */
        pr->frames[0] = (struct unwind_frame){s->regs[ARCH_DWARF_PC], 1};
        n = 1;
    }
    /* Padding in unwind_frame must not differ between equal stacks (they are compared as bytes). */
    struct unwind_frame clean[STACK_MAX_FRAMES];
    memset(clean, 0, (size_t)n * sizeof *clean);
    for (int i = 0; i < n; i++) {
        clean[i].pc = pr->frames[i].pc;
        clean[i].exact = pr->frames[i].exact;
    }
    add_stack(pr, s->tid, clean, n, why[0] != '\0', cpu_ns);
}

static void on_perf_sample(void *arg, const struct perf_sample *s)
{
    struct profiler *pr = arg;
    on_sample_weighted(pr, s, pr->period_ns);
}

static void on_ptrace_sample(void *arg, const struct perf_sample *s, long long cpu_ns)
{
    on_sample_weighted(arg, s, cpu_ns);
}

static void free_aggs(struct agg **buckets)
{
    for (int i = 0; i < BUCKETS; i++)
        for (struct agg *a = buckets[i], *next; a; a = next) {
            next = a->next;
            free(a->pcs);
            free(a);
        }
}

/* ---- the report: distinct frames named once ---- */

struct pc_names {
    unsigned long long pc;
    int exact, first, n; /* its frames: report->frames[first .. first+n) */
    struct pc_names *next;
};

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* The report frames of one pc (its inlined calls first), named by the symbolizer of its program on first use. */
static struct pc_names *names_of(struct symbolizer *sym, struct cpu_report *r, struct pc_names **tab, int *cap,
                                 const struct unwind_frame *f)
{
    unsigned long long h = (f->pc * 0x9E3779B97F4A7C15ULL + (unsigned)f->exact) >> 20;
    struct pc_names **b = &tab[h % BUCKETS], *e;
    for (e = *b; e; e = e->next)
        if (e->pc == f->pc && e->exact == f->exact) return e;
    struct stack_frame sf[32];
    int n = sym ? symbolizer_lookup(sym, f->pc, !f->exact, 1, sf, 32) : 0;
    if (n == 0) sf[n++] = (struct stack_frame){.pc = f->pc};
    if (r->nframes + n > *cap) {
        int c = *cap ? *cap * 2 : 256;
        while (c < r->nframes + n) c *= 2;
        struct cpu_frame *fr = realloc(r->frames, (size_t)c * sizeof *fr);
        if (!fr) {
            for (int i = 0; i < n; i++) stack_frame_clear(&sf[i]);
            return NULL;
        }
        r->frames = fr;
        *cap = c;
    }
    if (!(e = calloc(1, sizeof *e))) {
        for (int i = 0; i < n; i++) stack_frame_clear(&sf[i]);
        return NULL;
    }
    *e = (struct pc_names){f->pc, f->exact, r->nframes, n, *b};
    *b = e;
    for (int i = 0; i < n; i++) {
        r->frames[r->nframes++] = (struct cpu_frame){f->pc,          sf[i].inlined, dup_or_null(sf[i].function),
                                                    sf[i].offset,   dup_or_null(sf[i].module), dup_or_null(sf[i].file),
                                                    sf[i].line};
        stack_frame_clear(&sf[i]);
    }
    return e;
}

static void free_names(struct pc_names **tab)
{
    for (int b = 0; tab && b < BUCKETS; b++) {
        for (struct pc_names *e = tab[b], *next; e; e = next) {
            next = e->next;
            free(e);
        }
        tab[b] = NULL;
    }
}

/* The stacks of one program into r, their pcs named by sym. */
static int add_stacks(struct cpu_report *r, struct agg *const *buckets, struct symbolizer *sym, struct pc_names **tab,
                      int *cap)
{
    int rc = 0;
    for (int b = 0; rc == 0 && b < BUCKETS; b++)
        for (struct agg *a = buckets[b]; a && rc == 0; a = a->next) {
            struct cpu_stack *cs = &r->stacks[r->nstacks];
            int total = 0;
            struct pc_names *per[STACK_MAX_FRAMES];
            int used = a->n, ended = 0;
            for (int i = 0; i < used && rc == 0; i++) {
                if (!(per[i] = names_of(sym, r, tab, cap, &a->pcs[i]))) rc = -ENOMEM;
                else total += per[i]->n;
                /* a Go stack ends at its switch or its thread's first frame: what was unwound past it is not it */
                if (rc == 0 && stack_go_end(r->frames[per[i]->first + per[i]->n - 1].function)) used = i + 1, ended = 1;
            }
            if (rc < 0 || !(cs->frames = malloc((size_t)(total ? total : 1) * sizeof *cs->frames))) {
                rc = -ENOMEM;
                break;
            }
            for (int i = 0; i < used; i++)
                for (int k = 0; k < per[i]->n; k++) cs->frames[cs->nframes++] = per[i]->first + k;
            cs->truncated = a->truncated && !ended;
            cs->tid = a->tid;
            cs->samples = a->samples;
            cs->cpu_ns = a->cpu_ns;
            r->nstacks++;
        }
    return rc;
}

static int build_report(struct profiler *pr, const char *method, const char *why, double seconds, long long stopped_ns,
                        struct cpu_report *r)
{
    memset(r, 0, sizeof *r);
    r->pid = pr->o->pid;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", r->pid);
    if (fileio_read_at(AT_FDCWD, path, r->comm, sizeof r->comm) > 0) r->comm[strcspn(r->comm, "\n")] = '\0';
    snprintf(r->method, sizeof r->method, "%s", method);
    snprintf(r->method_why, sizeof r->method_why, "%s", why);
    r->hz = pr->o->hz;
    r->seconds = seconds;
    r->samples = pr->samples;
    r->lost = pr->lost;
    r->period_ns = pr->period_ns;
    r->target_cost_percent =
        stopped_ns >= 0 && pr->sampled_cpu_ns > 0 ? 100.0 * (double)stopped_ns / (double)pr->sampled_cpu_ns : -1;
    r->stacks = calloc((size_t)(pr->nstacks ? pr->nstacks : 1), sizeof *r->stacks);
    r->threads = calloc((size_t)(pr->nthreads ? pr->nthreads : 1), sizeof *r->threads);
    struct pc_names **tab = calloc(BUCKETS, sizeof *tab);
    int cap = 0, rc = r->stacks && r->threads && tab ? 0 : -ENOMEM;
    if (rc == 0) {
        memcpy(r->threads, pr->threads, (size_t)pr->nthreads * sizeof *r->threads);
        r->nthreads = pr->nthreads;
    }
    /* The programs the process ran before an execve, then the current one: each one's pcs named by its own
     * modules, in a table of their own (the same pc in two programs is two frames). */
    for (int p = 0; p < pr->nprograms && rc == 0; p++) {
        free_names(tab);
        rc = add_stacks(r, pr->programs[p]->buckets, pr->programs[p]->sym, tab, &cap);
    }
    free_names(tab);
    free(tab);
    if (rc < 0) cpu_report_free(r);
    return rc;
}

/* ---- the run ---- */

/* Alive while any thread is. A zombie leader with other threads still counted is not the end: it is what a thread
 * other than the main one looks like in the middle of an execve (the leader killed, its place not yet taken), and
 * what a main thread that called pthread_exit leaves. */
static int alive(int pid)
{
    struct procstat ps;
    return procstat_read(pid, 0, &ps) == 0 && ((ps.state != 'Z' && ps.state != 'X') || ps.num_threads > 1);
}

/* A new current program: the modules and symbolizer of the process's mappings now, and the unwinder over them with
 * every module's unwind tables loaded up front. */
static int prepare(struct profiler *pr, char *err, size_t errlen)
{
    struct program *p = calloc(1, sizeof *p); /* room: follow_exec stops at MAX_PROGRAMS */
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    pr->programs[pr->nprograms++] = p;
    if (!(p->modules = modules_new(pr->o->pid, err, errlen))) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/maps", pr->o->pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 && (errno == EACCES || errno == EPERM)) ptrace_session_explain_eperm(pr->o->pid, err, errlen);
        if (fd >= 0) close(fd);
        return -EPERM;
    }
    pr->unwinder = unwinder_new(p->modules);
    p->sym = symbolizer_new(p->modules);
    if (!pr->unwinder || !p->sym || unwinder_prepare(pr->unwinder) < 0) {
        snprintf(err, errlen, "cannot prepare the unwinder");
        return -ENOMEM;
    }
    return 0;
}

/* After an execve(): the stacks so far are kept with the modules and symbolizer that name them, and new ones are
 * made for the program the process now runs. Returns 0 when it followed an exec, 1 when the program is the same,
 * 2 when it is not known yet (mid-exec: the mappings must not be read now), -1 when the profile ends here (too
 * many programs, or the new one may not be looked at: set-user-ID). */
static int follow_exec(struct profiler *pr, char *err, size_t errlen)
{
    struct image_id id;
    if (image_of(pr->o->pid, 0, &id) < 0) return 2;
    long long seen = now_ns(); /* after the exec */
    if (memcmp(&id, &pr->image, sizeof id) == 0) {
        pr->exec_seen = 0;
        return 1;
    }
    if (pr->nprograms == MAX_PROGRAMS) return -1;
    unwinder_free(pr->unwinder); /* the finished program keeps its modules and symbolizer */
    pr->unwinder = NULL;
    if (prepare(pr, err, errlen) < 0) return -1;
    pr->image = id;
    pr->image_since_ns = seen;
    pr->loading_until_ns = seen + (long long)(SYNC_SECONDS * 1e9);
    pr->image_checked_ns = 0;
    pr->exec_seen = 0;
    return 0;
}

/* The profiler before its first sample. The image is read before the modules: an exec in between is followed at
 * the first check. */
static int profiler_start(struct profiler *pr, const struct cpu_profile_options *o, int hz, char *err, size_t errlen)
{
    pr->o = o;
    pr->period_ns = 1000000000LL / hz;
    pr->image_checked_ns = now_ns();
    pr->track_exec = image_of(o->pid, 0, &pr->image) == 0;
    return prepare(pr, err, errlen);
}

static void profiler_free(struct profiler *pr)
{
    unwinder_free(pr->unwinder);
    for (int p = 0; p < pr->nprograms; p++) {
        free_aggs(pr->programs[p]->buckets);
        symbolizer_free(pr->programs[p]->sym);
        modules_free(pr->programs[p]->modules);
        free(pr->programs[p]);
    }
    free(pr);
}

/* The one sampler a profile uses, and what the report says about the choice. */
struct sampler {
    struct perf_sampler *perf;
    struct ptrace_sampler *pt;
    const char *method;
    char why[256]; /* why not perf ("" when perf samples) */
};

/* perf unless ptrace was asked for; ptrace when perf cannot and was not insisted on. When both fail, err has both
 * reasons: the first is usually the one to fix. */
static int sampler_open(struct sampler *s, const struct cpu_profile_options *o, int hz, char *err, size_t errlen)
{
    int rc;
    s->method = "perf";
    if (o->method != CPU_METHOD_PTRACE) {
        rc = perf_sampler_open(&s->perf, o->pid, hz, s->why, sizeof s->why);
        if (rc < 0 && o->method == CPU_METHOD_PERF) {
            snprintf(err, errlen, "%s", s->why);
            return rc;
        }
    } else {
        snprintf(s->why, sizeof s->why, "asked for");
    }
    if (s->perf) {
        s->why[0] = '\0';
        return 0;
    }
    s->method = "ptrace";
    if ((rc = ptrace_sampler_open(&s->pt, o->pid, err, errlen)) < 0 && s->why[0] && o->method == CPU_METHOD_AUTO) {
        char both[512];
        snprintf(both, sizeof both, "%s; and ptrace: %s", s->why, err);
        snprintf(err, errlen, "%s", both);
    }
    return rc;
}

static void sampler_close(struct sampler *s)
{
    perf_sampler_close(s->perf);
    ptrace_sampler_close(s->pt);
    s->perf = NULL;
    s->pt = NULL;
}

static long long sampler_stopped_ns(const struct sampler *s) { return s->pt ? ptrace_sampler_stopped_ns(s->pt) : -1; }

/* One round: perf's buffers drained (waiting up to 100 ms for more), or one ptrace sample of every thread and the
 * sleep to the next tick. Returns 1 when the profile ends there: the target is gone, or perf failed. */
static int sample_round(struct profiler *pr, struct sampler *s, double tick)
{
    if (s->perf) {
        int rc = perf_sampler_read(s->perf, 100, on_perf_sample, pr, &pr->lost);
        if (rc < 0 && rc != -EINTR) return 1;
        return !alive(pr->o->pid);
    }
    if (ptrace_sampler_tick(s->pt, on_ptrace_sample, pr) == -ESRCH) return 1;
    clock_sleep(tick, pr->o->cancel);
    return 0;
}

/* Follows an execve() as soon as a sample showed one, and looks every SYNC_SECONDS for dlopen or dlclose (new code
 * to unwind through). Returns -1 when the report ends at this exec. */
static int sync_program(struct profiler *pr, double now, double *last_sync)
{
    if (!pr->exec_seen && now - *last_sync < SYNC_SECONDS) return 0;
    char e2[256];
    int same = pr->track_exec ? follow_exec(pr, e2, sizeof e2) : 1;
    if (same < 0) return -1;
    if (same != 2 && now - *last_sync >= SYNC_SECONDS) {
        *last_sync = now;
        if (same == 1 && modules_sync(current(pr)->modules, e2, sizeof e2) == 0) unwinder_prepare(pr->unwinder);
    }
    return 0;
}

/* A report of everything so far, for a front end that shows the profile while it runs (on_report owns it). */
static void report_live(struct profiler *pr, const struct sampler *s, double seconds)
{
    struct cpu_report *live = calloc(1, sizeof *live);
    if (live && build_report(pr, s->method, s->why, seconds, sampler_stopped_ns(s), live) == 0)
        pr->o->on_report(pr->o->report_arg, live);
    else
        free(live);
}

/* Samples until the duration is up, the cancel flag is set, the target is gone or an exec ends the report; with
 * progress and live reports on the way. Returns the seconds sampled. */
static double sample_until_done(struct profiler *pr, struct sampler *s, int hz)
{
    const struct cpu_profile_options *o = pr->o;
    double start = clock_monotonic_seconds(), last_live = start, last_sync = start, now = start;
    double tick = 1.0 / hz;
    for (;;) {
        now = clock_monotonic_seconds();
        if ((o->cancel && *o->cancel) || (o->seconds > 0 && now - start >= o->seconds)) break;
        if (sample_round(pr, s, tick)) break;
        now = clock_monotonic_seconds();
        if (sync_program(pr, now, &last_sync) < 0) break;
        if (o->progress && o->seconds > 0) o->progress(o->progress_arg, (now - start) / o->seconds);
        if (o->on_report && o->live_seconds > 0 && now - last_live >= o->live_seconds) {
            last_live = now;
            report_live(pr, s, now - start);
        }
    }
    return now - start;
}

int cpu_profile_run(const struct cpu_profile_options *o, struct cpu_report *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int rc = ptrace_session_check_alive(o->pid, err, errlen);
    if (rc < 0) return rc;
    struct profiler *pr = calloc(1, sizeof *pr);
    if (!pr) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    int hz = o->hz > 0 && o->hz <= 10000 ? o->hz : 100;
    struct sampler s = {0};
    if ((rc = profiler_start(pr, o, hz, err, errlen)) == 0 && (rc = sampler_open(&s, o, hz, err, errlen)) >= 0) {
        double seconds = sample_until_done(pr, &s, hz);
        long long stopped = sampler_stopped_ns(&s);
        sampler_close(&s); /* the target is free again before the naming work */
        if ((rc = build_report(pr, s.method, s.why, seconds, stopped, out)) < 0) snprintf(err, errlen, "out of memory");
    }
    sampler_close(&s);
    profiler_free(pr);
    return rc < 0 ? rc : 0;
}
