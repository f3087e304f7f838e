#include "history_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"
#include "sparkline.h"

#define LABEL_WIDTH 9

static int is_percent(enum history_field f) { return f == HIST_CPU || f == HIST_WAIT; }

/* A value of field f as shown ("12.5%", "1.2 MiB", "3.4 KiB/s"). */
static void value_text(enum history_field f, double v, char *buf, size_t n)
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

/* What a field's line says beside its sparkline, and the range that scales it. */
struct field_summary {
    int known; /* some point read the field */
    double lo, hi;
    char stats[160]; /* "last X  min Y  max Z" */
};

static void summarize(const struct history_point *p, size_t n, enum history_field f, struct field_summary *sum)
{
    double last = 0;
    sum->lo = sum->hi = 0;
    sum->known = field_stats(p, n, f, &last, &sum->lo, &sum->hi);
    if (!sum->known) return;
    char l[40], mn[40], mx[40]; /* a size (up to 31 bytes) and "/s" */
    value_text(f, last, l, sizeof l);
    value_text(f, sum->lo, mn, sizeof mn);
    value_text(f, sum->hi, mx, sizeof mx);
    snprintf(sum->stats, sizeof sum->stats, "last %s  min %s  max %s", l, mn, mx);
}

/* The field's sparkline over width columns, then its summary. */
static void field_line(const struct history_point *p, size_t n, enum history_field f, int width, int ascii,
                       const struct field_summary *sum, char *out, size_t outsz)
{
    if (width < 1) width = 1;
    double *col = malloc((size_t)width * sizeof *col);
    size_t spark_size = (size_t)width * 4 + 1;
    char *spark = malloc(spark_size);
    if (col && spark) {
        int ncol = field_columns(p, n, f, width, col);
        /* Percents from 0 to at least one full CPU (a busy/idle pattern reads the same at any level); rates from 0
         * (a trickle stays low); RES from its lowest to its highest, so that a slow leak shows as a climb. */
        double bottom = f == HIST_RES ? sum->lo : 0, top = is_percent(f) && sum->hi < 100.0 ? 100.0 : sum->hi;
        sparkline_draw(col, ncol, bottom, top > bottom ? top : bottom + 1, ascii, spark, spark_size);
    }
    snprintf(out, outsz, "%s  %s", col && spark ? spark : "", sum->stats); /* every field has as many columns */
    free(spark);
    free(col);
}

int history_text_field(const struct history_point *p, size_t n, enum history_field f, int width, int ascii,
                       char *out, size_t outsz)
{
    struct field_summary sum;
    summarize(p, n, f, &sum);
    if (sum.known) field_line(p, n, f, width, ascii, &sum, out, outsz);
    return sum.known;
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
    struct field_summary sum[HIST_FIELDS];
    int stats_width = 0;
    for (int f = 0; f < HIST_FIELDS; f++) {
        summarize(p, n, (enum history_field)f, &sum[f]);
        int w = sum[f].known ? (int)strlen(sum[f].stats) : 0;
        if (w > stats_width) stats_width = w;
    }
    int spark_width = width - 1 - LABEL_WIDTH - 2 - 2 - stats_width;
    if (spark_width < 10) spark_width = 10;
    size_t outsz = (size_t)spark_width * 4 + sizeof sum[0].stats + 4;
    char *line = malloc(outsz);
    for (int f = 0; line && f < HIST_FIELDS; f++) {
        const char *label = history_field_label((enum history_field)f);
        if (sum[f].known) {
            field_line(p, n, (enum history_field)f, spark_width, ascii, &sum[f], line, outsz);
            text_lines_add(tl, "%-*s  %s", LABEL_WIDTH, label, line);
        } else {
            text_lines_add(tl, "%-*s  (not read yet)", LABEL_WIDTH, label);
        }
    }
    free(line);
    text_lines_add(tl, "%s", "");
    text_lines_add(tl, "CPU%% and RES are kept for every process at each refresh; disk, network and WAIT%% for the");
    text_lines_add(tl, "refreshes that read them: while their column is shown or this pane is open.");
}
