/* provider_gomemory: a Go program's goroutines with no agent, read from its memory (stack/goroutines: the
 * runtime's own list through the program's DWARF, each stack walked with its frame tables, its threads stopped
 * only while they are read), as the runtime view of its stacks when gops does not answer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actions/runtimes/provider.h"
#include "actions/stack/goroutines.h"

static int gomemory_probe(int pid, char *why, size_t whylen)
{
    (void)pid, (void)why, (void)whylen;
    return 0; /* what is missing (DWARF, a layout) is said by the request itself */
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* One goroutine as the runtime view shows it: id, state, how long it has waited, its thread, frames, creator. */
static int to_thread(const struct goroutine *g, struct rt_thread *t)
{
    *t = (struct rt_thread){.id = g->id, .state = strdup(g->state), .os_tid = g->tid,
                            .wait_seconds = g->waited_s >= 0 ? (long long)g->waited_s : -1};
    t->frames = calloc((size_t)(g->nframes ? g->nframes : 1), sizeof *t->frames);
    if (!t->state || !t->frames) return -1;
    for (int i = 0; i < g->nframes; i++) {
        const struct stack_frame *f = &g->frames[i];
        char fallback[64];
        snprintf(fallback, sizeof fallback, "0x%llx", f->pc);
        t->frames[i] = (struct rt_frame){strdup(f->function ? f->function : fallback), dup_or_null(f->file), f->line};
        t->nframes++;
    }
    if (g->created_by.function) {
        char by[1024];
        snprintf(by, sizeof by, "%s in %s:%d", g->created_by.function, g->created_by.file ? g->created_by.file : "?",
                 g->created_by.line);
        t->created_by = strdup(by);
    }
    return 0;
}

static int gomemory_stack(const struct provider_request *rq, struct rt_stack *out, char *err, size_t errlen)
{
    struct goroutines gs;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = goroutines_capture(rq->pid, rq->timeout, rq->cancel, &gs, err, errlen);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc < 0) return rc;
    if (!gs.go || gs.why_not[0]) {
        snprintf(err, errlen, "%s", gs.go ? gs.why_not : "not a Go program diagtop can read");
        goroutines_free(&gs);
        return -ENOTSUP;
    }
    memset(out, 0, sizeof *out);
    snprintf(out->provider, sizeof out->provider, "%s", go_memory_provider.name);
    out->pid = rq->pid;
    out->ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    out->stopped_ms = gs.stopped_ms;
    out->threads = calloc((size_t)(gs.n ? gs.n : 1), sizeof *out->threads);
    for (int i = 0; out->threads && i < gs.n && rc == 0; i++) /* the runtime's own hidden, as Go's tracebacks do */
        if (!gs.list[i].system && to_thread(&gs.list[i], &out->threads[out->n++]) < 0) rc = -ENOMEM;
    goroutines_free(&gs);
    if (!out->threads || rc < 0) {
        rt_stack_free(out);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

const struct provider go_memory_provider = {
    .name = "go-memory",
    .speaks = "Go",
    .probe = gomemory_probe,
    .stack = gomemory_stack,
};
