#include "rt_text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/text.h"

/* A line of ours around agent-supplied strings: the whole line is made safe for a terminal. */
__attribute__((format(printf, 2, 3))) static int add_clean(struct text_lines *out, const char *fmt, ...)
{
    char raw[2048], clean[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    text_sanitize_display(clean, sizeof clean, raw, strlen(raw));
    return text_lines_add(out, "%s", clean);
}

static const char *or_dash(const char *s) { return s && *s ? s : "-"; }

/* ---- stacks ---- */

static int same_frames(const struct rt_thread *a, const struct rt_thread *b)
{
    if (a->nframes != b->nframes) return 0;
    for (int i = 0; i < a->nframes; i++) {
        const struct rt_frame *x = &a->frames[i], *y = &b->frames[i];
        if (strcmp(or_dash(x->function), or_dash(y->function)) || strcmp(or_dash(x->file), or_dash(y->file)) ||
            x->line != y->line)
            return 0;
    }
    if (strcmp(or_dash(a->created_by), or_dash(b->created_by)) || strcmp(or_dash(a->wait_how), or_dash(b->wait_how)) ||
        strcmp(or_dash(a->waits_for.address), or_dash(b->waits_for.address)) || a->nholds != b->nholds)
        return 0;
    for (int i = 0; i < a->nholds; i++)
        if (strcmp(or_dash(a->holds[i].address), or_dash(b->holds[i].address))) return 0;
    return 1;
}

/* "<0x000000069ec1a960> (a java.lang.Object)" */
static void lock_text(char *buf, size_t n, const struct rt_lock *l)
{
    if (l->class_name) snprintf(buf, n, "<%s> (a %s)", or_dash(l->address), l->class_name);
    else snprintf(buf, n, "<%s>", or_dash(l->address));
}

/* A Java thread's locks: what it waits for and who holds it, then what it holds. */
static void lock_lines(struct text_lines *out, const struct rt_stack *s, const struct rt_thread *t)
{
    char lock[600];
    if (t->waits_for.address) {
        char holder[400] = "";
        const struct rt_thread *h = t->held_by >= 0 && t->held_by < s->n ? &s->threads[t->held_by] : NULL;
        if (h) snprintf(holder, sizeof holder, ", held by \"%s\" #%lld", or_dash(h->name), h->id);
        else if (strcmp(or_dash(t->wait_how), "parking to wait for") == 0 && !s->lock_holders)
            snprintf(holder, sizeof holder, " (its holder unknown: the heap is too large to ask for it)");
        lock_text(lock, sizeof lock, &t->waits_for);
        add_clean(out, "  %s %s%s", or_dash(t->wait_how), lock, holder);
    }
    for (int i = 0; i < t->nholds; i++) {
        lock_text(lock, sizeof lock, &t->holds[i]);
        add_clean(out, "  holds %s", lock);
    }
}

/* The cycles the JVM found, first: "  "dl-a" waiting to lock monitor <0x..> (a java.lang.Object), held by "dl-b"" */
static void deadlock_lines(struct text_lines *out, const struct rt_stack *s)
{
    for (int i = 0; i < s->ndeadlocks; i++) {
        const struct rt_deadlock *d = &s->deadlocks[i];
        text_lines_add(out, "%s", "");
        add_clean(out, "Deadlock found by the JVM: %d threads", d->n);
        for (int k = 0; k < d->n; k++) {
            char lock[600];
            lock_text(lock, sizeof lock, &d->edges[k].lock);
            add_clean(out, "  \"%s\" %s %s, held by \"%s\"", or_dash(d->edges[k].thread), or_dash(d->edges[k].how),
                      lock, or_dash(d->edges[k].held_by));
        }
    }
}

static void frame_line(struct text_lines *out, const struct rt_frame *f)
{
    if (f->file && f->line > 0) add_clean(out, "  %-40s %s:%d", or_dash(f->function), f->file, f->line);
    else if (f->file) add_clean(out, "  %-40s %s", or_dash(f->function), f->file);
    else add_clean(out, "  %s", or_dash(f->function));
}

/* "12 goroutines: chan receive (10), select (2), waiting 3-12 minutes" or a Java thread's header. */
static void group_header(struct text_lines *out, const struct rt_stack *s, const int *members, int n)
{
    char states[512] = "", ids[256] = "";
    size_t off = 0;
    long long wmin = -1, wmax = -1;
    for (int i = 0; i < n; i++) {
        const struct rt_thread *t = &s->threads[members[i]];
        if (t->wait_seconds >= 0) {
            if (wmin < 0 || t->wait_seconds < wmin) wmin = t->wait_seconds;
            if (t->wait_seconds > wmax) wmax = t->wait_seconds;
        }
        int seen = 0;
        for (int k = 0; k < i && !seen; k++) seen = !strcmp(or_dash(s->threads[members[k]].state), or_dash(t->state));
        if (seen) continue;
        int count = 0;
        for (int k = i; k < n; k++) count += !strcmp(or_dash(s->threads[members[k]].state), or_dash(t->state));
        if (off < sizeof states)
            off += (size_t)snprintf(states + off, sizeof states - off, "%s%s (%d)", off ? ", " : "", or_dash(t->state),
                                    count);
    }
    off = 0;
    for (int i = 0; i < n && i < 8 && off < sizeof ids; i++) {
        const struct rt_thread *t = &s->threads[members[i]];
        if (t->name) off += (size_t)snprintf(ids + off, sizeof ids - off, "%s\"%s\"", i ? " " : "", t->name);
        else off += (size_t)snprintf(ids + off, sizeof ids - off, "%s%lld", i ? " " : "", t->id);
    }
    if (n > 8 && off < sizeof ids) snprintf(ids + off, sizeof ids - off, " ...");
    char wait[64] = "";
    if (wmax >= 60 && wmin == wmax) snprintf(wait, sizeof wait, ", waiting %lld minutes", wmax / 60);
    else if (wmax >= 60) snprintf(wait, sizeof wait, ", waiting %lld-%lld minutes", wmin / 60, wmax / 60);
    const char *what = s->threads[members[0]].name ? "thread" : "goroutine";
    double cpu = 0;
    int cpu_known = 0;
    for (int i = 0; i < n; i++) {
        const struct rt_thread *t = &s->threads[members[i]];
        if (t->name && t->cpu_ms >= 0) cpu += t->cpu_ms, cpu_known = 1;
    }
    char cpu_s[64] = "";
    if (cpu_known) snprintf(cpu_s, sizeof cpu_s, ", cpu %.2f ms%s", cpu, n > 1 ? " in all" : "");
    if (n == 1) {
        const struct rt_thread *t = &s->threads[members[0]];
        char extra[64] = "";
        if (t->os_tid) snprintf(extra, sizeof extra, " (OS thread %d)", t->os_tid);
        if (cpu_known && t->elapsed_s >= 0)
            snprintf(cpu_s, sizeof cpu_s, ", cpu %.2f ms in %.2f s", t->cpu_ms, t->elapsed_s);
        add_clean(out, "%s%s %s%s: %s%s%s", t->daemon ? "daemon " : "", what, ids, extra, states, wait, cpu_s);
    } else {
        add_clean(out, "%d %ss: %s  %s%s%s", n, what, ids, states, wait, cpu_s);
    }
}

int rt_text_stack(const struct rt_stack *s, int grouped, struct text_lines *out)
{
    int *done = calloc((size_t)(s->n ? s->n : 1), sizeof *done), *members = calloc((size_t)(s->n ? s->n : 1), sizeof *members);
    if (!done || !members) {
        free(done);
        free(members);
        return -1;
    }
    int goroutines = s->n > 0 && !s->threads[0].name, distinct = 0;
    for (int i = 0; i < s->n; i++) {
        int first = 1;
        for (int k = 0; k < i && first; k++) first = !same_frames(&s->threads[i], &s->threads[k]);
        distinct += first;
    }
    add_clean(out, "%s of %d, from %s: %d %s, %d distinct stacks, %.1f ms", goroutines ? "Goroutines" : "Threads",
              s->pid, s->provider, s->n, goroutines ? "goroutines" : "threads", distinct, s->ms);
    deadlock_lines(out, s);
    for (int i = 0; i < s->n; i++) {
        if (done[i]) continue;
        int n = 0;
        for (int k = i; k < s->n; k++)
            if (!done[k] && (k == i || (grouped && same_frames(&s->threads[i], &s->threads[k])))) {
                members[n++] = k;
                done[k] = 1;
            }
        text_lines_add(out, "%s", "");
        group_header(out, s, members, n);
        const struct rt_thread *t = &s->threads[i];
        lock_lines(out, s, t);
        for (int f = 0; f < t->nframes; f++) frame_line(out, &t->frames[f]);
        if (t->created_by) add_clean(out, "  created by %s", t->created_by);
        if (t->nframes == 0 && !t->created_by) text_lines_add(out, "  (no Java frames)");
    }
    free(done);
    free(members);
    return 0;
}

/* ---- named values ---- */

static void value_text(const struct rt_field *f, char *buf, size_t n)
{
    char human[32];
    switch (f->unit) {
    case RT_BYTES:
        text_format_bytes(human, sizeof human, (long long)f->u);
        if (f->u >= 1024) snprintf(buf, n, "%-12s (%llu bytes)", human, f->u);
        else snprintf(buf, n, "%s", human);
        break;
    case RT_NANOSECONDS:
        if (f->u >= 1000000ULL) snprintf(buf, n, "%.3f ms", (double)f->u / 1e6);
        else snprintf(buf, n, "%llu ns", f->u);
        break;
    case RT_TIME: {
        time_t secs = (time_t)(f->u / 1000000000ULL);
        struct tm tm;
        char when[40];
        if (f->u && gmtime_r(&secs, &tm)) {
            strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
            snprintf(buf, n, "%s.%03lluZ", when, (f->u / 1000000ULL) % 1000);
        } else {
            snprintf(buf, n, "-");
        }
        break;
    }
    case RT_BOOL: snprintf(buf, n, "%s", f->u ? "true" : "false"); break;
    case RT_RATIO: snprintf(buf, n, "%g", f->is_double ? f->d : (double)f->u); break;
    case RT_TEXT: snprintf(buf, n, "%s", or_dash(f->text)); break;
    default: snprintf(buf, n, "%llu", f->u);
    }
}

int rt_text_fields(const struct rt_fields *fs, struct text_lines *out)
{
    const char *section = NULL;
    for (int i = 0; i < fs->n; i++) {
        const struct rt_field *f = &fs->f[i];
        if (!section || strcmp(section, f->section)) {
            section = f->section;
            add_clean(out, "%s (%s):", section, fs->provider);
        }
        char value[256];
        value_text(f, value, sizeof value);
        add_clean(out, "  %-22s %s", f->label, value);
    }
    return 0;
}

int rt_text_gc(const struct rt_gc *g, struct text_lines *out)
{
    char before[32], after[32];
    text_format_bytes(before, sizeof before, g->heap_before);
    text_format_bytes(after, sizeof after, g->heap_after);
    if (g->heap_before >= 0 || g->heap_after >= 0)
        add_clean(out, "GC by %s in %.1f ms: heap in use %s -> %s", g->provider, g->ms, before, after);
    else
        add_clean(out, "GC by %s in %.1f ms", g->provider, g->ms);
    if (g->message && *g->message) add_clean(out, "%s", g->message);
    return 0;
}

/* ---- the heap table ---- */

static void signed_bytes(char *buf, size_t n, long long v) /* "+1.5 MiB", "-12 B", "0" */
{
    char b[24];
    text_format_bytes(b, sizeof b, v < 0 ? -v : v);
    snprintf(buf, n, "%s%s", v < 0 ? "-" : v > 0 ? "+" : "", v ? b : "0");
}

int rt_text_heap(const struct heap_view *v, int limit, int with_stacks, struct text_lines *out)
{
    const struct rt_heap *h = v->cur;
    char total[32], when[32];
    text_format_bytes(total, sizeof total, h->total_bytes);
    time_t t = (time_t)h->taken_at;
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(when, sizeof when, "%H:%M:%S", &tm);
    add_clean(out, "Heap of %d, %s from %s at %s: %lld objects, %s in %d rows", h->pid, h->kind, h->provider, when,
              h->total_count, total, h->n);
    if (v->first)
        add_clean(out, "changes since the first snapshot %.1f minutes ago%s; sorted by growth", v->minutes,
                  v->prev && v->prev != v->first ? " and since the previous one" : "");
    if (h->saved_path) add_clean(out, "saved as %s", h->saved_path);
    text_lines_add(out, "%s", "");
    int sites = h->n > 0 && h->rows[0].alloc_bytes >= 0;
    if (v->first)
        text_lines_add(out, "%12s %12s %12s %10s %12s %12s  %s", "bytes", "+bytes", "+bytes/min", "count", "+count",
                       "+bytes prev", sites ? "allocation site" : "class");
    else if (sites)
        text_lines_add(out, "%12s %10s %12s %10s  %s", "in use", "objects", "allocated", "objects", "allocation site");
    else
        text_lines_add(out, "%12s %10s  %s", "bytes", "count", "class");
    int n = limit > 0 && limit < v->n ? limit : v->n;
    for (int i = 0; i < n; i++) {
        const struct heap_view_row *r = &v->rows[i];
        char b[32], d[40], m[40], p[40];
        text_format_bytes(b, sizeof b, r->row->bytes);
        if (v->first) {
            signed_bytes(d, sizeof d, r->since_first.bytes);
            signed_bytes(m, sizeof m, (long long)r->bytes_per_minute);
            signed_bytes(p, sizeof p, r->since_prev.bytes);
            add_clean(out, "%12s %12s %12s %10lld %+12lld %12s  %s", b, d, m, r->row->count, r->since_first.count,
                      v->prev ? p : "-", or_dash(r->row->name));
        } else if (sites) {
            char a[32];
            text_format_bytes(a, sizeof a, r->row->alloc_bytes);
            add_clean(out, "%12s %10lld %12s %10lld  %s", b, r->row->count, a, r->row->alloc_count,
                      or_dash(r->row->name));
        } else {
            add_clean(out, "%12s %10lld  %s", b, r->row->count, or_dash(r->row->name));
        }
        for (int f = 0; with_stacks && f < r->row->nstack; f++) {
            const struct rt_frame *fr = &r->row->stack[f];
            if (fr->file && fr->line > 0) add_clean(out, "%14s %-40s %s:%d", "", or_dash(fr->function), fr->file, fr->line);
            else add_clean(out, "%14s %s", "", or_dash(fr->function));
        }
    }
    if (n < v->n) text_lines_add(out, "(%d more rows; --json has them all)", v->n - n);
    return 0;
}

/* ---- profiles and files ---- */

static int utf8_cols(const char *s) /* one column per code point of sanitized text */
{
    int n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

int rt_text_profile(const struct rt_profile *p, int limit, struct text_lines *out)
{
    add_clean(out, "CPU profile from %s: %.1f s%s%s", p->provider, p->seconds, p->saved_path ? ", saved as " : "",
              p->saved_path ? p->saved_path : "");
    if (p->n == 0) {
        if (p->note[0]) add_clean(out, "%s", p->note);
        if (!strcmp(p->format, "jfr"))
            add_clean(out, "(a JFR recording: open it with `jfr print --events jdk.ExecutionSample %s` or JDK Mission Control)",
                      or_dash(p->saved_path));
        return 0;
    }
    if (!strcmp(p->format, "pprof") && p->saved_path) add_clean(out, "(go tool pprof -top %s)", p->saved_path);
    if (!strcmp(p->format, "jfr") && p->saved_path)
        add_clean(out, "(JFR's execution samples of threads in Java code; jfr print --events jdk.ExecutionSample %s)",
                  p->saved_path);
    text_lines_add(out, "%s", "");
    int n = limit > 0 && limit < p->n ? limit : p->n;
    int ns = !strcmp(p->unit, "nanoseconds");
    double tot = p->total > 0 ? (double)p->total : 1;
    /* As `go tool pprof -top`: flat, flat%, sum%, cum, cum%, the function (and its file); each column as wide as
     * its widest cell, so that every one starts at the same place on every line. */
    static const char *const head[5] = {"flat", "flat%", "sum%", "cum", "cum%"};
    int w[5] = {10, 7, 7, 10, 7}, fw = 8;
    char(*cells)[5][32] = calloc((size_t)(n ? n : 1), sizeof *cells);
    char **names = calloc((size_t)(n ? n : 1), sizeof *names);
    int rc = cells && names ? 0 : -ENOMEM;
    long long sum = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const struct rt_profile_row *r = &p->rows[i];
        char *c[5] = {cells[i][0], cells[i][1], cells[i][2], cells[i][3], cells[i][4]};
        sum += r->flat;
        if (ns) {
            snprintf(c[0], 32, "%.2fs", (double)r->flat / 1e9);
            snprintf(c[3], 32, "%.2fs", (double)r->cum / 1e9);
        } else {
            snprintf(c[0], 32, "%lld", r->flat);
            snprintf(c[3], 32, "%lld", r->cum);
        }
        snprintf(c[1], 32, "%.2f%%", 100.0 * (double)r->flat / tot);
        snprintf(c[2], 32, "%.2f%%", 100.0 * (double)sum / tot);
        snprintf(c[4], 32, "%.2f%%", 100.0 * (double)r->cum / tot);
        for (int k = 0; k < 5; k++)
            if ((int)strlen(c[k]) > w[k]) w[k] = (int)strlen(c[k]);
        const char *fn = or_dash(r->function);
        size_t len = strlen(fn);
        if (!(names[i] = malloc(len + 1))) rc = -ENOMEM;
        else text_sanitize_display(names[i], len + 1, fn, len);
        if (rc == 0 && utf8_cols(names[i]) > fw) fw = utf8_cols(names[i]);
    }
    if (rc == 0) {
        text_lines_add(out, "%*s %*s %*s %*s %*s  %s", w[0], head[0], w[1], head[1], w[2], head[2], w[3], head[3], w[4],
                       head[4], "function");
        for (int i = 0; i < n; i++) {
            const struct rt_profile_row *r = &p->rows[i];
            add_clean(out, "%*s %*s %*s %*s %*s  %s%*s%s%s", w[0], cells[i][0], w[1], cells[i][1], w[2], cells[i][2],
                      w[3], cells[i][3], w[4], cells[i][4], names[i], r->file ? fw - utf8_cols(names[i]) : 0, "",
                      r->file ? "  " : "", r->file ? r->file : "");
        }
    }
    for (int i = 0; i < n && names; i++) free(names[i]);
    free(names);
    free(cells);
    if (rc < 0) return rc;
    if (n < p->n) text_lines_add(out, "(%d more functions)", p->n - n);
    return 0;
}

int rt_text_file(const struct rt_file *f, struct text_lines *out)
{
    char size[32];
    text_format_bytes(size, sizeof size, (long long)f->bytes);
    add_clean(out, "%s (%s, written by %s in %.0f ms)", or_dash(f->path), size, f->provider, f->ms);
    return 0;
}
