#include "core_diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

/* ---- stacks, keyed by their function names ---- */

struct keyed {
    char *key;
    int side; /* 0: old, 1: new */
    const struct core_diff_stack *what;
};

struct key_list {
    struct keyed *k;
    size_t n, cap;
};

/* "state\nfunction\nfunction..." (a frame without a name: its module and offset). */
static char *stack_key(const char *state, const struct stack_frame *f, int n)
{
    size_t len = (state ? strlen(state) : 0) + 2;
    for (int i = 0; i < n; i++) len += (f[i].function ? strlen(f[i].function) : 64) + 1;
    char *key = malloc(len), *at = key;
    if (!key) return NULL;
    at += snprintf(at, len, "%s\n", state ? state : "");
    for (int i = 0; i < n; i++) {
        size_t left = len - (size_t)(at - key);
        if (f[i].function) at += snprintf(at, left, "%s\n", f[i].function);
        else at += snprintf(at, left, "%s+0x%llx\n", f[i].module ? f[i].module : "?", f[i].offset);
    }
    return key;
}

static int add_stack(struct key_list *l, int side, int goroutine, const char *state, const struct stack_frame *f, int n)
{
    char *key = stack_key(state, f, n);
    if (!key || GROW(l->k, l->cap, l->n, 64) < 0) {
        free(key);
        return -1;
    }
    struct core_diff_stack *s = malloc(sizeof *s);
    if (!s) {
        free(key);
        return -1;
    }
    *s = (struct core_diff_stack){.goroutine = goroutine, .state = state, .frames = f, .nframes = n};
    l->k[l->n++] = (struct keyed){key, side, s};
    return 0;
}

static int add_report(struct key_list *l, const struct core_report *r, int side)
{
    for (int i = 0; i < r->stacks.nthreads; i++)
        if (add_stack(l, side, 0, NULL, r->stacks.threads[i].frames, r->stacks.threads[i].nframes) < 0) return -1;
    for (int i = 0; i < r->goroutines.n; i++) {
        const struct goroutine *g = &r->goroutines.list[i];
        if (!g->system && add_stack(l, side, 1, g->state, g->frames, g->nframes) < 0) return -1;
    }
    return 0;
}

static int by_key(const void *x, const void *y) { return strcmp(((const struct keyed *)x)->key, ((const struct keyed *)y)->key); }

static int by_change(const void *x, const void *y)
{
    const struct core_diff_stack *a = x, *b = y;
    int da = abs(a->new_count - a->old_count), db = abs(b->new_count - b->old_count);
    if (da != db) return db - da;
    return b->new_count - a->new_count;
}

/* Runs of equal keys become one row with a count per side; the rows whose counts differ are kept. */
static int diff_stacks(struct key_list *l, struct core_diff *d)
{
    if (l->n) qsort(l->k, l->n, sizeof *l->k, by_key);
    size_t cap = 0;
    for (size_t i = 0; i < l->n;) {
        size_t j = i;
        struct core_diff_stack row = *l->k[i].what;
        row.old_count = row.new_count = 0;
        for (; j < l->n && strcmp(l->k[j].key, l->k[i].key) == 0; j++) {
            if (l->k[j].side) row.new_count++;
            else row.old_count++;
        }
        if (row.old_count != row.new_count) {
            if (GROW(d->stacks, cap, d->nstacks, 32) < 0) return -1;
            d->stacks[d->nstacks++] = row;
        }
        i = j;
    }
    if (d->nstacks) qsort(d->stacks, (size_t)d->nstacks, sizeof *d->stacks, by_change);
    return 0;
}

static void key_list_free(struct key_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->k[i].key);
        free((void *)l->k[i].what);
    }
    free(l->k);
}

/* ---- the heap by size ---- */

static int by_chunk(const void *x, const void *y)
{
    unsigned long long a = ((const struct heap_class *)x)->chunk_size, b = ((const struct heap_class *)y)->chunk_size;
    return a < b ? -1 : a > b;
}

static int by_growth(const void *x, const void *y)
{
    const struct core_diff_size *a = x, *b = y;
    long long ga = (long long)a->new_bytes - (long long)a->old_bytes, gb = (long long)b->new_bytes - (long long)b->old_bytes;
    if (ga != gb) return ga < gb ? 1 : -1;
    return a->chunk_size < b->chunk_size ? -1 : a->chunk_size > b->chunk_size;
}

/* Both histograms sorted by size, merged. */
static int diff_sizes(const struct glibc_heap *o, const struct glibc_heap *n, struct core_diff *d)
{
    struct heap_class *a = malloc((size_t)(o->nclasses + 1) * sizeof *a), *b = malloc((size_t)(n->nclasses + 1) * sizeof *b);
    d->sizes = calloc((size_t)(o->nclasses + n->nclasses + 1), sizeof *d->sizes);
    if (!a || !b || !d->sizes) {
        free(a);
        free(b);
        return -1;
    }
    if (o->nclasses) memcpy(a, o->classes, (size_t)o->nclasses * sizeof *a);
    if (n->nclasses) memcpy(b, n->classes, (size_t)n->nclasses * sizeof *b);
    qsort(a, (size_t)o->nclasses, sizeof *a, by_chunk); /* a and b are never NULL */
    qsort(b, (size_t)n->nclasses, sizeof *b, by_chunk);
    int i = 0, k = 0;
    while (i < o->nclasses || k < n->nclasses) {
        struct core_diff_size *s = &d->sizes[d->nsizes++];
        int take_old = i < o->nclasses && (k == n->nclasses || a[i].chunk_size <= b[k].chunk_size);
        int take_new = k < n->nclasses && (i == o->nclasses || b[k].chunk_size <= a[i].chunk_size);
        s->chunk_size = take_old ? a[i].chunk_size : b[k].chunk_size;
        if (take_old) {
            s->old_count = a[i].count;
            s->old_bytes = a[i++].bytes;
        }
        if (take_new) {
            s->new_count = b[k].count;
            s->new_bytes = b[k++].bytes;
        }
    }
    free(a);
    free(b);
    qsort(d->sizes, (size_t)d->nsizes, sizeof *d->sizes, by_growth);
    return 0;
}

static int same_program(const struct core_report *a, const struct core_report *b)
{
    if (a->stacks.pid == b->stacks.pid && strcmp(a->notes.args, b->notes.args) == 0) return 1;
    /* another process of the same build: its program's build-id */
    return a->nmodules && b->nmodules && a->modules[0].build_id[0] &&
           strcmp(a->modules[0].build_id, b->modules[0].build_id) == 0;
}

int core_diff_build(const struct core_report *old, const struct core_report *new, struct core_diff *out)
{
    memset(out, 0, sizeof *out);
    out->old = old;
    out->new = new;
    out->same_program = same_program(old, new);
    struct key_list l = {0};
    int rc = add_report(&l, old, 0) == 0 && add_report(&l, new, 1) == 0 && diff_stacks(&l, out) == 0 ? 0 : -1;
    key_list_free(&l);
    if (rc == 0 && old->heap.walked && new->heap.walked) rc = diff_sizes(&old->heap.h, &new->heap.h, out);
    if (rc < 0) core_diff_free(out);
    return rc;
}

void core_diff_free(struct core_diff *d)
{
    free(d->sizes);
    free(d->stacks);
    memset(d, 0, sizeof *d);
}
