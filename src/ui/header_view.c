#include "header_view.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "render/header_text.h"
#include "render/sparkline.h"
#include "util/text.h"
#include "draw.h"
#include "header_graph.h"
#include "watch_pane.h"

#define PRESSURE_LINE_MIN_LINES 30 /* below, a fifth header line would take a line the panes need at 80x24 */

#define BAR_MIN_WIDTH 12
#define CPU_ROWS_MAX 8

/* CPU bars are laid out in columns of up to CPU_ROWS_MAX rows over the left half. */
static void cpu_layout(const struct tui *t, int *ncols, int *nrows)
{
    int ncpu = t->mon.sys->cur.ncpu > 0 ? t->mon.sys->cur.ncpu : 1;
    int half = COLS / 2;
    int maxcols = half / BAR_MIN_WIDTH > 0 ? half / BAR_MIN_WIDTH : 1;
    int cols = (ncpu + CPU_ROWS_MAX - 1) / CPU_ROWS_MAX;
    if (cols > maxcols) cols = maxcols;
    *ncols = cols;
    *nrows = (ncpu + cols - 1) / cols;
}

int header_view_height(const struct tui *t)
{
    int cols, rows;
    cpu_layout(t, &cols, &rows);
    int h = rows + 2; /* + Mem and Swp */
    /* the lines on the right: a fifth for pressure on a tall terminal (else it shares the uptime line) */
    int right = t->mon.sys->pressure[PRESSURE_CPU].known && LINES >= PRESSURE_LINE_MIN_LINES ? 5 : 4;
    if (h < right) h = right;
    if (h > LINES / 2) h = LINES / 2;
    return h;
}

struct segment {
    double percent;
    enum ui_style style;
    char mono_char; /* without colour the parts stay apart by their character */
};

/* Graph mode: the meter's last values as a sparkline (newest at the right), in the first segment's colour, left
 * of its text. */
static void draw_graph(const struct tui *t, int y, int x, int inner, int series, enum ui_style style, int tl)
{
    int gw = inner - tl - 1;
    if (gw > HEADER_GRAPH_LEN) gw = HEADER_GRAPH_LEN;
    if (gw < 1) return;
    double v[HEADER_GRAPH_LEN];
    char line[HEADER_GRAPH_LEN * 4 + 1];
    header_graph_series(&t->graph, series, v, gw);
    sparkline_draw(v, gw, 0, 100, t->scr.glyphs != GLYPHS_UTF8, line, sizeof line);
    draw_text(&t->scr, y, x, gw, line, screen_attr(&t->scr, style));
}

/* [|||||||      12.3%] with coloured segments (or, in graph mode, the meter's recent past); label before it. */
static void draw_bar(const struct tui *t, int y, int x, int w, const char *label, const struct segment *segs, int n,
                     const char *text, int series)
{
    const struct screen *s = &t->scr;
    int lw = (int)strlen(label);
    if (w < lw + 4) return;
    draw_text(s, y, x, lw, label, screen_attr(s, STYLE_LABEL));
    draw_text(s, y, x + lw, 1, "[", screen_attr(s, STYLE_VALUE));
    int inner = w - lw - 2;
    int tl = (int)strlen(text);
    int pos = 0;
    if (t->s->meters_graph) {
        draw_graph(t, y, x + lw + 1, inner, series, segs[0].style, tl);
        n = 0;
    }
    for (int i = 0; i < n; i++) {
        int cells = (int)(segs[i].percent * inner / 100.0 + 0.5);
        if (pos + cells > inner) cells = inner - pos;
        char fill[512];
        char c = s->color ? '|' : segs[i].mono_char;
        if (cells > (int)sizeof fill - 1) cells = (int)sizeof fill - 1;
        memset(fill, c, (size_t)cells);
        fill[cells] = '\0';
        draw_text(s, y, x + lw + 1 + pos, cells, fill, screen_attr(s, segs[i].style));
        pos += cells;
    }
    if (tl <= inner) draw_text(s, y, x + lw + 1 + inner - tl, tl, text, screen_attr(s, STYLE_DIM));
    draw_text(s, y, x + lw + 1 + inner, 1, "]", screen_attr(s, STYLE_VALUE));
}

static void draw_cpus(const struct tui *t, int maxrows, int width)
{
    const struct systotals *st = t->mon.sys;
    int cols, rows;
    cpu_layout(t, &cols, &rows);
    int colw = width / cols;
    int labelw = st->cur.ncpu >= 100 ? 4 : st->cur.ncpu >= 10 ? 3 : 2;
    for (int i = 0; i < st->cur.ncpu; i++) {
        int r = i % rows, c = i / rows;
        if (r >= maxrows) continue;
        const struct cpu_usage *u = &st->per_cpu[i];
        struct segment segs[] = {{u->user, STYLE_BAR_USER, '|'},
                                 {u->system, STYLE_BAR_SYSTEM, '#'},
                                 {u->iowait, STYLE_BAR_IOWAIT, '*'},
                                 {u->steal, STYLE_BAR_STEAL, '!'}};
        char label[16], text[16];
        snprintf(label, sizeof label, "%*d", labelw, i);
        snprintf(text, sizeof text, "%.1f%%", 100.0 - u->idle);
        draw_bar(t, r, c * colw, colw - 1, label, segs, 4, text, i);
    }
}

static void format_size(char *buf, size_t n, unsigned long long bytes) { text_format_kib_scaled(buf, n, bytes / 1024); }

static void draw_memory(const struct tui *t, int y, int width)
{
    const struct mem_totals *m = &t->mon.sys->mem;
    char used[16], total[16], text[48];
    if (y >= 0) {
        double pct = m->total ? 100.0 * (double)m->used / (double)m->total : 0;
        double cache = m->total ? 100.0 * (double)(m->buffers + m->cached) / (double)m->total : 0;
        if (pct + cache > 100) cache = 100 - pct;
        struct segment segs[] = {{pct, STYLE_BAR_MEM, '|'}, {cache, STYLE_BAR_IOWAIT, '*'}};
        format_size(used, sizeof used, m->used);
        format_size(total, sizeof total, m->total);
        snprintf(text, sizeof text, "%s/%s", used, total);
        draw_bar(t, y, 0, width - 1, "Mem", segs, 2, text, HEADER_GRAPH_MEM);
    }
    if (y + 1 < header_view_height(t)) {
        double pct = m->swap_total ? 100.0 * (double)m->swap_used / (double)m->swap_total : 0;
        struct segment segs[] = {{pct, STYLE_BAR_SWAP, '|'}};
        format_size(used, sizeof used, m->swap_used);
        format_size(total, sizeof total, m->swap_total);
        snprintf(text, sizeof text, "%s/%s", used, total);
        draw_bar(t, y + 1, 0, width - 1, "Swp", segs, 1, text, HEADER_GRAPH_SWAP);
    }
}

static void draw_right(const struct tui *t, int x, int w, int height)
{
    const struct screen *s = &t->scr;
    const struct task_counts *c = &t->mon.counts;
    const struct systotals *st = t->mon.sys;
    char up[64];
    int la = screen_attr(s, STYLE_LABEL), va = screen_attr(s, STYLE_VALUE);
    struct { const char *label; char value[200]; } rows[5];
    rows[0].label = "Tasks: ";
    /* At 80 columns the words go before the numbers are cut: "128, 7 running, 120 sleeping", then "128, 7 run". */
    int room = w - (int)strlen(rows[0].label);
    if (snprintf(rows[0].value, sizeof rows[0].value, "%d total, %d running, %d sleeping", c->total, c->running,
                 c->sleeping) > room &&
        snprintf(rows[0].value, sizeof rows[0].value, "%d, %d running, %d sleeping", c->total, c->running,
                 c->sleeping) > room)
        snprintf(rows[0].value, sizeof rows[0].value, "%d, %d run, %d sleep", c->total, c->running, c->sleeping);
    snprintf(rows[1].value, sizeof rows[1].value, "%.2f %.2f %.2f", st->load[0], st->load[1], st->load[2]);
    rows[1].label = "Load average: ";
    header_format_uptime(up, sizeof up, st->uptime_seconds);
    snprintf(rows[2].value, sizeof rows[2].value, "%s", up);
    rows[2].label = "Uptime: ";
    if (snprintf(rows[3].value, sizeof rows[3].value, "%d stopped, %d zombie%s%s", c->stopped, c->zombie,
                 c->threads ? ", threads shown" : "", t->paused ? "  PAUSED" : "") > room)
        snprintf(rows[3].value, sizeof rows[3].value, "%d stop, %d zombie%s%s", c->stopped, c->zombie,
                 c->threads ? ", threads" : "", t->paused ? " PAUSED" : "");
    rows[3].label = "Tasks: ";
    rows[4].label = "Pressure: ";
    /* pressure goes beside the load averages, on kernels that have it; in a four-line header, after the uptime
     * in whole percent when it fits ("PSI cpu 36 io 1 mem 0") */
    static const int with_pressure[] = {0, 1, 4, 2, 3}, without[] = {0, 1, 2, 3};
    int nrows = header_format_pressure(rows[4].value, sizeof rows[4].value, st) ? 5 : 4;
    if (nrows == 5 && height < 5) {
        char both[sizeof rows[2].value];
        int n = snprintf(both, sizeof both, "%s  PSI cpu %.0f io %.0f mem %.0f", rows[2].value,
                         st->pressure[PRESSURE_CPU].some[0], st->pressure[PRESSURE_IO].some[0],
                         st->pressure[PRESSURE_MEMORY].some[0]);
        if (n > 0 && n <= w - (int)strlen(rows[2].label)) memcpy(rows[2].value, both, (size_t)n + 1);
        nrows = 4;
    }
    const int *order = nrows == 5 ? with_pressure : without;
    for (int i = 0; i < nrows && i < height; i++) {
        int used = draw_text(s, i, x, w, rows[order[i]].label, la);
        draw_text(s, i, x + used, w - used, rows[order[i]].value, va);
    }
}

/* What narrows or marks the table right now, on the line between the meters and the titles, as htop shows its
 * filter: "filter: nginx  user: root", and "search: text" while the search prompt is open. */
static void draw_view_state(const struct tui *t, int y)
{
    const struct screen *s = &t->scr;
    const char *search = t->mode == MODE_PROMPT && t->prompt.kind == PROMPT_SEARCH ? t->prompt.text : "";
    const char *user = t->vo.user_set ? users_name(t->mon.users, t->vo.user) : "";
    char watches[128];
    watch_pane_summary(t, watches, sizeof watches);
    struct { const char *label, *value; } items[] = {
        {"filter: ", t->filter}, {"user: ", user}, {"search: ", search}, {"watches: ", watches}};
    int x = 0;
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
        if (!items[i].value || !items[i].value[0] || x >= COLS) continue;
        if (x) x += 2;
        x += draw_text(s, y, x, COLS - x, items[i].label, screen_attr(s, STYLE_LABEL));
        /* Longer than the line: its end is what tells filters apart ("filter: ...build/targets/threads"). */
        const char *v = items[i].value;
        int chars = 0, room = COLS - x;
        for (const char *q = v; *q; q++) chars += (*q & 0xC0) != 0x80;
        if (chars > room && room > 3) {
            x += draw_text(s, y, x, 3, "...", screen_attr(s, STYLE_LABEL));
            for (int skip = chars - (room - 3); skip > 0 && *v; skip -= (*v & 0xC0) != 0x80) {
                v++;
                while ((*v & 0xC0) == 0x80) v++;
            }
        }
        x += draw_text(s, y, x, COLS - x, v, screen_attr(s, STYLE_VALUE) | (int)A_BOLD);
    }
}

void header_view_draw(const struct tui *t)
{
    int h = header_view_height(t);
    int half = COLS / 2;
    int cols, rows;
    cpu_layout(t, &cols, &rows);
    int cpu_rows = rows < h - 2 ? rows : h - 2;
    if (cpu_rows < 1) cpu_rows = h - 1 > 0 ? 1 : 0;
    draw_cpus(t, cpu_rows, half);
    draw_memory(t, cpu_rows < h ? cpu_rows : -1, half);
    draw_right(t, half + 1, COLS - half - 1, h);
    if (t->mode != MODE_PANE && t->table_y - 1 > h) draw_view_state(t, h);
}
