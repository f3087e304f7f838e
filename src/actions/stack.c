#include "stack.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../collect/procstat.h"
#include "../util/clock.h"
#include "../util/fileio.h"
#include "ptrace_session.h"
#include "unwind.h"

struct stack_cache {
    int pid;
    unsigned long long start_ticks; /* identity of the process the caches belong to */
    struct unwinder *unwinder;
    struct symbolizer *sym;
};

void stack_options_default(struct stack_options *o)
{
    memset(o, 0, sizeof *o);
    o->source = 1;
    o->cpu_sample = 0.1;
    o->timeout = 2.0;
}

struct stack_cache *stack_cache_new(void) { return calloc(1, sizeof(struct stack_cache)); }

static void cache_reset(struct stack_cache *c)
{
    unwinder_free(c->unwinder);
    symbolizer_free(c->sym);
    c->unwinder = NULL;
    c->sym = NULL;
}

void stack_cache_free(struct stack_cache *c)
{
    if (!c) return;
    cache_reset(c);
    free(c);
}

/* ---- thread facts, read before the stop ---- */

/* Name, state (as it was before the stop) and CPU% over the sample. */
static void fill_thread_facts(struct stack_thread *t, const struct thread_sample *before, int nbefore,
                              const struct thread_sample *after, int nafter, double seconds, long hertz)
{
    t->cpu_percent = -1;
    for (int i = 0; i < nafter; i++) {
        if (after[i].tid != t->tid) continue;
        snprintf(t->name, sizeof t->name, "%s", after[i].name);
        t->state = after[i].state;
        for (int k = 0; k < nbefore && seconds > 0; k++)
            if (before[k].tid == t->tid && after[i].ticks >= before[k].ticks)
                t->cpu_percent = 100.0 * (double)(after[i].ticks - before[k].ticks) / ((double)hertz * seconds);
    }
}

/* ---- naming, after the process runs again ---- */

static void symbolize_thread(struct symbolizer *sy, struct stack_thread *t, int source)
{
    struct stack_frame tmp[STACK_MAX_FRAMES];
    int n = 0;
    for (int i = 0; i < t->npcs && n < STACK_MAX_FRAMES; i++) {
        if (sy) n += symbolizer_lookup(sy, t->pcs[i], i > 0, source, tmp + n, STACK_MAX_FRAMES - n);
        else tmp[n++] = (struct stack_frame){.pc = t->pcs[i]};
    }
    t->frames = calloc((size_t)(n ? n : 1), sizeof *t->frames);
    if (!t->frames) {
        for (int i = 0; i < n; i++) stack_frame_clear(&tmp[i]);
        return;
    }
    memcpy(t->frames, tmp, (size_t)n * sizeof *tmp);
    t->nframes = n;
}

static unsigned long long start_ticks_of(int pid)
{
    struct procstat ps;
    return procstat_read(pid, 0, &ps) == 0 ? ps.starttime : 0;
}

/* Makes sure cache holds an unwinder (and maybe a symbolizer) for this very process. */
static int cache_prepare(struct stack_cache *cache, int pid, char *err, size_t errlen)
{
    unsigned long long start = start_ticks_of(pid);
    if (cache->pid != pid || cache->start_ticks != start) {
        cache_reset(cache);
        cache->pid = pid;
        cache->start_ticks = start;
    }
    if (!cache->unwinder) cache->unwinder = unwinder_new(pid);
    if (!cache->unwinder || unwinder_prepare(cache->unwinder) < 0) {
        snprintf(err, errlen, "libunwind: cannot create an address space");
        return -ENOMEM;
    }
    return 0;
}

/* Stops every thread, unwinds the ones asked for to bare PCs, detaches. */
static int capture_stopped(int pid, const struct stack_options *o, struct unwinder *uw, struct stack_result *out,
                           char *err, size_t errlen)
{
    struct ptrace_session s;
    int rc = ptrace_session_stop(&s, pid, o->timeout, o->cancel, err, errlen);
    if (rc < 0) {
        ptrace_session_free(&s);
        return rc;
    }
    unwinder_begin(uw);
    out->threads = calloc((size_t)s.n, sizeof *out->threads);
    for (int i = 0; out->threads && i < s.n; i++) {
        const struct ptrace_thread *pt = &s.threads[i];
        if (pt->gone || !pt->stopped || (o->tid && pt->tid != o->tid)) continue;
        struct stack_thread *t = &out->threads[out->nthreads++];
        t->tid = pt->tid;
        t->npcs = unwinder_thread(uw, t->tid, t->pcs, STACK_MAX_FRAMES, t->error, sizeof t->error);
    }
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

int stack_capture(int pid, const struct stack_options *o, struct stack_result *out, char *err, size_t errlen)
{
    enum { MAX_SAMPLES = 16384 };
    memset(out, 0, sizeof *out);
    out->pid = pid;
    double t0 = clock_monotonic_seconds();
    int rc = ptrace_session_check(pid, err, errlen);
    if (rc < 0) return rc;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    if (fileio_read_at(AT_FDCWD, path, out->comm, sizeof out->comm) > 0) out->comm[strcspn(out->comm, "\n")] = '\0';

    struct stack_cache local = {0}, *cache = o->cache ? o->cache : &local;
    struct thread_sample *before = calloc(MAX_SAMPLES, sizeof *before), *after = calloc(MAX_SAMPLES, sizeof *after);
    if (!before || !after) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
        goto out;
    }
    /* Thread names, states and CPU% are read before stopping anything; CPU% needs an interval. */
    int nbefore = o->cpu_sample > 0 ? procstat_sample_threads(pid, before, MAX_SAMPLES) : 0;
    double sample_start = clock_monotonic_seconds();
    if (nbefore) clock_sleep(o->cpu_sample, o->cancel);
    int nafter = procstat_sample_threads(pid, after, MAX_SAMPLES);
    double sample_seconds = clock_monotonic_seconds() - sample_start;
    if (o->cancel && *o->cancel) {
        snprintf(err, errlen, "cancelled");
        rc = -ECANCELED;
        goto out;
    }

    if ((rc = cache_prepare(cache, pid, err, errlen)) < 0) goto out;
    if ((rc = capture_stopped(pid, o, cache->unwinder, out, err, errlen)) < 0) goto out;

    /* Running again: name the frames. */
    long hertz = sysconf(_SC_CLK_TCK);
    for (int i = 0; i < out->nthreads; i++)
        fill_thread_facts(&out->threads[i], before, nbefore, after, nafter, sample_seconds, hertz);
    if (!cache->sym) {
        char symerr[256];
        cache->sym = symbolizer_new(pid, symerr, sizeof symerr); /* NULL: frames stay bare addresses */
    }
    for (int i = 0; i < out->nthreads; i++) symbolize_thread(cache->sym, &out->threads[i], o->source);
    out->total_ms = (clock_monotonic_seconds() - t0) * 1000.0;
out:
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
    }
    free(r->threads);
    memset(r, 0, sizeof *r);
}
