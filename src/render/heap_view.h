/* heap_view: a heap snapshot next to earlier ones of the same process, the leak view of WinDbg's `!dumpheap
 * -stat` taken twice and compared: each row's change since the previous snapshot and since the first of the
 * series, and its growth per minute since the first. Rows are ordered by growth since the first (largest
 * first) when there is an earlier snapshot, else by bytes. */
#ifndef DIAGTOP_HEAP_VIEW_H
#define DIAGTOP_HEAP_VIEW_H
#include "actions/runtimes/results.h"

struct heap_view_row {
    const struct rt_heap_row *row;
    struct rt_heap_change since_prev, since_first;
    double bytes_per_minute; /* since first; 0 without an earlier snapshot */
};

struct heap_view {
    const struct rt_heap *cur, *prev, *first; /* prev and first may be NULL */
    struct heap_view_row *rows;
    int n;
    double minutes; /* from first to cur */
};

/* Builds the view of cur against prev and first (either NULL). Returns 0 or -ENOMEM. */
int heap_view_build(struct heap_view *v, const struct rt_heap *cur, const struct rt_heap *prev,
                    const struct rt_heap *first);
void heap_view_free(struct heap_view *v);
#endif
