/* heap_graph: a heap dump's strong references as a compressed graph, and its dominator tree. Vertex n (the
 * object count) is the super-root: it points at every GC root and every class (a class lives as long as its
 * loader, and holds its statics). Reference.referent is not an edge, so what only weak, soft or phantom
 * references hold is unreachable here, as a collector would see it. */
#ifndef DIAGTOP_HEAP_GRAPH_H
#define DIAGTOP_HEAP_GRAPH_H
#include <stddef.h>
#include <stdint.h>

#include "hprof_read.h"

struct heap_graph {
    uint32_t n;           /* objects; vertex n is the super-root */
    uint32_t *out_start;  /* n + 2 entries: the edges of v are out[out_start[v] .. out_start[v + 1]); fewer than
                           * 4 billion edges, as objects */
    uint32_t *out;
    size_t out_cap;
    uint32_t *idom;       /* the immediate dominator of each object, n for the roots, HPROF_NONE if unreachable */
    uint64_t *retained;   /* bytes freed with the object: its dominator subtree's shallow sizes */
    uint64_t reachable_bytes;
    uint32_t reachable;
};

/* Builds the graph and the dominators. progress as in hprof_read_opts. Returns 0, -ENOMEM, or -ECANCELED. */
int heap_graph_build(struct heap_graph *g, const struct hprof *h,
                     int (*progress)(void *arg, uint64_t done, uint64_t total), void *arg);
void heap_graph_free(struct heap_graph *g);
/* The reference slots of a dump (nulls included): at most that many edges. */
uint64_t heap_graph_slots(const struct hprof *h);

/* The objects each object dominates directly, as a compressed list (n + 1 vertices, the super-root last). */
struct heap_domtree {
    uint32_t n;
    uint32_t *start; /* n + 2 entries */
    uint32_t *child;
};
int heap_domtree_build(struct heap_domtree *t, const struct heap_graph *g);
void heap_domtree_free(struct heap_domtree *t);
#endif
