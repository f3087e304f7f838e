#include "heap_pane.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../actions/dump_path.h"
#include "../actions/provider.h"
#include "../collect/proctable.h"
#include "../render/heap_view.h"
#include "../render/rt_text.h"
#include "../util/clock.h"
#include "../util/job.h"
#include "pane.h"
#include "tui_state.h"

#define AUTO_SECONDS 30.0 /* a new snapshot this long after the last, while the pane is in front */

/* The leak view: heap snapshots of one process taken on A, on r and then every AUTO_SECONDS while the pane is in
 * front, each shown against the previous and the first of the series. Three snapshots are kept. */
struct heap_pane {
    struct job job;
    const struct provider *provider;
    struct provider_request rq;
    char dir[4096];
    int rc;
    char err[512];
    struct rt_heap taking;           /* what the worker fills */
    struct rt_heap first, prev, cur; /* the series (first and prev empty until there are more) */
    int snapshots;
    int auto_on, stacks;
    double last; /* when the last snapshot was asked for */
};

static void run(struct job *j)
{
    struct heap_pane *hp = j->arg;
    hp->rq.cancel = &j->cancel;
    hp->rc = hp->provider->heap(&hp->rq, &hp->taking, hp->err, sizeof hp->err);
}

static void forget(struct heap_pane *hp)
{
    rt_heap_free(&hp->taking);
    rt_heap_free(&hp->first);
    rt_heap_free(&hp->prev);
    rt_heap_free(&hp->cur);
    hp->snapshots = 0;
}

static void render(struct pane *p)
{
    struct heap_pane *hp = p->state;
    struct text_lines tl = {0};
    if (hp->rc < 0) text_lines_add(&tl, "No heap summary: %s", hp->err);
    if (hp->snapshots > 0) {
        struct heap_view v;
        const struct rt_heap *prev = hp->prev.rows ? &hp->prev : hp->first.rows ? &hp->first : NULL;
        if (heap_view_build(&v, &hp->cur, prev, hp->first.rows ? &hp->first : NULL) == 0) {
            rt_text_heap(&v, 0, hp->stacks, &tl);
            heap_view_free(&v);
        }
    }
    pane_set_lines(p, &tl);
    pane_set_title(p, "Heap of %d, from %s: %d snapshot%s%s", hp->rq.pid, hp->provider->name, hp->snapshots,
                   hp->snapshots == 1 ? "" : "s", hp->auto_on ? ", a new one every 30 s" : "");
}

static unsigned snapshot(struct tui *t, struct pane *p)
{
    (void)t;
    struct heap_pane *hp = p->state;
    if (hp->job.running) return EFFECT_NONE;
    hp->last = clock_monotonic_seconds();
    char text[160];
    snprintf(text, sizeof text, "Heap snapshot %d of %d from %s...", hp->snapshots + 1, hp->rq.pid, hp->provider->name);
    if (hp->snapshots == 0) pane_set_busy(p, text, hp->last); /* later ones keep the table on screen */
    if (job_start(&hp->job, run, hp) < 0) {
        hp->rc = -1;
        snprintf(hp->err, sizeof hp->err, "cannot start a worker thread");
        render(p);
    }
    return EFFECT_NONE;
}

/* The snapshot joins the series: the current one becomes the previous (the first stays the first). */
static void ready(struct tui *t, struct pane *p)
{
    struct heap_pane *hp = p->state;
    job_finish(&hp->job);
    if (hp->rc == 0) {
        if (hp->snapshots == 1) {
            hp->first = hp->cur;
        } else if (hp->snapshots > 1) {
            rt_heap_free(&hp->prev);
            hp->prev = hp->cur;
        }
        hp->cur = hp->taking;
        memset(&hp->taking, 0, sizeof hp->taking);
        hp->snapshots++;
    } else {
        tui_set_status(t, 1, "heap snapshot failed: %s", hp->err);
    }
    if (t->panes.front == p) render(p);
}

static void tick(struct tui *t, struct pane *p)
{
    struct heap_pane *hp = p->state;
    if (hp->auto_on && !hp->job.running && clock_monotonic_seconds() - hp->last >= AUTO_SECONDS) snapshot(t, p);
}

static unsigned key(struct tui *t, struct pane *p, int k)
{
    struct heap_pane *hp = p->state;
    switch (k) {
    case 'a':
        hp->auto_on = !hp->auto_on;
        tui_set_status(t, 0, "automatic snapshots %s", hp->auto_on ? "every 30 s" : "off (r takes one)");
        break;
    case 'e': hp->stacks = !hp->stacks; break;
    case 'z': /* the current snapshot becomes the baseline */
        if (hp->snapshots < 2) return EFFECT_NONE;
        rt_heap_free(&hp->first);
        rt_heap_free(&hp->prev);
        hp->snapshots = 1;
        tui_set_status(t, 0, "changes count from this snapshot on");
        break;
    default: return PANE_KEY_UNHANDLED;
    }
    render(p);
    return EFFECT_NONE;
}

static enum pane_open_result open_pane(struct tui *t, struct pane *p, const struct proc_row *row)
{
    struct heap_pane *hp = p->state;
    p->job = &hp->job;
    if (hp->job.running) {
        tui_set_status(t, 1, "a heap snapshot is still being taken");
        return PANE_REFUSED;
    }
    char why[512];
    const struct provider *prov = row->is_kernel ? NULL : provider_choose(row->tgid, OP_HEAP, 0, why, sizeof why);
    if (!prov) {
        tui_set_status(t, 1, "%s", row->is_kernel ? "a kernel thread has no heap" : why);
        return PANE_REFUSED;
    }
    if (hp->rq.pid != row->tgid || hp->provider != prov) forget(hp); /* another process: a new series */
    hp->provider = prov;
    provider_request_default(&hp->rq, row->tgid);
    hp->rq.timeout = t->s->agent_timeout;
    char err[256];
    if (dump_directory(NULL, t->s->dump_dir, hp->dir, sizeof hp->dir, err, sizeof err) == 0) hp->rq.save_dir = hp->dir;
    hp->auto_on = 1;
    snprintf(p->save_name, sizeof p->save_name, "heap.%d.txt", row->tgid);
    render(p);
    snapshot(t, p);
    return PANE_SHOWN;
}

static void cancel(struct tui *t, struct pane *p)
{
    (void)t;
    struct heap_pane *hp = p->state;
    if (hp->job.running && job_cancel(&hp->job, 3.0) == 0) rt_heap_free(&hp->taking);
}

static int destroy(struct pane *p)
{
    struct heap_pane *hp = p->state;
    if (hp->job.running) return -1;
    forget(hp);
    return 0;
}

const struct pane_class heap_pane_class = {
    .name = "heap",
    .keys_help = "a auto  e stacks  z new baseline",
    .state_size = sizeof(struct heap_pane),
    .open = open_pane,
    .key = key,
    .reload = snapshot,
    .tick = tick,
    .ready = ready,
    .cancel = cancel,
    .destroy = destroy,
};
