#include "cpu_pane.h"

#include <curses.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/capture/capture.h"
#include "util/dump_path.h"
#include "collect/proctable.h"
#include "render/cpu_top.h"
#include "render/flame.h"
#include "util/job.h"
#include "keymap.h"
#include "pane.h"
#include "tui_state.h"

#define LIVE_SECONDS 1.0   /* the table follows the samples once a second */
#define MAX_SECONDS 600.0  /* a profile forgotten in a pane ends by itself */

enum cpu_view { VIEW_TOP, VIEW_CALLERS, VIEW_ICICLE };

/* C on a process without a runtime profiler, or on a JVM (JFR, dumped every few seconds): diagtop's own sampler,
 * or the recording, in a worker, its report shown live (py-spy's `top`): the top functions, callers and callees of
 * one, or an icicle. */
struct cpu_pane {
    int pid;
    const char *by;                 /* NULL: diagtop's sampler; else the runtime's provider ("hotspot") */
    char dir[4096];                 /* where the runtime's recording is saved */
    struct capture_profile_options o; /* diagtop's sampler (CAPTURE_NATIVE), live */
    struct cpu_report result;       /* what the worker returns at the end */
    int rc;
    char err[512];
    pthread_mutex_t lock;           /* guards pending */
    int lock_ready;
    struct cpu_report *pending;     /* the worker's latest live report, not yet shown */
    struct cpu_report shown;        /* the one on screen (owned by the UI) */
    int have_shown, stopped;
    enum cpu_view view;
    enum cpu_top_sort sort;
    int tid;                        /* thread filter, 0: all */
    char *fn_name, *fn_module;      /* VIEW_CALLERS: the function looked at (whole: C++ names run long) */
    struct cpu_top top;             /* the rows on screen (VIEW_TOP), for Enter */
    int have_top;
};

static void on_report(void *arg, struct cpu_report *r)
{
    struct pane *p = arg;
    struct cpu_pane *cp = p->state;
    pthread_mutex_lock(&cp->lock);
    if (cp->pending) {
        cpu_report_free(cp->pending);
        free(cp->pending);
    }
    cp->pending = r;
    pthread_mutex_unlock(&cp->lock);
    job_notify(&p->job);
}

static void run(struct job *j)
{
    struct cpu_pane *cp = j->arg;
    cp->o.cancel = &j->cancel;
    struct capture_profile c;
    cp->rc = capture_profile(cp->pid, &cp->o, &c, cp->err, sizeof cp->err);
    cp->result = c.report; /* the sampler's report, or the runtime's live one: a report either way */
}

static void show(struct cpu_pane *cp, struct cpu_report *r)
{
    if (cp->have_shown) cpu_report_free(&cp->shown);
    cp->shown = *r;
    memset(r, 0, sizeof *r);
    cp->have_shown = 1;
}

static void drop_top(struct cpu_pane *cp)
{
    if (cp->have_top) cpu_top_free(&cp->top);
    cp->have_top = 0;
}

static void render(struct tui *t, struct pane *p)
{
    struct cpu_pane *cp = p->state;
    struct text_lines tl = {0};
    p->cursor_first = 0;
    drop_top(cp);
    if (!cp->have_shown) {
        text_lines_add(&tl, "%s", cp->rc < 0 ? cp->err : cp->by ? "Recording with JFR... (the first numbers come within "
                                                                  "5 s, then every 5 s)"
                                                        : "Sampling... (the first numbers come within a second)");
    } else if (cp->view == VIEW_CALLERS) {
        if (cpu_top_callers(&cp->shown, cp->fn_name, cp->fn_module, cp->tid, COLS, &tl) == -ENOENT)
            text_lines_add(&tl, "(no samples of this function%s)", cp->tid ? " in this thread" : "");
        text_lines_add(&tl, "%s", "");
        text_lines_add(&tl, "(Esc: back to the top functions)");
    } else if (cp->view == VIEW_ICICLE) {
        flame_icicle(&cp->shown, cp->tid, COLS > 2 ? COLS - 1 : 1, 0, &tl);
        text_lines_add(&tl, "(the outermost frames on top, widths by samples; F: back to the table)");
    } else {
        struct cpu_top_opts o = {cp->sort, cp->tid, 0};
        if (cpu_top_build(&cp->shown, &o, &cp->top) == 0) {
            cp->have_top = 1;
            cpu_top_text(&cp->top, COLS, &tl);
            p->cursor_first = (long)tl.n - cp->top.n; /* the rows are the last lines */
        }
    }
    pane_set_lines(p, &tl);
    const char *state = p->job.running ? (p->job.cancel ? "stopping" : "live") : "stopped";
    if (cp->by)
        pane_set_title(p, "CPU profile of %d (%s), from %s (JFR), %s%s", cp->pid, p->proc_name, cp->by, state,
                       cp->view == VIEW_CALLERS ? ": callers and callees" : cp->view == VIEW_ICICLE ? ": icicle" : "");
    else
    pane_set_title(p, "CPU profile of %d (%s), diagtop's sampler (%s), %s%s", cp->pid, p->proc_name,
                   cp->have_shown ? cp->shown.method : "...", state,
                   cp->view == VIEW_CALLERS ? ": callers and callees" : cp->view == VIEW_ICICLE ? ": icicle" : "");
    (void)t;
}

static unsigned start(struct tui *t, struct pane *p)
{
    struct cpu_pane *cp = p->state;
    if (p->job.running) return EFFECT_NONE;
    cp->rc = 0;
    cp->stopped = 0;
    cp->o.seconds = MAX_SECONDS;
    cp->o.live_seconds = LIVE_SECONDS;
    cp->o.on_report = on_report;
    cp->o.report_arg = p;
    if (pane_start_job(p, run) < 0) {
        cp->rc = -1;
        snprintf(cp->err, sizeof cp->err, "cannot start a worker thread");
    }
    render(t, p);
    return EFFECT_NONE;
}

/* The thread filter's next step: all, then each sampled thread, busiest first, then all again. */
static int next_thread(const struct cpu_report *r, int current)
{
    int best = 0;
    long long best_samples = -1, cur_samples = -1;
    for (int i = 0; i < r->nthreads; i++)
        if (r->threads[i].tid == current) cur_samples = r->threads[i].samples;
    for (int i = 0; i < r->nthreads; i++) {
        const struct cpu_thread *th = &r->threads[i];
        int after = current == 0 || th->samples < cur_samples || (th->samples == cur_samples && th->tid > current);
        if (after && th->samples > best_samples) {
            best = th->tid;
            best_samples = th->samples;
        }
    }
    return best;
}

static unsigned key(struct tui *t, struct pane *p, int k)
{
    struct cpu_pane *cp = p->state;
    switch (k) {
    case 'C': /* the second C stops sampling; the last numbers stay */
        if (p->job.running) p->job.cancel = 1;
        tui_set_status(t, 0, "stopping the profile");
        break;
    case 's':
        cp->sort = cp->sort == CPU_TOP_BY_OWN ? CPU_TOP_BY_TOTAL : cp->sort == CPU_TOP_BY_TOTAL ? CPU_TOP_BY_NAME
                                                                                              : CPU_TOP_BY_OWN;
        tui_set_status(t, 0, "sorted by %s", cp->sort == CPU_TOP_BY_OWN ? "own time" : cp->sort == CPU_TOP_BY_TOTAL
                                                                                    ? "total time" : "name");
        break;
    case 't':
        if (!cp->have_shown) return EFFECT_NONE;
        cp->tid = next_thread(&cp->shown, cp->tid);
        if (cp->tid) tui_set_status(t, 0, "thread %d only (t: next thread)", cp->tid);
        else tui_set_status(t, 0, "all threads");
        break;
    case 'F': cp->view = cp->view == VIEW_ICICLE ? VIEW_TOP : VIEW_ICICLE; break;
    case '\n': case '\r': case KEY_FUNC_FLAG | KEY_ENTER: {
        long row = p->cursor - p->cursor_first;
        if (cp->view != VIEW_TOP || !cp->have_top || row < 0 || row >= cp->top.n) return EFFECT_NONE;
        const struct cpu_top_row *r = &cp->top.rows[row];
        free(cp->fn_name);
        free(cp->fn_module);
        cp->fn_name = strdup(r->name);
        cp->fn_module = r->module ? strdup(r->module) : NULL;
        if (!cp->fn_name) return EFFECT_NONE;
        cp->view = VIEW_CALLERS;
        p->top = 0;
        break;
    }
    default: return PANE_KEY_UNHANDLED;
    }
    render(t, p);
    return EFFECT_NONE;
}

static int back(struct tui *t, struct pane *p)
{
    struct cpu_pane *cp = p->state;
    if (cp->view == VIEW_TOP) return 0;
    cp->view = VIEW_TOP;
    render(t, p);
    return 1;
}

/* A live report from the worker. */
static void notified(struct tui *t, struct pane *p)
{
    struct cpu_pane *cp = p->state;
    pthread_mutex_lock(&cp->lock);
    struct cpu_report *r = cp->pending;
    cp->pending = NULL;
    pthread_mutex_unlock(&cp->lock);
    if (r) {
        show(cp, r);
        free(r);
    }
    if (t->panes.front == p) render(t, p);
}

static void ready(struct tui *t, struct pane *p)
{
    struct cpu_pane *cp = p->state;
    if (cp->rc == 0) show(cp, &cp->result);
    else tui_set_status(t, 1, "profile failed: %s", cp->err);
    if (cp->rc == 0 && cp->shown.saved_path) tui_set_status(t, 0, "recording saved to %s", cp->shown.saved_path);
    if (t->panes.front == p) render(t, p);
}

static void forget(struct cpu_pane *cp)
{
    drop_top(cp);
    free(cp->fn_name);
    free(cp->fn_module);
    cp->fn_name = cp->fn_module = NULL;
    if (cp->have_shown) cpu_report_free(&cp->shown);
    cp->have_shown = 0;
    if (cp->pending) {
        cpu_report_free(cp->pending);
        free(cp->pending);
        cp->pending = NULL;
    }
    cpu_report_free(&cp->result);
}

/* Esc: sampling ended (the target is detached or its events closed) before the pane goes. */
static void closed(struct pane *p, int stopped)
{
    (void)stopped;
    forget(p->state);
}

static enum pane_open_result open_pane(struct tui *t, struct pane *p, const struct proc_row *row)
{
    struct cpu_pane *cp = p->state;
    if (row->is_kernel) {
        tui_set_status(t, 1, "a kernel thread has no user-space code to profile");
        return PANE_REFUSED;
    }
    if (p->job.running) {
        tui_set_status(t, 1, "the previous profile is still ending");
        return PANE_REFUSED;
    }
    if (!cp->lock_ready) {
        pthread_mutex_init(&cp->lock, NULL);
        cp->lock_ready = 1;
    }
    forget(cp);
    cp->pid = row->tgid;
    capture_profile_options_default(&cp->o);
    cp->o.want_live = 1;
    cp->o.timeout = t->s->agent_timeout;
    struct capture_who w = {.from = CAPTURE_NATIVE};
    capture_profile_who(row->tgid, &cp->o, &w);
    cp->by = w.from == CAPTURE_RUNTIME && w.is_report ? w.by : NULL; /* a live runtime report: the JVM's JFR */
    cp->o.from = cp->by ? CAPTURE_RUNTIME : CAPTURE_NATIVE;
    char err[256];
    if (cp->by && dump_directory(NULL, t->s->dump_dir, cp->dir, sizeof cp->dir, err, sizeof err) == 0)
        cp->o.save_dir = cp->dir;
    cp->view = VIEW_TOP;
    cp->sort = CPU_TOP_BY_OWN;
    cp->tid = 0;
    snprintf(p->save_name, sizeof p->save_name, "profile.%d.txt", row->tgid);
    start(t, p);
    return PANE_SHOWN;
}

static void destroy(struct pane *p)
{
    struct cpu_pane *cp = p->state;
    forget(cp);
    if (cp->lock_ready) pthread_mutex_destroy(&cp->lock);
}

const struct pane_class cpu_pane_class = {
    .name = "cpu profile",
    .keys_help = "Enter callers  s sort  t thread  F icicle  C stop",
    .state_size = sizeof(struct cpu_pane),
    .open = open_pane,
    .key = key,
    .reload = start,
    .ready = ready,
    .notified = notified,
    .closed = closed,
    .back = back,
    .has_cursor = 1,
    .destroy = destroy,
};
