#include "header_graph.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

static float *slot(const struct header_graph *g, int series, unsigned long long i)
{
    return &g->v[(size_t)(series + 2) * HEADER_GRAPH_LEN + i % HEADER_GRAPH_LEN];
}

int header_graph_add(struct header_graph *g, const struct systotals *st)
{
    if (!g->v) {
        g->nseries = 2 + (st->cur.ncpu > 0 ? st->cur.ncpu : 0);
        if (!(g->v = calloc((size_t)g->nseries * HEADER_GRAPH_LEN, sizeof *g->v))) return -ENOMEM;
    }
    for (int c = 0; c < st->cur.ncpu && c + 2 < g->nseries; c++)
        *slot(g, c, g->seq) = (float)(100.0 - st->per_cpu[c].idle);
    const struct mem_totals *m = &st->mem;
    *slot(g, HEADER_GRAPH_MEM, g->seq) = m->total ? (float)(100.0 * (double)m->used / (double)m->total) : 0;
    *slot(g, HEADER_GRAPH_SWAP, g->seq) =
        m->swap_total ? (float)(100.0 * (double)m->swap_used / (double)m->swap_total) : 0;
    g->seq++;
    return 0;
}

void header_graph_series(const struct header_graph *g, int series, double *out, int width)
{
    unsigned long long have = g->seq < HEADER_GRAPH_LEN ? g->seq : HEADER_GRAPH_LEN;
    if (!g->v || series + 2 >= g->nseries) have = 0;
    for (int i = 0; i < width; i++) {
        unsigned long long back = (unsigned long long)(width - 1 - i); /* 0: the newest */
        out[i] = back < have ? *slot(g, series, g->seq - 1 - back) : NAN;
    }
}

void header_graph_free(struct header_graph *g)
{
    free(g->v);
    g->v = NULL;
    g->seq = 0;
    g->nseries = 0;
}
