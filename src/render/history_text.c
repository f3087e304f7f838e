#include "history_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"
#include "sparkline.h"

#define LABEL_WIDTH 9

static int is_percent(enum history_field f) { return f == HIST_CPU || f == HIST_WAIT; }

void history_text_value(enum history_field f, double v, char *buf, size_t n)
{
    if (isnan(v)) {
        snprintf(buf, n, "-");
    } else if (is_percent(f)) {
        snprintf(buf, n, "%.1f%%", v);
    } else {
        char b[32];
        text_format_bytes(b, sizeof b, (long long)llround(v));
        snprintf(buf, n, "%s%s", b, f == HIST_RES ? "" : "/s");
    }
}

/* The columns the line draws: one a sample while they fit, else the time kept spread over width (each column the
 * peak of its span, so a one-second burst stays visible). */
static int field_columns(const struct history_point *p, size_t n, enum history_field f, int width, double *col)
{
    if (n <= (size_t)width) {
        for (size_t i = 0; i < n; i++) col[i] = p[i].v[f];
        return (int)n;
    }
    double step = (p[n - 1].t - p[0].t) / (double)(n - 1);
    sparkline_buckets(p, n, f, p[0].t, p[n - 1].t + step, col, width);
    return width;
}

/* The latest, lowest and highest known values of f over every point (not the squeezed columns); 0 if none. */
static int field_stats(const struct history_point *p, size_t n, enum history_field f, double *last, double *lo,
                       double *hi)
{
    int known = 0;
    for (size_t i = 0; i < n; i++) {
        double v = p[i].v[f];
        if (isnan(v)) continue;
        if (!known || v < *lo) *lo = v;
        if (!known || v > *hi) *hi = v;
        *last = v;
        known = 1;
    }
    return known;
}

int history_text_stats(const struct history_point *p, size_t n, enum history_field f, char *out, size_t outsz)
{
    double last = 0, lo = 0, hi = 0;
    if (!field_stats(p, n, f, &last, &lo, &hi)) return 0;
    char l[32], mn[32], mx[32];
    history_text_value(f, last, l, sizeof l);
    history_text_value(f, lo, mn, sizeof mn);
    history_text_value(f, hi, mx, sizeof mx);
    snprintf(out, outsz, "last %s  min %s  max %s", l, mn, mx);
    return 1;
}

int history_text_field(const struct history_point *p, size_t n, enum history_field f, int width, int ascii,
                       char *out, size_t outsz)
{
    double last = 0, lo = 0, hi = 0;
    char stats[128];
    if (!field_stats(p, n, f, &last, &lo, &hi) || !history_text_stats(p, n, f, stats, sizeof stats)) return 0;
    if (width < 1) width = 1;
    double *col = malloc((size_t)width * sizeof *col);
    size_t spark_size = (size_t)width * 4 + 1;
    char *spark = malloc(spark_size);
    if (col && spark) {
        int ncol = field_columns(p, n, f, width, col);
        /* Percents from 0 to at least one full CPU (a busy/idle pattern reads the same at any level); rates from 0
         * (a trickle stays low); RES from its lowest to its highest, so that a slow leak shows as a climb. */
        double bottom = f == HIST_RES ? lo : 0, top = is_percent(f) && hi < 100.0 ? 100.0 : hi;
        sparkline_draw(col, ncol, bottom, top > bottom ? top : bottom + 1, ascii, spark, spark_size);
    }
    snprintf(out, outsz, "%s  %s", col && spark ? spark : "", stats); /* every field has as many columns */
    free(spark);
    free(col);
    return 1;
}

static void format_span(double seconds, char *buf, size_t n)
{
    long s = lround(seconds);
    if (s >= 60) snprintf(buf, n, "%ldm%02lds", s / 60, s % 60);
    else snprintf(buf, n, "%lds", s);
}

void history_text(const struct history_point *p, size_t n, double now, int width, int ascii, struct text_lines *tl)
{
    if (!n) {
        text_lines_add(tl, "no sample yet: the history starts at the next refresh");
        return;
    }
    char span[32], step[32] = "";
    format_span(now - p[0].t, span, sizeof span);
    if (n > 1) snprintf(step, sizeof step, ", one every %.1f s", (p[n - 1].t - p[0].t) / (double)(n - 1));
    text_lines_add(tl, "The last %s: %zu samples%s (up to %d kept)", span, n, step, HISTORY_SLOTS);
    text_lines_add(tl, "%s", "");
    /* The sparklines share one width (a column is the same moment on every line), what the longest stats leave. */
    char stats[HIST_FIELDS][128];
    int known[HIST_FIELDS], stats_width = 0;
    for (int f = 0; f < HIST_FIELDS; f++) {
        known[f] = history_text_stats(p, n, (enum history_field)f, stats[f], sizeof stats[f]);
        int w = known[f] ? (int)strlen(stats[f]) : 0;
        if (w > stats_width) stats_width = w;
    }
    int spark_width = width - 1 - LABEL_WIDTH - 2 - 2 - stats_width;
    if (spark_width < 10) spark_width = 10;
    size_t outsz = (size_t)spark_width * 4 + 160;
    char *line = malloc(outsz);
    for (int f = 0; line && f < HIST_FIELDS; f++) {
        const char *label = history_field_label((enum history_field)f);
        if (known[f] && history_text_field(p, n, (enum history_field)f, spark_width, ascii, line, outsz))
            text_lines_add(tl, "%-*s  %s", LABEL_WIDTH, label, line);
        else
            text_lines_add(tl, "%-*s  (not read yet)", LABEL_WIDTH, label);
    }
    free(line);
    text_lines_add(tl, "%s", "");
    text_lines_add(tl, "CPU%% and RES are kept for every process at each refresh; disk, network and WAIT%% for the");
    text_lines_add(tl, "refreshes that read them: while their column is shown or this pane is open.");
}
