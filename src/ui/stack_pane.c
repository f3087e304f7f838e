#include "stack_pane.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actions/capture/capture.h"
#include "actions/runtimes/provider.h"
#include "collect/proctable.h"
#include "render/rt_text.h"
#include "render/stack_text.h"
#include "util/clock.h"
#include "util/job.h"
#include "pane.h"
#include "tui_state.h"

/* Two views of one process: the OS threads through ptrace (native), and for a Go program or a JVM the runtime's
 * own (goroutines, Java threads); v switches between them. */
struct stack_pane {
    int pid;
    struct stack_cache *cache; /* unwind tables and symbols, kept across snapshots of one process */
    struct capture_stack_options opts;
    struct stack_result result;  /* the native view */
    const char *runtime;         /* who gives the runtime's view, NULL when nobody can */
    char runtime_why[512];       /* why not, for v: "" for a native process */
    struct rt_stack rt;          /* the runtime's view */
    int show_runtime;            /* which view is in front */
    int running_runtime;         /* which view the job in flight captures */
    int rc, have_native, have_rt;
    char err[512];
    int ungrouped;
    int no_stop; /* w: the native view read without stopping the process; for this opening only */
};

static void capture(struct job *j)
{
    struct stack_pane *sp = j->arg;
    sp->opts.from = sp->running_runtime ? CAPTURE_RUNTIME : CAPTURE_NATIVE;
    sp->opts.cancel = &j->cancel;
    sp->opts.stack.no_stop = sp->no_stop;
    struct capture_stack c;
    sp->rc = capture_stack(sp->pid, &sp->opts, &c, sp->err, sizeof sp->err);
    if (sp->running_runtime) sp->rt = c.rt;
    else sp->result = c.native;
}

static void render(struct pane *p)
{
    struct stack_pane *sp = p->state;
    struct text_lines tl = {0};
    int have = sp->show_runtime ? sp->have_rt : sp->have_native;
    if (!have) {
        text_lines_add(&tl, "No stack: %s", sp->err);
    } else if (sp->show_runtime) {
        rt_text_stack(&sp->rt, !sp->ungrouped, &tl);
    } else {
        struct stack_text_opts o = {!sp->ungrouped, 1};
        stack_text_render(&sp->result, &o, &tl);
    }
    pane_set_lines(p, &tl);
    if (sp->show_runtime)
        pane_set_title(p, "%s of %d (%s), from %s (v: OS threads)",
                       sp->rt.n && sp->rt.threads[0].name ? "Java threads" : "Goroutines", sp->pid, p->proc_name,
                       sp->runtime);
    else
        pane_set_title(p, "Stack of %d (%s), OS threads %s%s", sp->pid, p->proc_name,
                       sp->no_stop ? "(without stopping)" : "(ptrace)", sp->runtime ? " (v: the runtime's view)" : "");
}

/* A new kind of content (w, v) is read from its first line, not from where the last one was scrolled to. */
static void to_top(struct pane *p)
{
    p->top = 0;
    p->match = -1;
}

static unsigned start(struct tui *t, struct pane *p)
{
    (void)t;
    struct stack_pane *sp = p->state;
    if (p->job.running) return EFFECT_NONE;
    sp->running_runtime = sp->show_runtime;
    if (sp->running_runtime) {
        rt_stack_free(&sp->rt);
        sp->have_rt = 0;
    } else {
        stack_result_free(&sp->result);
        sp->have_native = 0;
    }
    char text[128];
    if (sp->running_runtime) snprintf(text, sizeof text, "Asking %s for the stacks of %d...", sp->runtime, sp->pid);
    else snprintf(text, sizeof text, "Capturing every thread's stack of %d...", sp->pid);
    pane_set_busy(p, text, clock_monotonic_seconds());
    if (pane_start_job(p, capture) < 0) {
        sp->rc = -1;
        snprintf(sp->err, sizeof sp->err, "cannot start a worker thread");
        render(p);
    }
    return EFFECT_NONE;
}

static unsigned key(struct tui *t, struct pane *p, int k)
{
    struct stack_pane *sp = p->state;
    if (k == 'v') {
        if (!sp->runtime) {
            if (sp->runtime_why[0]) tui_set_status(t, 1, "no runtime view: %s", sp->runtime_why);
            else tui_set_status(t, 1, "no runtime view: a native process (Go with the gops agent, or a JVM, has one)");
            return EFFECT_NONE;
        }
        if (p->job.running) return EFFECT_NONE;
        sp->show_runtime = !sp->show_runtime;
        to_top(p);
        if (sp->show_runtime ? sp->have_rt : sp->have_native) render(p);
        else start(t, p);
        return EFFECT_NONE;
    }
    if (k == 'w') { /* without stopping: blocked threads from copies of their stacks, running ones listed */
        if (p->job.running) return EFFECT_NONE;
        sp->no_stop = !sp->no_stop;
        sp->show_runtime = 0;
        to_top(p);
        tui_set_status(t, 0, "%s", sp->no_stop ? "OS threads read without stopping the process"
                                               : "OS threads read while the process is stopped (milliseconds)");
        return start(t, p);
    }
    if (k != 'g') return PANE_KEY_UNHANDLED;
    sp->ungrouped = !sp->ungrouped;
    if (!p->busy) render(p);
    tui_set_status(t, 0, "%s", sp->ungrouped ? "one block per thread" : "identical stacks grouped");
    return EFFECT_NONE;
}

/* Closing the pane cancelled a capture in flight (it detached): its partial result goes; else the caches and
 * the views stay for the next b. */
static void closed(struct pane *p, int stopped)
{
    struct stack_pane *sp = p->state;
    if (!stopped) return;
    stack_result_free(&sp->result);
    rt_stack_free(&sp->rt);
    sp->have_native = sp->have_rt = 0;
}

static enum pane_open_result open_pane(struct tui *t, struct pane *p, const struct proc_row *row)
{
    if (row->is_kernel) {
        tui_set_status(t, 1, "%d is a kernel thread: it has no user-space stack", row->pid);
        return PANE_REFUSED;
    }
    /* A capture that did not stop when the pane closed still owns the result and the cache: reopening would free
     * them under it. */
    if (p->job.running) {
        tui_set_status(t, 1, "the last stack capture is still stopping");
        return PANE_REFUSED;
    }
    struct stack_pane *sp = p->state;
    if (!sp->cache && !(sp->cache = stack_cache_new())) {
        tui_set_status(t, 1, "out of memory");
        return PANE_REFUSED;
    }
    if (sp->pid != row->tgid) {
        stack_result_free(&sp->result);
        rt_stack_free(&sp->rt);
        sp->have_native = sp->have_rt = 0;
    }
    sp->pid = row->tgid;
    sp->no_stop = 0; /* w is for what is on screen: another process, or b again, is read the usual way */
    capture_stack_options_default(&sp->opts);
    sp->opts.stack.cache = sp->cache;
    sp->opts.timeout = t->s->agent_timeout;
    /* The runtime's view first when the runtime can answer, as `diagtop stack` does. */
    struct capture_who w;
    capture_stack_who(sp->pid, &sp->opts, &w);
    sp->runtime = w.from == CAPTURE_RUNTIME ? w.by : NULL;
    /* The note of a native process lists every runtime that could answer: v says it shorter. A Go program or a
     * JVM whose agent did not answer, or a process whose runtime cannot be told, keeps its reason. Only gops and
     * HotSpot tell their own threads; the diagtop agent does not. */
    const struct provider *rt = provider_runtime_of(sp->pid);
    int native = (!rt || !provider_offers(rt, OP_STACK)) && !strstr(w.note, "cannot be told");
    snprintf(sp->runtime_why, sizeof sp->runtime_why, "%s", native ? "" : w.note);
    sp->show_runtime = sp->runtime != NULL;
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y%m%d-%H%M%S", &tm);
    pane_set_title(p, "Stack of %d (%s)", sp->pid, p->proc_name);
    snprintf(p->save_name, sizeof p->save_name, "stack.%d.%s.txt", sp->pid, when);
    start(t, p);
    return PANE_SHOWN;
}

/* The capture ended: its result is shown if the pane is still in front (else it was closed meanwhile). */
static void ready(struct tui *t, struct pane *p)
{
    struct stack_pane *sp = p->state;
    if (sp->running_runtime) sp->have_rt = sp->rc == 0;
    else sp->have_native = sp->rc == 0;
    if (sp->rc < 0 && sp->running_runtime) { /* the runtime did not answer: the OS threads instead */
        tui_set_status(t, 1, "the OS threads instead: %s: %s", sp->runtime, sp->err);
        sp->show_runtime = 0;
        if (t->panes.front == p) start(t, p);
        return;
    }
    if (t->panes.front == p) render(p);
}

static void destroy(struct pane *p)
{
    struct stack_pane *sp = p->state;
    stack_result_free(&sp->result);
    rt_stack_free(&sp->rt);
    stack_cache_free(sp->cache);
}

const struct pane_class stack_pane_class = {
    .name = "stack",
    .keys_help = "g group  v OS threads/runtime|v view  w without stopping|w no-stop",
    .state_size = sizeof(struct stack_pane),
    .open = open_pane,
    .key = key,
    .reload = start,
    .ready = ready,
    .closed = closed,
    .destroy = destroy,
};
