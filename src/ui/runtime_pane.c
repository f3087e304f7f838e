#include "runtime_pane.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/dump_path.h"
#include "actions/capture/capture.h"
#include "actions/runtimes/provider.h"
#include "collect/proctable.h"
#include "render/rt_text.h"
#include "util/clock.h"
#include "util/job.h"
#include "keymap.h"
#include "pane.h"
#include "tui_state.h"

/* One request to the runtime (G: a GC, C: a CPU profile) run as a job, its answer shown in the pane. */
struct runtime_pane {
    enum provider_op op;
    const struct provider *provider; /* G */
    const char *by;                  /* who answers */
    struct provider_request rq;      /* G (and the pid of both) */
    struct capture_profile_options po; /* C: the runtime's profiler */
    char dir[4096];
    int rc;
    char err[512];
    struct rt_gc gc;
    struct capture_profile profile;
    volatile double fraction; /* written by the worker (progress), read by the screen */
    double started;
};

static void on_progress(void *arg, double fraction)
{
    struct runtime_pane *rp = arg;
    rp->fraction = fraction;
}

/* Esc cancels it: the request is abandoned (a forked helper killed, a connection closed); the process runs on. */
static void run(struct job *j)
{
    struct runtime_pane *rp = j->arg;
    rp->rq.cancel = rp->po.cancel = &j->cancel;
    if (rp->op == OP_GC) rp->rc = rp->provider->gc(&rp->rq, &rp->gc, rp->err, sizeof rp->err);
    else rp->rc = capture_profile(rp->rq.pid, &rp->po, &rp->profile, rp->err, sizeof rp->err);
}

static void forget(struct runtime_pane *rp)
{
    rt_gc_free(&rp->gc);
    capture_profile_free(&rp->profile);
}

static void render(struct pane *p)
{
    struct runtime_pane *rp = p->state;
    struct text_lines tl = {0};
    if (rp->rc < 0) text_lines_add(&tl, "No %s: %s", provider_op_name(rp->op), rp->err);
    else if (rp->op == OP_GC) rt_text_gc(&rp->gc, &tl);
    else rt_text_profile(&rp->profile.rt, 0, &tl);
    pane_set_lines(p, &tl);
}

static void progress(const struct pane *p, char *buf, size_t n)
{
    const struct runtime_pane *rp = p->state;
    int width = 30, filled = (int)(rp->fraction * width);
    if (filled < 0) filled = 0;
    if (filled > width) filled = width;
    char bar[64];
    memset(bar, '#', (size_t)filled);
    memset(bar + filled, '.', (size_t)(width - filled));
    bar[width] = '\0';
    if (rp->op == OP_PROFILE)
        snprintf(buf, n, "CPU profile of %d by %s  [%s] %3.0f%%", rp->rq.pid, rp->by, bar,
                 rp->fraction * 100.0);
    else
        snprintf(buf, n, "%s of %d by %s...", provider_op_name(rp->op), rp->rq.pid, rp->by);
}

static unsigned start(struct tui *t, struct pane *p)
{
    struct runtime_pane *rp = p->state;
    if (p->job.running) return EFFECT_NONE;
    forget(rp);
    rp->fraction = 0;
    rp->rq.progress = rp->po.progress = on_progress;
    rp->rq.progress_arg = rp->po.progress_arg = rp;
    char text[160];
    progress(p, text, sizeof text);
    pane_set_busy(p, text, clock_monotonic_seconds());
    if (pane_start_job(p, run) < 0) {
        rp->rc = -1;
        snprintf(rp->err, sizeof rp->err, "cannot start a worker thread");
        render(p);
    }
    (void)t;
    return EFFECT_NONE;
}

/* y to the question of a GC that stops the program: the pane comes to the front and the GC starts. */
static unsigned confirm_gc(struct tui *t, void *arg, int key)
{
    (void)key;
    struct pane *p = arg;
    pane_show(t, p);
    return start(t, p);
}

/* G and C on a row: the provider that answers, or a refusal saying what would make it available. */
static enum pane_open_result open_for(struct tui *t, struct pane *p, const struct proc_row *row, enum provider_op op)
{
    struct runtime_pane *rp = p->state;
    if (p->job.running) {
        tui_set_status(t, 1, "a %s is still running", provider_op_name(rp->op));
        return PANE_REFUSED;
    }
    char why[512];
    const struct provider *prov = NULL;
    struct capture_who w = {.from = CAPTURE_NATIVE};
    capture_profile_options_default(&rp->po);
    rp->po.from = CAPTURE_RUNTIME; /* C opens this pane when the runtime has a profiler (else the sampler's pane) */
    rp->po.timeout = t->s->agent_timeout;
    if (!row->is_kernel && op == OP_GC) prov = provider_choose(row->tgid, op, 0, why, sizeof why);
    else if (!row->is_kernel) capture_profile_who(row->tgid, &rp->po, &w);
    const char *by = prov ? prov->name : w.from == CAPTURE_RUNTIME ? w.by : NULL;
    if (!by) {
        tui_set_status(t, 1, "%s", row->is_kernel ? "a kernel thread has no runtime" : op == OP_GC ? why : w.note);
        return PANE_REFUSED;
    }
    rp->op = op;
    rp->provider = prov;
    rp->by = by;
    provider_request_default(&rp->rq, row->tgid);
    rp->rq.timeout = t->s->agent_timeout;
    char err[256];
    if (op == OP_PROFILE && dump_directory(NULL, t->s->dump_dir, rp->dir, sizeof rp->dir, err, sizeof err) == 0)
        rp->po.save_dir = rp->dir;
    pane_set_title(p, "%s of %d (%s), from %s", op == OP_GC ? "GC" : "CPU profile", row->tgid, p->proc_name, by);
    snprintf(p->save_name, sizeof p->save_name, "%s.%d.txt", op == OP_GC ? "gc" : "profile", row->tgid);
    if (prov && prov->gc_pause) { /* a JVM's full GC pauses it for as long as its heap takes: asked first, as D */
        char what[160], question[256];
        prov->gc_pause(row->tgid, what, sizeof what);
        snprintf(question, sizeof question, "Full GC pauses %d: %s. Run? [y/N] ", row->tgid, what);
        keymap_ask(t, question, "y", confirm_gc, p, "GC cancelled: nothing was run");
        return PANE_PENDING;
    }
    start(t, p);
    return PANE_SHOWN;
}

static enum pane_open_result open_gc(struct tui *t, struct pane *p, const struct proc_row *row)
{
    return open_for(t, p, row, OP_GC);
}

static enum pane_open_result open_profile(struct tui *t, struct pane *p, const struct proc_row *row)
{
    return open_for(t, p, row, OP_PROFILE);
}

static void ready(struct tui *t, struct pane *p)
{
    struct runtime_pane *rp = p->state;
    if (t->panes.front == p) render(p);
    if (rp->rc < 0) tui_set_status(t, 1, "%s failed: %s", provider_op_name(rp->op), rp->err);
    else if (rp->op == OP_PROFILE && rp->profile.rt.saved_path)
        tui_set_status(t, 0, "profile saved to %s", rp->profile.rt.saved_path);
}

static void destroy(struct pane *p) { forget(p->state); }

const struct pane_class gc_pane_class = {
    .name = "gc",
    .state_size = sizeof(struct runtime_pane),
    .open = open_gc,
    .reload = start,
    .ready = ready,
    .progress = progress,
    .destroy = destroy,
};

const struct pane_class profile_pane_class = {
    .name = "profile",
    .state_size = sizeof(struct runtime_pane),
    .open = open_profile,
    .reload = start,
    .ready = ready,
    .progress = progress,
    .destroy = destroy,
};
