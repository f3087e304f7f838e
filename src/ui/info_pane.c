#include "info_pane.h"

#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/runtimes/provider.h"
#include "collect/procinfo.h"
#include "collect/proctable.h"
#include "render/history_text.h"
#include "render/procinfo_text.h"
#include "render/rt_text.h"
#include "util/clock.h"
#include "util/job.h"
#include "util/text.h"
#include "pane.h"
#include "tui_state.h"

#define TABS 8
#define HISTORY_TAB 7 /* the tabs before it are procinfo sections, tab i section 1 << i */

static const char *const tab_titles[TABS] = {"General", "Memory",      "Modules", "FDs",
                                             "Threads", "Environment", "I/O",     "History"};

struct prev_tick { int tid; double cpu_seconds; };

struct info_pane {
    int pid;
    int tab;
    int show_secrets;
    char env_filter[128];
    struct proc_info info;
    int have_info;
    char err[256];
    /* Thread CPU seconds at the previous read, for per-thread CPU%. */
    struct prev_tick *prev;
    int nprev;
    double prev_time;
    /* The runtime's own memory statistics (gops memstats, a JVM's heap info) next to the kernel's, asked for in
     * the pane's job when the Memory tab is shown and on r: not at every refresh (gops' memstats stops the world). */
    const struct provider *runtime;
    struct provider_request rq;
    struct rt_fields rtf;
    int rt_asked, rt_rc;
    char rt_err[256];
};

static void memstats_run(struct job *j)
{
    struct info_pane *ip = j->arg;
    ip->rq.cancel = &j->cancel;
    ip->rt_rc = ip->runtime->memstats(&ip->rq, &ip->rtf, ip->rt_err, sizeof ip->rt_err);
}

static void memstats_ask(struct pane *p)
{
    struct info_pane *ip = p->state;
    if (!ip->runtime || p->job.running) return;
    rt_fields_free(&ip->rtf);
    ip->rt_asked = 1;
    ip->rt_rc = 1; /* in flight */
    if (pane_start_job(p, memstats_run) < 0) {
        ip->rt_rc = -1;
        snprintf(ip->rt_err, sizeof ip->rt_err, "cannot start a worker thread");
    }
}

/* The runtime's section of the Memory tab. */
static void memstats_lines(const struct info_pane *ip, struct text_lines *tl)
{
    if (!ip->runtime) return;
    text_lines_add(tl, "%s", "");
    if (ip->rt_rc > 0) text_lines_add(tl, "(asking %s for the runtime's memory statistics...)", ip->runtime->name);
    else if (ip->rt_rc < 0) text_lines_add(tl, "runtime memstats (%s): %s", ip->runtime->name, ip->rt_err);
    else rt_text_fields(&ip->rtf, tl);
}

/* Per-thread CPU% from the previous read (the pane re-reads at the table's delay). */
static void thread_cpu(struct info_pane *ip, double now)
{
    struct proc_info *pi = &ip->info;
    double dt = now - ip->prev_time;
    for (int i = 0; i < pi->nthreads; i++) {
        struct pi_thread *th = &pi->threads[i];
        for (int k = 0; k < ip->nprev && dt > 0; k++)
            if (ip->prev[k].tid == th->tid) th->cpu_percent = 100.0 * (th->utime + th->stime - ip->prev[k].cpu_seconds) / dt;
    }
    free(ip->prev);
    ip->prev = calloc((size_t)(pi->nthreads ? pi->nthreads : 1), sizeof *ip->prev);
    ip->nprev = 0;
    for (int i = 0; ip->prev && i < pi->nthreads; i++)
        ip->prev[ip->nprev++] = (struct prev_tick){pi->threads[i].tid, pi->threads[i].utime + pi->threads[i].stime};
    ip->prev_time = now;
}

/* The table's history of the process (kept for every process, so the pane shows minutes from before it opened). */
static size_t history_points(struct tui *t, const struct info_pane *ip, struct history_point **out)
{
    *out = malloc(HISTORY_SLOTS * sizeof **out);
    return *out ? proctable_history(t->mon.table, ip->pid, 0, *out, HISTORY_SLOTS) : 0;
}

/* The Memory tab's first line: RSS over the time kept and its growth rate. */
static void memory_history_line(struct tui *t, const struct info_pane *ip, struct text_lines *tl)
{
    struct history_point *pts;
    size_t n = history_points(t, ip, &pts);
    char line[1024], rate[64] = "-";
    int width = COLS - 40 > 10 ? COLS - 40 : 10;
    if (n && history_text_field(pts, n, HIST_RES, width > 200 ? 200 : width, t->scr.glyphs != GLYPHS_UTF8, line,
                                sizeof line)) {
        double dt = pts[n - 1].t - pts[0].t;
        if (dt >= 1.0) {
            double per_min = (pts[n - 1].v[HIST_RES] - pts[0].v[HIST_RES]) * 60.0 / dt;
            char b[32];
            text_format_bytes(b, sizeof b, (long long)fabs(per_min));
            snprintf(rate, sizeof rate, "%s%s/min", per_min < 0 ? "-" : "+", b);
        }
        text_lines_add(tl, "RSS, last %.0f s (%zu samples): %s  %s", dt, n, line, rate);
        text_lines_add(tl, "%s", "");
    }
    free(pts);
}

static void history_tab(struct tui *t, const struct info_pane *ip, struct text_lines *tl)
{
    struct history_point *pts;
    size_t n = history_points(t, ip, &pts);
    history_text(pts, n, clock_monotonic_seconds(), COLS, t->scr.glyphs != GLYPHS_UTF8, tl);
    free(pts);
}

/* One tab of the bar, the current one in brackets; returns its width. */
static int tab_cell(const struct info_pane *ip, int i, char *buf, size_t n)
{
    return snprintf(buf, n, i == ip->tab ? "[%d %s]" : " %d %s ", i + 1, tab_titles[i]);
}

/* The width of the bar showing tabs first..last, with "<" and ">" where tabs are left out. */
static int tabs_width(const struct info_pane *ip, int prefix, int first, int last)
{
    char cell[64];
    int w = prefix + (first > 0 ? 2 : 0) + (last < TABS - 1 ? 2 : 0);
    for (int i = first; i <= last; i++) w += tab_cell(ip, i, cell, sizeof cell) + (i > first);
    return w;
}

/* The tab bar scrolls: the leftmost run of tabs that fits and holds the current one, marked "<" and ">" where
 * tabs are left out on that side. */
static void title_fit(const struct pane *p, int width, char *buf, size_t n)
{
    const struct info_pane *ip = p->state;
    char cell[64];
    int prefix = snprintf(buf, n, "Process %d  ", ip->pid);
    int first = 0, last = ip->tab;
    while (first < ip->tab && tabs_width(ip, prefix, first, last) > width) first++;
    while (last + 1 < TABS && tabs_width(ip, prefix, first, last + 1) <= width) last++;
    size_t off = (size_t)prefix;
    if (first > 0 && off < n) off += (size_t)snprintf(buf + off, n - off, "< ");
    for (int i = first; i <= last && off < n; i++) {
        tab_cell(ip, i, cell, sizeof cell);
        off += (size_t)snprintf(buf + off, n - off, "%s%s", i > first ? " " : "", cell);
    }
    if (last < TABS - 1 && off < n) snprintf(buf + off, n - off, " >");
}

static void render(struct tui *t, struct pane *p)
{
    struct info_pane *ip = p->state;
    struct text_lines tl = {0};
    title_fit(p, (int)sizeof p->title, p->title, sizeof p->title); /* all tabs: the drawn bar is fitted */
    if (!ip->have_info) {
        text_lines_add(&tl, "%s", ip->err);
        pane_set_lines(p, &tl);
        return;
    }
    if (ip->tab == HISTORY_TAB) {
        history_tab(t, ip, &tl);
        pane_set_lines(p, &tl);
        return;
    }
    enum procinfo_section s = (enum procinfo_section)(1 << ip->tab);
    if (s == PI_MEMORY) memory_history_line(t, ip, &tl);
    struct procinfo_text_opts o = {ip->show_secrets, ip->env_filter};
    procinfo_text_section(&ip->info, s, &o, &tl);
    if (s == PI_MEMORY) memstats_lines(ip, &tl);
    if (s == PI_ENV)
        text_lines_add(&tl, "(m: %s secret values   \\: filter%s%s)", ip->show_secrets ? "mask" : "show",
                       ip->env_filter[0] ? " = " : "", ip->env_filter);
    pane_set_lines(p, &tl);
}

/* Reads the process again (cheap: /proc only; smaps_rollup for this one process), and has the table read its
 * rates on demand too (disk, network, WAIT%), so its history holds them for as long as the pane is open. */
static void collect(struct tui *t, struct info_pane *ip)
{
    procinfo_free(&ip->info);
    ip->have_info = procinfo_collect(ip->pid, PI_ALL, 0, &ip->info, ip->err, sizeof ip->err) == 0;
    if (!ip->have_info) return;
    thread_cpu(ip, clock_monotonic_seconds());
    proctable_fill_pid(t->mon.table, ip->pid, PROC_NEED_IO | PROC_NEED_SCHED | PROC_NEED_NET);
}

static void tick(struct tui *t, struct pane *p)
{
    collect(t, p->state);
    render(t, p);
}

static unsigned reload(struct tui *t, struct pane *p)
{
    struct info_pane *ip = p->state;
    if (ip->tab == 1) memstats_ask(p);
    tick(t, p);
    return EFFECT_NONE;
}

static unsigned key(struct tui *t, struct pane *p, int k)
{
    struct info_pane *ip = p->state;
    if (k >= '1' && k <= '0' + TABS) ip->tab = k - '1';
    else if (k == (KEY_FUNC_FLAG | KEY_RIGHT) || k == '\t') ip->tab = (ip->tab + 1) % TABS;
    else if (k == (KEY_FUNC_FLAG | KEY_LEFT)) ip->tab = (ip->tab + TABS - 1) % TABS;
    else if (k == 'm') ip->show_secrets = !ip->show_secrets;
    else if (k == '\\') {
        ip->tab = 5;
        pane_start_filter(p, ip->env_filter);
    } else return PANE_KEY_UNHANDLED;
    if (ip->tab == 1 && !ip->rt_asked) memstats_ask(p);
    p->top = 0;
    render(t, p);
    return EFFECT_NONE;
}

static void env_filter_changed(struct tui *t, struct pane *p, const char *text)
{
    struct info_pane *ip = p->state;
    snprintf(ip->env_filter, sizeof ip->env_filter, "%s", text);
    render(t, p);
}

/* What was read of the process is dropped when the pane closes (its runtime request stopped); a new opening
 * starts from scratch. */
static void forget(struct info_pane *ip)
{
    procinfo_free(&ip->info);
    free(ip->prev);
    rt_fields_free(&ip->rtf);
    memset(ip, 0, sizeof *ip);
}

static void closed(struct pane *p, int stopped)
{
    (void)stopped;
    forget(p->state);
}

static void destroy(struct pane *p) { forget(p->state); }

static void ready(struct tui *t, struct pane *p)
{
    if (t->panes.front == p) render(t, p);
}

static enum pane_open_result open_pane(struct tui *t, struct pane *p, const struct proc_row *row)
{
    struct info_pane *ip = p->state;
    if (pane_cancel_job(p) < 0) { /* a request that would not end at the last close: one more bounded wait */
        tui_set_status(t, 1, "the previous runtime request does not end");
        return PANE_REFUSED;
    }
    forget(ip);
    ip->pid = row->tgid;
    const struct provider *rt = provider_runtime_of(ip->pid);
    char why[256];
    if (rt && rt->memstats && rt->probe(ip->pid, why, sizeof why) == 0) ip->runtime = rt;
    provider_request_default(&ip->rq, ip->pid);
    ip->rq.timeout = t->s->agent_timeout;
    snprintf(p->save_name, sizeof p->save_name, "info.%d.txt", ip->pid);
    tick(t, p);
    return PANE_SHOWN;
}

const struct pane_class info_pane_class = {
    .name = "details",
    .keys_help = "1-8/Left/Right tabs|1-8 tabs  m secrets  \\ filter env|\\ filter",
    .state_size = sizeof(struct info_pane),
    .open = open_pane,
    .key = key,
    .reload = reload,
    .tick = tick,
    .filter = env_filter_changed,
    .title_fit = title_fit,
    .wrap_lines = 1, /* Left/Right go through the tabs; a long path or value wraps under itself */
    .ready = ready,
    .closed = closed,
    .destroy = destroy,
};
