#include "heap_pane.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/dump_path.h"
#include "actions/runtimes/provider.h"
#include "collect/proctable.h"
#include "render/heap_view.h"
#include "render/rt_text.h"
#include "util/clock.h"
#include "util/job.h"
#include "util/text.h"
#include "dump_pane.h"
#include "pane.h"
#include "tui_state.h"

#define AUTO_SECONDS 30.0 /* a new snapshot this long after the last, while the pane is in front */

/* The leak view: heap snapshots of one process taken on A, on r and then every AUTO_SECONDS while the pane is in
 * front, each shown against the previous and the first of the series. Three snapshots are kept. Rows can be
 * chosen: Enter shows one row's whole stack and numbers, Esc goes back to the table. */
struct heap_pane {
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
    /* The table as shown: its rows in order (in cur) and the line each starts on, for the cursor. */
    const struct rt_heap_row **order;
    int *line_of;
    int norder;
    /* Enter: the chosen row, copied (snapshots go on meanwhile), with its changes then. */
    int show_stack;
    struct rt_heap_row picked;
    struct heap_view_row picked_view;
    int picked_first, picked_prev; /* whether there were a first and a previous snapshot to compare with */
    char picked_provider[16];
    double picked_at;
};

static void run(struct job *j)
{
    struct heap_pane *hp = j->arg;
    hp->rq.cancel = &j->cancel;
    hp->rc = hp->provider->heap(&hp->rq, &hp->taking, hp->err, sizeof hp->err);
}

static void drop_picked(struct heap_pane *hp)
{
    free(hp->picked.name);
    rt_frames_free(hp->picked.stack, hp->picked.nstack);
    memset(&hp->picked, 0, sizeof hp->picked);
}

static void drop_order(struct heap_pane *hp)
{
    free(hp->order);
    free(hp->line_of);
    hp->order = NULL;
    hp->line_of = NULL;
    hp->norder = 0;
}

static void forget(struct heap_pane *hp)
{
    drop_order(hp);
    drop_picked(hp);
    hp->show_stack = 0;
    rt_heap_free(&hp->taking);
    rt_heap_free(&hp->first);
    rt_heap_free(&hp->prev);
    rt_heap_free(&hp->cur);
    hp->snapshots = 0;
}

/* Text from the target (names, files), fit for the terminal. */
static void add_clean(struct text_lines *tl, const char *fmt, const char *a, const char *b, int n)
{
    char ca[512], cb[512];
    text_sanitize_display(ca, sizeof ca, a ? a : "-", strlen(a ? a : "-"));
    text_sanitize_display(cb, sizeof cb, b ? b : "", strlen(b ? b : ""));
    text_lines_add(tl, fmt, ca, cb, n);
}

static void signed_bytes(char *buf, size_t n, long long v)
{
    char b[24];
    text_format_bytes(b, sizeof b, v < 0 ? -v : v);
    snprintf(buf, n, "%s%s", v < 0 ? "-" : v > 0 ? "+" : "", v ? b : "0");
}

/* Enter's view: the chosen row's numbers and its whole stack, innermost first. */
static void render_stack(struct pane *p, struct text_lines *tl)
{
    struct heap_pane *hp = p->state;
    const struct rt_heap_row *r = &hp->picked;
    const struct heap_view_row *v = &hp->picked_view;
    char when[32], b[32], a[32], d[40], m[40], pv[40];
    time_t t = (time_t)hp->picked_at;
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(when, sizeof when, "%H:%M:%S", &tm);
    add_clean(tl, "%s%s", r->stack ? "Allocation site: " : "Type: ", r->name, 0);
    text_lines_add(tl, "(snapshot of %s at %s)", hp->picked_provider, when);
    text_format_bytes(b, sizeof b, r->bytes);
    if (r->alloc_bytes >= 0) {
        text_format_bytes(a, sizeof a, r->alloc_bytes);
        text_lines_add(tl, "In use: %s in %lld objects; allocated since start: %s in %lld objects", b, r->count, a,
                       r->alloc_count);
    } else {
        text_lines_add(tl, "In use: %s in %lld objects", b, r->count);
    }
    if (hp->picked_first) {
        signed_bytes(d, sizeof d, v->since_first.bytes);
        signed_bytes(m, sizeof m, (long long)v->bytes_per_minute);
        signed_bytes(pv, sizeof pv, v->since_prev.bytes);
        text_lines_add(tl, "Since the first snapshot: %s, %+lld objects (%s/min)%s%s%s", d, v->since_first.count, m,
                       hp->picked_prev ? "; since the previous: " : "", hp->picked_prev ? pv : "",
                       v->since_first.is_new ? "; new since the first" : "");
    }
    text_lines_add(tl, "%s", "");
    if (!r->stack) {
        text_lines_add(tl, "(a class: the runtime gives no allocation stack)");
    } else {
        text_lines_add(tl, "Stack, innermost first (%d frames):", r->nstack);
        p->cursor_first = (long)tl->n;
        for (int i = 0; i < r->nstack; i++) {
            const struct rt_frame *f = &r->stack[i];
            if (f->file && f->line > 0) add_clean(tl, "  %-50s %s:%d", f->function, f->file, f->line);
            else add_clean(tl, "  %s%s", f->function, "", 0);
        }
    }
    text_lines_add(tl, "%s", "");
    text_lines_add(tl, "(Esc: back to the table)");
}

/* The shown rows in order, and the line each begins on (a row, then its stack with e). */
static void note_order(struct heap_pane *hp, const struct heap_view *v, long lines, struct pane *p)
{
    drop_order(hp);
    long used = 0;
    for (int i = 0; i < v->n; i++) used += 1 + (hp->stacks ? v->rows[i].row->nstack : 0);
    p->cursor_first = lines - used;
    if (v->n == 0 || !(hp->order = calloc((size_t)v->n, sizeof *hp->order)) ||
        !(hp->line_of = calloc((size_t)v->n, sizeof *hp->line_of))) {
        drop_order(hp);
        p->cursor_first = lines;
        return;
    }
    long line = p->cursor_first;
    for (int i = 0; i < v->n; i++) {
        hp->order[i] = v->rows[i].row;
        hp->line_of[i] = (int)line;
        line += 1 + (hp->stacks ? v->rows[i].row->nstack : 0);
    }
    hp->norder = v->n;
}

static void render(struct pane *p)
{
    struct heap_pane *hp = p->state;
    struct text_lines tl = {0};
    p->cursor_first = 0;
    if (hp->show_stack) {
        render_stack(p, &tl);
    } else {
        if (hp->rc < 0) text_lines_add(&tl, "No heap summary: %s", hp->err);
        if (hp->snapshots > 0) {
            struct heap_view v;
            const struct rt_heap *prev = hp->prev.rows ? &hp->prev : hp->first.rows ? &hp->first : NULL;
            if (heap_view_build(&v, &hp->cur, prev, hp->first.rows ? &hp->first : NULL) == 0) {
                rt_text_heap(&v, 0, hp->stacks, &tl);
                note_order(hp, &v, (long)tl.n, p);
                heap_view_free(&v);
            }
        }
    }
    pane_set_lines(p, &tl);
    pane_set_title(p, "Heap of %d (%s), from %s: %d snapshot%s%s", hp->rq.pid, p->proc_name, hp->provider->name,
                   hp->snapshots,
                   hp->snapshots == 1 ? "" : "s", hp->auto_on ? ", a new one every 30 s" : "");
}

static unsigned snapshot(struct tui *t, struct pane *p)
{
    (void)t;
    struct heap_pane *hp = p->state;
    if (p->job.running) return EFFECT_NONE;
    hp->last = clock_monotonic_seconds();
    char text[160];
    snprintf(text, sizeof text, "Heap snapshot %d of %d from %s...", hp->snapshots + 1, hp->rq.pid, hp->provider->name);
    if (hp->snapshots == 0) pane_set_busy(p, text, hp->last); /* later ones keep the table on screen */
    if (pane_start_job(p, run) < 0) {
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
    if (t->panes.front == p && !hp->show_stack) render(p);
}

/* Enter on the table: the row under the cursor, copied with its changes. */
static int pick(struct pane *p)
{
    struct heap_pane *hp = p->state;
    int idx = -1;
    for (int i = 0; i < hp->norder; i++)
        if (p->cursor >= hp->line_of[i]) idx = i;
    if (idx < 0 || hp->snapshots == 0) return -1;
    struct heap_view v;
    const struct rt_heap *prev = hp->prev.rows ? &hp->prev : hp->first.rows ? &hp->first : NULL;
    if (heap_view_build(&v, &hp->cur, prev, hp->first.rows ? &hp->first : NULL) < 0) return -1;
    int found = -1;
    for (int i = 0; i < v.n; i++)
        if (v.rows[i].row == hp->order[idx]) found = i;
    int rc = -1;
    if (found >= 0) {
        const struct rt_heap_row *r = v.rows[found].row;
        drop_picked(hp);
        hp->picked = *r;
        hp->picked.name = r->name ? strdup(r->name) : NULL;
        hp->picked.stack = r->stack ? rt_frames_dup(r->stack, r->nstack) : NULL;
        hp->picked_view = v.rows[found];
        hp->picked_view.row = &hp->picked;
        hp->picked_first = v.first != NULL;
        hp->picked_prev = v.prev != NULL && v.prev != v.first;
        snprintf(hp->picked_provider, sizeof hp->picked_provider, "%s", hp->cur.provider);
        hp->picked_at = hp->cur.taken_at;
        rc = (r->stack && !hp->picked.stack) ? -1 : 0;
    }
    heap_view_free(&v);
    return rc;
}

static int back(struct tui *t, struct pane *p)
{
    (void)t;
    struct heap_pane *hp = p->state;
    if (!hp->show_stack) return 0;
    hp->show_stack = 0;
    render(p);
    return 1;
}

static void tick(struct tui *t, struct pane *p)
{
    struct heap_pane *hp = p->state;
    if (hp->auto_on && !p->job.running && clock_monotonic_seconds() - hp->last >= AUTO_SECONDS) snapshot(t, p);
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
    case '\n': case '\r': case KEY_FUNC_FLAG | KEY_ENTER:
        if (hp->show_stack || pick(p) < 0) return EFFECT_NONE;
        hp->show_stack = 1;
        p->top = 0;
        break;
    case 'w': { /* who holds these: a heap dump, then the paths to the class's instances (a JVM's classes only) */
        int idx = -1;
        for (int i = 0; i < hp->norder; i++)
            if (p->cursor >= hp->line_of[i]) idx = i;
        if (idx < 0 || hp->show_stack || !hp->order[idx]->name || hp->order[idx]->stack) {
            tui_set_status(t, 1, "w asks who holds a class: on a JVM's class row");
            return EFFECT_NONE;
        }
        snprintf(t->pane_arg, sizeof t->pane_arg, "%s", hp->order[idx]->name);
        struct proc_row row;
        memset(&row, 0, sizeof row);
        row.pid = row.tgid = hp->rq.pid;
        return pane_open(t, &holders_pane_class, &row);
    }
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
    if (p->job.running) {
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
    hp->show_stack = 0;
    hp->provider = prov;
    provider_request_default(&hp->rq, row->tgid);
    hp->rq.timeout = t->s->agent_timeout;
    hp->rq.drop_frames = t->s->drop_frames[0] ? t->s->drop_frames : NULL;
    char err[256];
    if (dump_directory(NULL, t->s->dump_dir, hp->dir, sizeof hp->dir, err, sizeof err) == 0) hp->rq.save_dir = hp->dir;
    hp->auto_on = 1;
    snprintf(p->save_name, sizeof p->save_name, "heap.%d.txt", row->tgid);
    render(p);
    snapshot(t, p);
    return PANE_SHOWN;
}

/* A snapshot stopped on the way is dropped; the series stays for the next A on the same process. */
static void closed(struct pane *p, int stopped)
{
    struct heap_pane *hp = p->state;
    if (stopped) rt_heap_free(&hp->taking);
}

static void destroy(struct pane *p) { forget(p->state); }

const struct pane_class heap_pane_class = {
    .name = "heap",
    .keys_help = "Enter stack  w who holds it  a auto  e stacks  z new baseline|z baseline",
    .state_size = sizeof(struct heap_pane),
    .open = open_pane,
    .key = key,
    .reload = snapshot,
    .tick = tick,
    .ready = ready,
    .closed = closed,
    .destroy = destroy,
    .back = back,
    .has_cursor = 1,
};
