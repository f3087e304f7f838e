/* header_graph: the header meters' recent past (each CPU's busy share, memory and swap used), one value a refresh,
 * for the meters' graph mode (g), as htop's meters draw it. Kept in every mode, so switching shows the past. */
#ifndef DIAGTOP_HEADER_GRAPH_H
#define DIAGTOP_HEADER_GRAPH_H
#include "collect/systotals.h"

#define HEADER_GRAPH_LEN 256 /* values kept a meter: wider than half of any terminal's header */

enum { HEADER_GRAPH_MEM = -2, HEADER_GRAPH_SWAP = -1 }; /* series besides the CPUs' 0, 1, ... */

struct header_graph {
    float *v;                /* nseries rings of HEADER_GRAPH_LEN percents: memory, swap, then each CPU */
    int nseries;             /* 2 + the CPUs of the first refresh (a CPU brought online later has no graph) */
    unsigned long long seq;  /* values stored so far */
};

/* Stores the refresh's percents (each CPU's 100 - idle, memory and swap used); returns 0 or -ENOMEM. */
int header_graph_add(struct header_graph *g, const struct systotals *st);
/* The last width values of series (a CPU's index, HEADER_GRAPH_MEM or _SWAP), newest at the right, NAN where none
 * was stored yet. */
void header_graph_series(const struct header_graph *g, int series, double *out, int width);
void header_graph_free(struct header_graph *g);
#endif
