#include "results.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"
#include "actions/profile/cpu_report.h"

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

void rt_frames_free(struct rt_frame *f, int n)
{
    for (int i = 0; f && i < n; i++) {
        free(f[i].function);
        free(f[i].file);
    }
    free(f);
}

struct rt_frame *rt_frames_dup(const struct rt_frame *f, int n)
{
    struct rt_frame *c = calloc((size_t)(n > 0 ? n : 1), sizeof *c);
    if (!c) return NULL;
    for (int i = 0; i < n; i++) {
        c[i] = (struct rt_frame){dup_or_null(f[i].function), dup_or_null(f[i].file), f[i].line};
        if ((f[i].function && !c[i].function) || (f[i].file && !c[i].file)) {
            rt_frames_free(c, i + 1);
            return NULL;
        }
    }
    return c;
}

void rt_lock_free(struct rt_lock *l)
{
    free(l->address);
    free(l->class_name);
    l->address = l->class_name = NULL;
}

void rt_stack_free(struct rt_stack *s)
{
    for (int i = 0; i < s->n; i++) {
        struct rt_thread *t = &s->threads[i];
        free(t->name);
        free(t->state);
        free(t->created_by);
        rt_frames_free(t->frames, t->nframes);
        free(t->wait_how);
        rt_lock_free(&t->waits_for);
        for (int k = 0; k < t->nholds; k++) rt_lock_free(&t->holds[k]);
        free(t->holds);
    }
    for (int i = 0; i < s->ndeadlocks; i++) {
        for (int k = 0; k < s->deadlocks[i].n; k++) {
            struct rt_deadlock_edge *e = &s->deadlocks[i].edges[k];
            free(e->thread);
            free(e->how);
            rt_lock_free(&e->lock);
            free(e->held_by);
        }
        free(s->deadlocks[i].edges);
    }
    free(s->deadlocks);
    free(s->threads);
    memset(s, 0, sizeof *s);
}

/* The label's key, made unique in fs. */
static char *unique_key(const struct rt_fields *fs, const char *label)
{
    char base[128], key[140];
    text_snake_key(label, base, sizeof base);
    snprintf(key, sizeof key, "%s", base);
    for (int k = 2; rt_fields_find(fs, key); k++) snprintf(key, sizeof key, "%s_%d", base, k);
    return strdup(key);
}

static void field_strings_free(struct rt_field *f)
{
    free(f->section);
    free(f->label);
    free(f->key);
    free(f->text);
}

static struct rt_field *field_new(struct rt_fields *fs, const char *section, const char *label, enum rt_unit unit)
{
    if (fs->n == fs->cap) {
        int cap = fs->cap ? fs->cap * 2 : 32;
        struct rt_field *f = realloc(fs->f, (size_t)cap * sizeof *f);
        if (!f) return NULL;
        fs->f = f;
        fs->cap = cap;
    }
    struct rt_field *f = &fs->f[fs->n];
    memset(f, 0, sizeof *f);
    f->section = strdup(section ? section : "");
    f->label = strdup(label);
    f->key = unique_key(fs, label);
    f->unit = unit;
    if (!f->section || !f->label || !f->key) {
        field_strings_free(f);
        return NULL;
    }
    fs->n++;
    return f;
}

int rt_fields_add_u64(struct rt_fields *fs, const char *section, const char *label, enum rt_unit unit,
                      unsigned long long v)
{
    struct rt_field *f = field_new(fs, section, label, unit);
    if (!f) return -ENOMEM;
    f->u = v;
    return 0;
}

int rt_fields_add_double(struct rt_fields *fs, const char *section, const char *label, double v)
{
    struct rt_field *f = field_new(fs, section, label, RT_RATIO);
    if (!f) return -ENOMEM;
    f->is_double = 1;
    f->d = v;
    return 0;
}

int rt_fields_add_text(struct rt_fields *fs, const char *section, const char *label, const char *text)
{
    struct rt_field *f = field_new(fs, section, label, RT_TEXT);
    if (!f) return -ENOMEM;
    if (!(f->text = strdup(text ? text : ""))) {
        fs->n--;
        field_strings_free(f);
        return -ENOMEM;
    }
    return 0;
}

const struct rt_field *rt_fields_find(const struct rt_fields *fs, const char *key)
{
    for (int i = 0; i < fs->n; i++)
        if (strcmp(fs->f[i].key, key) == 0) return &fs->f[i];
    return NULL;
}

void rt_fields_free(struct rt_fields *fs)
{
    for (int i = 0; i < fs->n; i++) field_strings_free(&fs->f[i]);
    free(fs->f);
    memset(fs, 0, sizeof *fs);
}

void rt_gc_free(struct rt_gc *g)
{
    free(g->message);
    memset(g, 0, sizeof *g);
}

void rt_heap_free(struct rt_heap *h)
{
    for (int i = 0; i < h->n; i++) {
        free(h->rows[i].name);
        rt_frames_free(h->rows[i].stack, h->rows[i].nstack);
    }
    free(h->rows);
    free(h->saved_path);
    memset(h, 0, sizeof *h);
}

static int by_bytes(const void *a, const void *b)
{
    const struct rt_heap_row *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

void rt_heap_finish(struct rt_heap *h)
{
    if (h->n > 1) qsort(h->rows, (size_t)h->n, sizeof *h->rows, by_bytes);
    h->total_count = h->total_bytes = 0;
    for (int i = 0; i < h->n; i++) {
        h->total_count += h->rows[i].count;
        h->total_bytes += h->rows[i].bytes;
    }
}

/* A row's identity: its name and its stack's functions and lines. */
static char *row_key(const struct rt_heap_row *r)
{
    size_t len = strlen(r->name ? r->name : "") + 1;
    for (int i = 0; i < r->nstack; i++) len += strlen(r->stack[i].function ? r->stack[i].function : "") + 16;
    char *k = malloc(len + 1);
    if (!k) return NULL;
    size_t off = (size_t)snprintf(k, len + 1, "%s", r->name ? r->name : "");
    for (int i = 0; i < r->nstack && off < len; i++)
        off += (size_t)snprintf(k + off, len + 1 - off, "\n%s:%d", r->stack[i].function ? r->stack[i].function : "",
                                r->stack[i].line);
    return k;
}

struct keyed {
    char *key;
    const struct rt_heap_row *row;
};

static int by_key(const void *a, const void *b) { return strcmp(((const struct keyed *)a)->key, ((const struct keyed *)b)->key); }

int rt_heap_changes(const struct rt_heap *old, const struct rt_heap *cur, struct rt_heap_change *out)
{
    int n = old ? old->n : 0, rc = 0;
    struct keyed *ix = calloc((size_t)(n ? n : 1), sizeof *ix);
    if (!ix) return -ENOMEM;
    for (int i = 0; i < n && rc == 0; i++)
        if (!(ix[i] = (struct keyed){row_key(&old->rows[i]), &old->rows[i]}).key) rc = -ENOMEM;
    if (rc == 0 && n > 1) qsort(ix, (size_t)n, sizeof *ix, by_key);
    for (int i = 0; i < cur->n && rc == 0; i++) {
        struct keyed probe = {row_key(&cur->rows[i]), NULL};
        if (!probe.key) {
            rc = -ENOMEM;
            break;
        }
        const struct keyed *hit = n ? bsearch(&probe, ix, (size_t)n, sizeof *ix, by_key) : NULL;
        free(probe.key);
        const struct rt_heap_row *r = &cur->rows[i];
        out[i] = hit ? (struct rt_heap_change){r->count - hit->row->count, r->bytes - hit->row->bytes, 0}
                     : (struct rt_heap_change){r->count, r->bytes, 1};
    }
    for (int i = 0; i < n; i++) free(ix[i].key);
    free(ix);
    return rc;
}

char *rt_frame_label(const char *function, const char *module, unsigned long long offset, unsigned long long pc)
{
    char buf[600];
    if (function) return strdup(function);
    if (module) snprintf(buf, sizeof buf, "%s+0x%llx", module, offset);
    else snprintf(buf, sizeof buf, "0x%llx", pc);
    return strdup(buf);
}

static char *report_name(const struct cpu_frame *f) { return rt_frame_label(f->function, f->module, f->offset, f->pc); }

struct fn_index {
    char *name;
    int frame;
};

static int by_fn_name(const void *a, const void *b)
{
    return strcmp(((const struct fn_index *)a)->name, ((const struct fn_index *)b)->name);
}

/* Top functions of a report: flat (innermost frame) and cumulative (anywhere on the stack, once per stack), in
 * nanoseconds of CPU or in samples. */
static int profile_rows(const struct cpu_report *r, int samples, struct rt_profile *out)
{
    int n = r->nframes, rc = 0, nfn = 0;
    struct fn_index *ix = calloc((size_t)(n ? n : 1), sizeof *ix);
    int *fn_of = calloc((size_t)(n ? n : 1), sizeof *fn_of), *seen = NULL;
    if (!ix || !fn_of) rc = -ENOMEM;
    for (int i = 0; rc == 0 && i < n; i++)
        if (!(ix[i] = (struct fn_index){report_name(&r->frames[i]), i}).name) rc = -ENOMEM;
    if (rc == 0) {
        qsort(ix, (size_t)n, sizeof *ix, by_fn_name);
        for (int i = 0; i < n; i++) {
            if (i == 0 || strcmp(ix[i].name, ix[i - 1].name)) nfn++;
            fn_of[ix[i].frame] = nfn - 1;
        }
        out->rows = calloc((size_t)(nfn ? nfn : 1), sizeof *out->rows);
        seen = malloc((size_t)(nfn ? nfn : 1) * sizeof *seen);
        if (!out->rows || !seen) rc = -ENOMEM;
    }
    for (int i = 0, fn = -1; rc == 0 && i < n; i++) {
        if (fn == fn_of[ix[i].frame]) continue;
        fn = fn_of[ix[i].frame];
        const struct cpu_frame *f = &r->frames[ix[i].frame];
        out->rows[fn].function = strdup(ix[i].name);
        out->rows[fn].file = f->file ? strdup(f->file) : NULL;
        if (!out->rows[fn].function) rc = -ENOMEM;
        out->n = fn + 1;
    }
    for (int i = 0; rc == 0 && i < nfn; i++) seen[i] = -1;
    for (int s = 0; rc == 0 && s < r->nstacks; s++) {
        const struct cpu_stack *cs = &r->stacks[s];
        if (!cs->nframes) continue;
        long long v = samples ? cs->samples : cs->cpu_ns;
        out->rows[fn_of[cs->frames[0]]].flat += v;
        for (int k = 0; k < cs->nframes; k++) {
            int fn = fn_of[cs->frames[k]];
            if (seen[fn] == s) continue;
            seen[fn] = s;
            out->rows[fn].cum += v;
        }
        out->total += v;
    }
    for (int i = 0; ix && i < n; i++) free(ix[i].name);
    free(ix);
    free(fn_of);
    free(seen);
    return rc;
}

static int by_flat(const void *a, const void *b)
{
    const struct rt_profile_row *x = a, *y = b;
    if (x->flat != y->flat) return x->flat > y->flat ? -1 : 1;
    if (x->cum != y->cum) return x->cum > y->cum ? -1 : 1;
    return strcmp(x->function, y->function);
}

int rt_profile_from_report(const struct cpu_report *r, int samples, struct rt_profile *out)
{
    int rc = profile_rows(r, samples, out);
    if (rc == 0 && out->n > 1) qsort(out->rows, (size_t)out->n, sizeof *out->rows, by_flat);
    return rc;
}

void rt_profile_free(struct rt_profile *p)
{
    for (int i = 0; i < p->n; i++) {
        free(p->rows[i].function);
        free(p->rows[i].file);
    }
    free(p->rows);
    free(p->saved_path);
    memset(p, 0, sizeof *p);
}

void rt_file_free(struct rt_file *f)
{
    free(f->path);
    memset(f, 0, sizeof *f);
}
