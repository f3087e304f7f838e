#include "cpu_top.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"

/* ---- function identity ---- */

static char *frame_name(const struct cpu_frame *f)
{
    char *s = NULL;
    int rc;
    if (f->function) return strdup(f->function);
    if (f->module) rc = asprintf(&s, "%s+0x%llx", f->module, f->offset);
    else rc = asprintf(&s, "0x%llx", f->pc);
    return rc < 0 ? NULL : s;
}

static char *sanitized(const char *raw)
{
    size_t n = strlen(raw);
    char *s = malloc(n + 1); /* the display form is never longer: a byte stays or becomes '?' */
    if (s) text_sanitize_display(s, n + 1, raw, n);
    return s;
}

static uint64_t fnv_add(uint64_t h, const char *s)
{
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

static uint64_t key_hash(const char *name, const char *module)
{
    uint64_t h = fnv_add(0xcbf29ce484222325ULL, name);
    h = (h ^ 0x1ff) * 0x100000001b3ULL; /* no byte of a C string: keeps ("ab","c") apart from ("a","bc") */
    return module ? fnv_add(h, module) : h ^ 0x2ff;
}

static int same_module(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

void cpu_top_index_free(struct cpu_top_index *x)
{
    for (int i = 0; i < x->nfns; i++) {
        free(x->fns[i].name);
        free(x->fns[i].shown);
    }
    free(x->fns);
    free(x->of_frame);
    memset(x, 0, sizeof *x);
}

int cpu_top_index_build(const struct cpu_report *r, struct cpu_top_index *out)
{
    memset(out, 0, sizeof *out);
    size_t n = r->nframes > 0 ? (size_t)r->nframes : 0, cap = 16;
    while (cap < 2 * n) cap *= 2;
    int *slot = malloc(cap * sizeof *slot); /* open addressing, function index or -1 */
    out->fns = calloc(n ? n : 1, sizeof *out->fns);
    out->of_frame = malloc((n ? n : 1) * sizeof *out->of_frame);
    if (!slot || !out->fns || !out->of_frame) goto nomem;
    memset(slot, 0xff, cap * sizeof *slot);
    for (size_t i = 0; i < n; i++) {
        const struct cpu_frame *f = &r->frames[i];
        char *name = frame_name(f);
        if (!name) goto nomem;
        size_t h = (size_t)key_hash(name, f->module) & (cap - 1);
        while (slot[h] >= 0 &&
               !(strcmp(out->fns[slot[h]].name, name) == 0 && same_module(out->fns[slot[h]].module, f->module)))
            h = (h + 1) & (cap - 1);
        if (slot[h] >= 0) {
            free(name);
            out->of_frame[i] = slot[h];
            continue;
        }
        struct cpu_fn *fn = &out->fns[out->nfns];
        fn->name = name;
        fn->module = f->module;
        if (!(fn->shown = sanitized(name))) {
            free(name);
            goto nomem;
        }
        out->of_frame[i] = slot[h] = out->nfns++;
    }
    free(slot);
    return 0;
nomem:
    free(slot);
    cpu_top_index_free(out);
    return -ENOMEM;
}

int cpu_top_index_at(const struct cpu_top_index *x, const struct cpu_report *r, const struct cpu_stack *s, int k)
{
    if (k < 0 || k >= s->nframes) return -1;
    int fi = s->frames[k];
    return fi >= 0 && fi < r->nframes ? x->of_frame[fi] : -1;
}

long long cpu_top_stack_ns(const struct cpu_report *r, const struct cpu_stack *s)
{
    return s->cpu_ns > 0 ? s->cpu_ns : s->samples * r->period_ns;
}

static int stack_passes(const struct cpu_stack *s, int tid) { return s->samples > 0 && (!tid || s->tid == tid); }

/* ---- the table ---- */

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static int cmp_names(const char *an, const char *am, const char *bn, const char *bm)
{
    int c = strcmp(an, bn);
    if (c) return c;
    if (!am || !bm) return (am != NULL) - (bm != NULL);
    return strcmp(am, bm);
}

static int cmp_ll_desc(long long a, long long b) { return (a < b) - (a > b); }

static int row_cmp(const void *pa, const void *pb, void *arg)
{
    const struct cpu_top_row *a = pa, *b = pb;
    enum cpu_top_sort sort = *(const enum cpu_top_sort *)arg;
    int c = 0;
    if (sort == CPU_TOP_BY_OWN) c = cmp_ll_desc(a->own, b->own) ?: cmp_ll_desc(a->total, b->total);
    else if (sort == CPU_TOP_BY_TOTAL) c = cmp_ll_desc(a->total, b->total) ?: cmp_ll_desc(a->own, b->own);
    return c ?: cmp_names(a->name, a->module, b->name, b->module);
}

void cpu_top_free(struct cpu_top *t)
{
    for (int i = 0; i < t->n; i++) {
        free(t->rows[i].name);
        free(t->rows[i].module);
    }
    free(t->rows);
    memset(t, 0, sizeof *t);
}

static void copy_header(const struct cpu_report *r, int tid, struct cpu_top *t)
{
    t->pid = r->pid;
    t->hz = r->hz;
    t->tid = tid;
    snprintf(t->comm, sizeof t->comm, "%s", r->comm);
    snprintf(t->method, sizeof t->method, "%s", r->method);
    snprintf(t->method_why, sizeof t->method_why, "%s", r->method_why);
    t->seconds = r->seconds;
    t->target_cost_percent = r->target_cost_percent;
    t->all_samples = r->samples;
    t->lost = r->lost;
    for (int i = 0; i < r->nthreads; i++)
        if (tid && r->threads[i].tid == tid) snprintf(t->thread_name, sizeof t->thread_name, "%s", r->threads[i].name);
}

int cpu_top_build(const struct cpu_report *r, const struct cpu_top_opts *o, struct cpu_top *out)
{
    if (!r || !o || !out) return -EINVAL;
    memset(out, 0, sizeof *out);
    copy_header(r, o->tid, out);
    struct cpu_top_index x;
    if (cpu_top_index_build(r, &x) < 0) return -ENOMEM;
    size_t n = x.nfns ? (size_t)x.nfns : 1;
    struct cpu_top_row *acc = calloc(n, sizeof *acc);
    int *stamp = calloc(n, sizeof *stamp); /* the last stack (index + 1) that counted the function's total */
    if (!acc || !stamp) goto nomem;
    for (int si = 0; si < r->nstacks; si++) {
        const struct cpu_stack *s = &r->stacks[si];
        if (!stack_passes(s, o->tid)) continue;
        long long ns = cpu_top_stack_ns(r, s);
        out->samples += s->samples;
        out->cpu_ns += ns;
        int f0 = cpu_top_index_at(&x, r, s, 0);
        if (f0 >= 0) {
            acc[f0].own += s->samples;
            acc[f0].own_ns += ns;
        }
        for (int k = 0; k < s->nframes; k++) {
            int f = cpu_top_index_at(&x, r, s, k);
            if (f < 0 || stamp[f] == si + 1) continue; /* recursion: once per stack */
            stamp[f] = si + 1;
            acc[f].total += s->samples;
            acc[f].total_ns += ns;
        }
    }
    /* Compact to the functions that got samples, then sort and cut. */
    int m = 0;
    for (int f = 0; f < x.nfns; f++) {
        if (!acc[f].total) continue;
        acc[m] = acc[f];
        acc[m].name = x.fns[f].name; /* borrowed until the copies below */
        acc[m].module = (char *)x.fns[f].module;
        m++;
    }
    enum cpu_top_sort sort = o->sort;
    qsort_r(acc, (size_t)m, sizeof *acc, row_cmp, &sort);
    out->nfunctions = m;
    int keep = o->limit > 0 && o->limit < m ? o->limit : m;
    for (int i = 0; i < keep; i++) {
        char *name = strdup(acc[i].name), *module = dup_or_null(acc[i].module);
        if (!name || (acc[i].module && !module)) {
            free(name);
            free(module);
            goto nomem;
        }
        acc[i].name = name;
        acc[i].module = module;
        out->n++;
    }
    out->rows = acc;
    free(stamp);
    cpu_top_index_free(&x);
    return 0;
nomem:
    out->rows = acc;
    cpu_top_free(out);
    free(stamp);
    cpu_top_index_free(&x);
    return -ENOMEM;
}

/* ---- text ---- */

/* Columns of valid UTF-8 text, one per code point (wide characters are rare in symbol names). */
static int text_cols(const char *s)
{
    int n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Untrusted raw bytes as a malloc'd cell of exactly cols columns (clipped with "..", padded with spaces), or
 * unclipped and unpadded when cols <= 0. */
static char *cell(const char *raw, int cols)
{
    size_t n = strlen(raw);
    size_t cap = n + (cols > 0 ? (size_t)cols : 0) + 4;
    char *s = malloc(cap);
    if (!s) return NULL;
    text_sanitize_display(s, cap, raw, n);
    if (cols <= 0) return s;
    int have = text_cols(s);
    if (have > cols) {
        int keep = cols >= 3 ? cols - 2 : cols, seen = 0;
        char *p = s;
        for (; *p; p++) {
            if (((unsigned char)*p & 0xC0) != 0x80 && seen++ == keep) break;
        }
        *p = '\0';
        if (cols >= 3) strcat(s, "..");
        have = cols;
    }
    size_t len = strlen(s);
    memset(s + len, ' ', (size_t)(cols - have));
    s[len + (size_t)(cols - have)] = '\0';
    return s;
}

static void fmt_ns(char *buf, size_t n, long long ns)
{
    if (ns <= 0) snprintf(buf, n, "0");
    else if (ns < 1000000) snprintf(buf, n, "%.0fus", ns / 1e3);
    else if (ns < 1000000000) snprintf(buf, n, "%.0fms", ns / 1e6);
    else snprintf(buf, n, "%.2fs", ns / 1e9);
}

static double pct(long long part, long long whole) { return whole > 0 ? 100.0 * (double)part / (double)whole : 0; }

static int header_line(const struct cpu_top *t, struct text_lines *out)
{
    char comm[64], why[256], cost[64] = "", thread[160] = "", method[16];
    text_sanitize_display(comm, sizeof comm, t->comm, strnlen(t->comm, sizeof t->comm));
    text_sanitize_display(why, sizeof why, t->method_why, strnlen(t->method_why, sizeof t->method_why));
    text_sanitize_display(method, sizeof method, t->method, strnlen(t->method, sizeof t->method));
    if (t->target_cost_percent >= 0)
        snprintf(cost, sizeof cost, ", target slowed by %.1f%%", t->target_cost_percent);
    if (t->tid) {
        char tname[64];
        text_sanitize_display(tname, sizeof tname, t->thread_name, strnlen(t->thread_name, sizeof t->thread_name));
        snprintf(thread, sizeof thread, "; thread %d \"%s\": %lld samples", t->tid, tname, t->samples);
    }
    return text_lines_add(out, "PID %d \"%s\": %lld samples in %.2f s at %d Hz (%s%s%s), %lld lost%s%s", t->pid, comm,
                          t->all_samples, t->seconds, t->hz, method[0] ? method : "?", why[0] ? ": " : "", why,
                          t->lost, cost, thread);
}

/* Function and module column widths for a line of width columns (0: unclipped). */
static void name_widths(int width, int fixed, int modmax, int *fnw, int *modw)
{
    *fnw = *modw = 0;
    if (width <= 0) return;
    *modw = modmax < 24 ? modmax : 24;
    if (*modw < 6) *modw = 6;
    *fnw = width - fixed - 2 - *modw;
    if (*fnw < 12) *fnw = 12;
}

/* The numbers of a row, as pprof -top has them: flat, flat%, sum%, cum, cum%. */
enum { TOP_FLAT, TOP_FLAT_PCT, TOP_SUM_PCT, TOP_CUM, TOP_CUM_PCT, TOP_NUMS };

static void top_numbers(const struct cpu_top *t, int i, long long *sum, char v[TOP_NUMS][32])
{
    const struct cpu_top_row *row = &t->rows[i];
    *sum += row->own;
    fmt_ns(v[TOP_FLAT], sizeof v[0], row->own_ns);
    snprintf(v[TOP_FLAT_PCT], sizeof v[0], "%.1f%%", pct(row->own, t->samples));
    snprintf(v[TOP_SUM_PCT], sizeof v[0], "%.1f%%", pct(*sum, t->samples));
    fmt_ns(v[TOP_CUM], sizeof v[0], row->total_ns);
    snprintf(v[TOP_CUM_PCT], sizeof v[0], "%.1f%%", pct(row->total, t->samples));
}

int cpu_top_text(const struct cpu_top *t, int width, struct text_lines *out)
{
    if (header_line(t, out) < 0) return -ENOMEM;
    static const char *const head[TOP_NUMS] = {"flat", "flat%", "sum%", "cum", "cum%"};
    /* Each column as wide as its widest cell (at least what a live table usually needs, so that it does not
     * shift at every refresh); the function column as wide as the longest name when nothing clips it. */
    int w[TOP_NUMS] = {7, 6, 6, 7, 6}, modmax = 6, namemax = 8;
    long long sum = 0;
    for (int i = 0; i < t->n; i++) {
        char v[TOP_NUMS][32];
        top_numbers(t, i, &sum, v);
        for (int c = 0; c < TOP_NUMS; c++)
            if ((int)strlen(v[c]) > w[c]) w[c] = (int)strlen(v[c]);
        if (t->rows[i].module && (int)strlen(t->rows[i].module) > modmax) modmax = (int)strlen(t->rows[i].module);
        char *shown = cell(t->rows[i].name, 0);
        if (!shown) return -ENOMEM;
        if (text_cols(shown) > namemax) namemax = text_cols(shown);
        free(shown);
    }
    int fixed = 2, fnw, modw;
    for (int c = 0; c < TOP_NUMS; c++) fixed += w[c] + (c ? 1 : 0);
    name_widths(width, fixed, modmax, &fnw, &modw);
    if (width <= 0) fnw = namemax;
    char *fh = cell("function", fnw), *mh = cell("module", modw);
    int rc = fh && mh ? text_lines_add(out, "%*s %*s %*s %*s %*s  %s  %s", w[0], head[0], w[1], head[1], w[2], head[2],
                                       w[3], head[3], w[4], head[4], fh, mh)
                      : -ENOMEM;
    free(fh);
    free(mh);
    sum = 0;
    for (int i = 0; i < t->n && rc == 0; i++) {
        const struct cpu_top_row *row = &t->rows[i];
        char v[TOP_NUMS][32];
        top_numbers(t, i, &sum, v);
        char *fn = cell(row->name, fnw), *mod = cell(row->module ? row->module : "-", modw);
        rc = fn && mod ? text_lines_add(out, "%*s %*s %*s %*s %*s  %s  %s", w[0], v[0], w[1], v[1], w[2], v[2], w[3],
                                        v[3], w[4], v[4], fn, mod)
                       : -ENOMEM;
        free(fn);
        free(mod);
    }
    if (rc == 0 && t->nfunctions > t->n) rc = text_lines_add(out, "(%d more functions)", t->nfunctions - t->n);
    if (rc == 0 && t->samples == 0) rc = text_lines_add(out, "(no samples)");
    return rc;
}

/* ---- callers and callees ---- */

void cpu_top_peek_free(struct cpu_peek *p)
{
    for (int i = 0; i < p->ncallers; i++) {
        free(p->callers[i].name);
        free(p->callers[i].module);
    }
    for (int i = 0; i < p->ncallees; i++) {
        free(p->callees[i].name);
        free(p->callees[i].module);
    }
    free(p->callers);
    free(p->callees);
    free(p->name);
    free(p->module);
    memset(p, 0, sizeof *p);
}

static int peek_row_cmp(const void *pa, const void *pb)
{
    const struct cpu_peek_row *a = pa, *b = pb;
    return cmp_ll_desc(a->samples, b->samples) ?: cmp_names(a->name, a->module, b->name, b->module);
}

/* Rows from per-function counts plus the pseudo rows (counts of 0 are left out). Returns 0 or -ENOMEM. */
static int peek_rows(const struct cpu_top_index *x, const long long *count, const char *const *pseudo,
                     const long long *pseudo_count, int npseudo, struct cpu_peek_row **rows, int *n)
{
    int m = npseudo;
    for (int f = 0; f < x->nfns; f++) m += count[f] > 0;
    *rows = calloc(m ? (size_t)m : 1, sizeof **rows);
    if (!*rows) return -ENOMEM;
    for (int f = 0; f < x->nfns + npseudo; f++) {
        int is_fn = f < x->nfns;
        long long c = is_fn ? count[f] : pseudo_count[f - x->nfns];
        if (c <= 0) continue;
        struct cpu_peek_row *row = &(*rows)[(*n)++];
        row->samples = c;
        row->name = strdup(is_fn ? x->fns[f].name : pseudo[f - x->nfns]);
        row->module = is_fn ? dup_or_null(x->fns[f].module) : NULL;
        if (!row->name || (is_fn && x->fns[f].module && !row->module)) return -ENOMEM;
    }
    qsort(*rows, (size_t)*n, sizeof **rows, peek_row_cmp);
    return 0;
}

static int find_fn(const struct cpu_top_index *x, const char *name, const char *module)
{
    for (int f = 0; f < x->nfns; f++)
        if (strcmp(x->fns[f].name, name) == 0 && same_module(x->fns[f].module, module)) return f;
    return -1;
}

int cpu_top_peek(const struct cpu_report *r, const char *name, const char *module, int tid, struct cpu_peek *out)
{
    if (!r || !name || !out) return -EINVAL;
    memset(out, 0, sizeof *out);
    out->tid = tid;
    struct cpu_top_index x;
    if (cpu_top_index_build(r, &x) < 0) return -ENOMEM;
    int target = find_fn(&x, name, module), rc = -ENOMEM;
    size_t n = x.nfns ? (size_t)x.nfns : 1;
    long long *up = calloc(n, sizeof *up), *down = calloc(n, sizeof *down);
    int *up_stamp = calloc(n, sizeof *up_stamp), *down_stamp = calloc(n, sizeof *down_stamp);
    long long root = 0, truncated = 0;
    if (!up || !down || !up_stamp || !down_stamp) goto done;
    for (int si = 0; si < r->nstacks; si++) {
        const struct cpu_stack *s = &r->stacks[si];
        if (!stack_passes(s, tid)) continue;
        out->samples += s->samples;
        int found = 0;
        for (int k = 0; k < s->nframes && target >= 0; k++) {
            if (cpu_top_index_at(&x, r, s, k) != target) continue;
            found = 1;
            int callee = cpu_top_index_at(&x, r, s, k - 1), caller = cpu_top_index_at(&x, r, s, k + 1);
            if (callee >= 0 && down_stamp[callee] != si + 1) {
                down_stamp[callee] = si + 1;
                down[callee] += s->samples;
            }
            if (caller >= 0 && up_stamp[caller] != si + 1) {
                up_stamp[caller] = si + 1;
                up[caller] += s->samples;
            }
            if (k == s->nframes - 1) *(s->truncated ? &truncated : &root) += s->samples;
        }
        if (!found) continue;
        out->total += s->samples;
        if (cpu_top_index_at(&x, r, s, 0) == target) out->own += s->samples;
    }
    if (!out->total) {
        rc = -ENOENT;
        goto done;
    }
    out->name = strdup(name);
    out->module = dup_or_null(module);
    if (!out->name || (module && !out->module)) goto done;
    static const char *const up_names[] = {CPU_PEEK_ROOT, CPU_PEEK_TRUNCATED}, *const down_names[] = {CPU_PEEK_SELF};
    long long up_counts[] = {root, truncated}, down_counts[] = {out->own};
    if (peek_rows(&x, up, up_names, up_counts, 2, &out->callers, &out->ncallers) < 0 ||
        peek_rows(&x, down, down_names, down_counts, 1, &out->callees, &out->ncallees) < 0)
        goto done;
    rc = 0;
done:
    if (rc < 0) cpu_top_peek_free(out);
    free(up);
    free(down);
    free(up_stamp);
    free(down_stamp);
    cpu_top_index_free(&x);
    return rc;
}

static int peek_block(const struct cpu_peek *p, const char *title, const struct cpu_peek_row *rows, int n,
                      int width, struct text_lines *out)
{
    int modmax = 6;
    for (int i = 0; i < n; i++)
        if (rows[i].module && (int)strlen(rows[i].module) > modmax) modmax = (int)strlen(rows[i].module);
    int fnw, modw;
    name_widths(width, 2 + 8 + 1 + 6 + 1 + 6 + 2, modmax, &fnw, &modw);
    char *fh = cell("Function", fnw), *mh = cell("Module", modw);
    int rc = fh && mh ? text_lines_add(out, "%s", title) : -ENOMEM;
    if (rc == 0) rc = text_lines_add(out, "  %8s %6s %6s  %s  %s", "Samples", "%All", "%Func", fh, mh);
    free(fh);
    free(mh);
    for (int i = 0; i < n && rc == 0; i++) {
        char pa[16], pf[16];
        snprintf(pa, sizeof pa, "%.1f%%", pct(rows[i].samples, p->samples));
        snprintf(pf, sizeof pf, "%.1f%%", pct(rows[i].samples, p->total));
        char *fn = cell(rows[i].name, fnw), *mod = cell(rows[i].module ? rows[i].module : "-", modw);
        rc = fn && mod ? text_lines_add(out, "  %8lld %6s %6s  %s  %s", rows[i].samples, pa, pf, fn, mod) : -ENOMEM;
        free(fn);
        free(mod);
    }
    return rc;
}

int cpu_top_callers(const struct cpu_report *r, const char *name, const char *module, int tid, int width,
                    struct text_lines *out)
{
    struct cpu_peek p;
    int rc = cpu_top_peek(r, name, module, tid, &p);
    if (rc < 0) return rc;
    char *fn = cell(p.name, 0), *mod = cell(p.module ? p.module : "-", 0), thread[32] = "";
    if (tid) snprintf(thread, sizeof thread, " in thread %d", tid);
    rc = fn && mod ? text_lines_add(out, "%s [%s]%s: %lld samples total (%.1f%%), %lld own (%.1f%%)", fn, mod, thread,
                                    p.total, pct(p.total, p.samples), p.own, pct(p.own, p.samples))
                   : -ENOMEM;
    free(fn);
    free(mod);
    if (rc == 0) rc = peek_block(&p, "Callers:", p.callers, p.ncallers, width, out);
    if (rc == 0) rc = peek_block(&p, "Callees:", p.callees, p.ncallees, width, out);
    cpu_top_peek_free(&p);
    return rc;
}
