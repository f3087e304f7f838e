/* heap_pane: A on a row: the leak view. Heap snapshots (a JVM's class histogram, a Go heap profile's allocation
 * sites) taken on A, on r and every 30 s while the pane is in front, each row with its change since the previous
 * and the first snapshot and its growth per minute, largest growth first; e shows the sites' stacks, z makes the
 * current snapshot the new baseline, a turns the automatic snapshots off and on. */
#ifndef DIAGTOP_HEAP_PANE_H
#define DIAGTOP_HEAP_PANE_H
#include "pane.h"

extern const struct pane_class heap_pane_class;
#endif
