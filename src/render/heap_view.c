#include "heap_view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int by_growth(const void *a, const void *b)
{
    const struct heap_view_row *x = a, *y = b;
    if (x->since_first.bytes != y->since_first.bytes) return x->since_first.bytes > y->since_first.bytes ? -1 : 1;
    if (x->row->bytes != y->row->bytes) return x->row->bytes > y->row->bytes ? -1 : 1;
    return strcmp(x->row->name ? x->row->name : "", y->row->name ? y->row->name : "");
}

int heap_view_build(struct heap_view *v, const struct rt_heap *cur, const struct rt_heap *prev,
                    const struct rt_heap *first)
{
    memset(v, 0, sizeof *v);
    v->cur = cur;
    v->prev = prev;
    v->first = first ? first : prev;
    v->rows = calloc((size_t)(cur->n ? cur->n : 1), sizeof *v->rows);
    struct rt_heap_change *changes = calloc((size_t)(cur->n ? cur->n : 1), sizeof *changes);
    int rc = v->rows && changes ? 0 : -ENOMEM;
    for (int i = 0; rc == 0 && i < cur->n; i++) v->rows[i].row = &cur->rows[i];
    if (rc == 0 && prev && (rc = rt_heap_changes(prev, cur, changes)) == 0)
        for (int i = 0; i < cur->n; i++) v->rows[i].since_prev = changes[i];
    if (rc == 0 && v->first && (rc = rt_heap_changes(v->first, cur, changes)) == 0) {
        v->minutes = (cur->taken_at - v->first->taken_at) / 60.0;
        for (int i = 0; i < cur->n; i++) {
            v->rows[i].since_first = changes[i];
            if (v->minutes > 0) v->rows[i].bytes_per_minute = (double)changes[i].bytes / v->minutes;
        }
        qsort(v->rows, (size_t)cur->n, sizeof *v->rows, by_growth);
    }
    free(changes);
    if (rc < 0) {
        heap_view_free(v);
        return rc;
    }
    v->n = cur->n;
    return 0;
}

void heap_view_free(struct heap_view *v)
{
    free(v->rows);
    memset(v, 0, sizeof *v);
}
