#include "stack_pane.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../actions/stack.h"
#include "../app/job.h"
#include "../render/stack_text.h"
#include "../util/clock.h"
#include "../util/text.h"
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
    int group;
};

static void capture(struct job *j)
{
    struct stack_pane *sp = j->arg;
    sp->opts.cancel = &j->cancel;
    sp->rc = stack_capture(sp->pid, &sp->opts, &sp->result, sp->err, sizeof sp->err);
}

static void render(struct tui *t)
{
    struct stack_pane *sp = t->stack;
    struct text_lines tl = {0};
    if (sp->rc < 0) {
        text_lines_add(&tl, "No stack: %s", sp->err);
    } else {
        struct stack_text_opts o = {sp->group, 1};
        stack_text_render(&sp->result, &o, &tl);
    }
    pane_set_lines(t, &tl);
}

static unsigned start(struct tui *t)
{
    struct stack_pane *sp = t->stack;
    if (sp->job.running) return EFFECT_NONE;
    stack_result_free(&sp->result);
    sp->have_result = 0;
    char text[128];
    snprintf(text, sizeof text, "Capturing every thread's stack of %d...", sp->pid);
    pane_set_busy(t, text);
    t->pane.busy_since = clock_monotonic_seconds();
    if (job_start(&sp->job, capture, sp) < 0) {
        sp->rc = -1;
        snprintf(sp->err, sizeof sp->err, "cannot start a worker thread");
        render(t);
    }
    return EFFECT_NONE;
}

static unsigned refresh(struct tui *t) { return start(t); }

static unsigned key(struct tui *t, int k)
{
    struct stack_pane *sp = t->stack;
    if (k != 'g') return ~0u;
    sp->group = !sp->group;
    if (sp->have_result || sp->rc < 0) render(t);
    tui_set_status(t, 0, "%s", sp->group ? "identical stacks grouped" : "one block per thread");
    return EFFECT_NONE;
}

/* Closing the pane cancels a capture in flight (it detaches); the caches stay for the next b. */
static void cancel(struct tui *t)
{
    struct stack_pane *sp = t->stack;
    if (sp && sp->job.running && job_cancel(&sp->job, 2.0) == 0) stack_result_free(&sp->result);
}

static const struct pane_owner stack_owner = {"g group/ungroup", refresh, key, cancel, NULL, NULL, NULL};

unsigned stack_pane_open(struct tui *t, int pid)
{
    if (!t->stack) {
        t->stack = calloc(1, sizeof *t->stack);
        if (!t->stack) return EFFECT_NONE;
        t->stack->cache = stack_cache_new();
        t->stack->group = 1;
    }
    struct stack_pane *sp = t->stack;
    if (sp->job.running) cancel(t);
    sp->pid = pid;
    stack_options_default(&sp->opts);
    sp->opts.cache = sp->cache;
    char title[160], save[160], when[32];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y%m%d-%H%M%S", &tm);
    snprintf(title, sizeof title, "Stack of %d", pid);
    snprintf(save, sizeof save, "stack.%d.%s.txt", pid, when);
    pane_open(t, &stack_owner, title, save);
    return start(t);
}

void stack_pane_done(struct tui *t)
{
    struct stack_pane *sp = t->stack;
    if (!sp || !sp->job.running) return;
    job_finish(&sp->job);
    sp->have_result = sp->rc == 0;
    if (t->pane.open && t->pane.owner == &stack_owner) render(t);
    else stack_result_free(&sp->result);
}

int stack_pane_fd(const struct tui *t) { return t->stack && t->stack->job.running ? t->stack->job.done_fd : -1; }

void stack_pane_shutdown(struct tui *t)
{
    struct stack_pane *sp = t->stack;
    if (!sp) return;
    if (sp->job.running && job_cancel(&sp->job, 2.0) < 0) {
        /* Still running after 2 s: leave it; when this process exits the kernel detaches its tracees. */
        t->stack = NULL;
        return;
    }
    stack_result_free(&sp->result);
    stack_cache_free(sp->cache);
    free(sp);
    t->stack = NULL;
}
