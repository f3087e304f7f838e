/* runtime_pane: G and C on a row: a GC, or a CPU profile (with a progress bar while the runtime samples), asked of
 * the process's runtime in a worker thread; the pane says who answered, or why nobody could. */
#ifndef DIAGTOP_RUNTIME_PANE_H
#define DIAGTOP_RUNTIME_PANE_H
#include "pane.h"

extern const struct pane_class gc_pane_class;
extern const struct pane_class profile_pane_class;
#endif
