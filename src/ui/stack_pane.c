#include "stack_pane.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../actions/stack.h"
#include "../collect/proctable.h"
#include "../render/stack_text.h"
#include "../util/clock.h"
#include "../util/job.h"
#include "pane.h"
#include "tui_state.h"

struct stack_pane {
    struct job job;
    int pid;
    struct stack_cache *cache; /* unwind tables and symbols, kept across snapshots of one process */
    struct stack_options opts;
    struct stack_result result;
    int rc;
    char err[512];
    int have_result;
    int ungrouped;
};

static void capture(struct job *j)
{
    struct stack_pane *sp = j->arg;
    sp->opts.cancel = &j->cancel;
    sp->rc = stack_capture(sp->pid, &sp->opts, &sp->result, sp->err, sizeof sp->err);
}

static void render(struct pane *p)
{
    struct stack_pane *sp = p->state;
    struct text_lines tl = {0};
    if (sp->rc < 0) {
        text_lines_add(&tl, "No stack: %s", sp->err);
    } else {
        struct stack_text_opts o = {!sp->ungrouped, 1};
        stack_text_render(&sp->result, &o, &tl);
    }
    pane_set_lines(p, &tl);
}

static unsigned start(struct tui *t, struct pane *p)
{
    (void)t;
    struct stack_pane *sp = p->state;
    if (sp->job.running) return EFFECT_NONE;
    stack_result_free(&sp->result);
    sp->have_result = 0;
    char text[128];
    snprintf(text, sizeof text, "Capturing every thread's stack of %d...", sp->pid);
    pane_set_busy(p, text, clock_monotonic_seconds());
    if (job_start(&sp->job, capture, sp) < 0) {
        sp->rc = -1;
        snprintf(sp->err, sizeof sp->err, "cannot start a worker thread");
        render(p);
    }
    return EFFECT_NONE;
}

static unsigned key(struct tui *t, struct pane *p, int k)
{
    struct stack_pane *sp = p->state;
    if (k != 'g') return PANE_KEY_UNHANDLED;
    sp->ungrouped = !sp->ungrouped;
    if (sp->have_result || sp->rc < 0) render(p);
    tui_set_status(t, 0, "%s", sp->ungrouped ? "one block per thread" : "identical stacks grouped");
    return EFFECT_NONE;
}

/* Closing the pane cancels a capture in flight (it detaches); the caches stay for the next b. */
static void cancel(struct tui *t, struct pane *p)
{
    (void)t;
    struct stack_pane *sp = p->state;
    if (sp->job.running && job_cancel(&sp->job, 2.0) == 0) stack_result_free(&sp->result);
}

static enum pane_open_result open_pane(struct tui *t, struct pane *p, const struct proc_row *row)
{
    if (row->is_kernel) {
        tui_set_status(t, 1, "%d is a kernel thread: it has no user-space stack", row->pid);
        return PANE_REFUSED;
    }
    struct stack_pane *sp = p->state;
    if (!sp->cache && !(sp->cache = stack_cache_new())) {
        tui_set_status(t, 1, "out of memory");
        return PANE_REFUSED;
    }
    sp->pid = row->tgid;
    stack_options_default(&sp->opts);
    sp->opts.cache = sp->cache;
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y%m%d-%H%M%S", &tm);
    pane_set_title(p, "Stack of %d", sp->pid);
    snprintf(p->save_name, sizeof p->save_name, "stack.%d.%s.txt", sp->pid, when);
    start(t, p);
    return PANE_SHOWN;
}

static int fd(const struct pane *p)
{
    const struct stack_pane *sp = p->state;
    return sp->job.running ? sp->job.done_fd : -1;
}

/* The worker finished: show its result if the pane is still in front (else it was cancelled meanwhile). */
static void ready(struct tui *t, struct pane *p)
{
    struct stack_pane *sp = p->state;
    job_finish(&sp->job);
    sp->have_result = sp->rc == 0;
    if (t->panes.front == p) render(p);
    else stack_result_free(&sp->result);
}

/* At exit. A capture still running after cancel's 2 s is left: when diagtop exits the kernel detaches its tracees. */
static int destroy(struct pane *p)
{
    struct stack_pane *sp = p->state;
    if (sp->job.running) return -1;
    stack_result_free(&sp->result);
    stack_cache_free(sp->cache);
    return 0;
}

const struct pane_class stack_pane_class = {
    .name = "stack",
    .keys_help = "g group/ungroup",
    .state_size = sizeof(struct stack_pane),
    .open = open_pane,
    .key = key,
    .reload = start,
    .fd = fd,
    .ready = ready,
    .cancel = cancel,
    .destroy = destroy,
};
