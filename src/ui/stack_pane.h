/* stack_pane: the `b` key: captures every thread's stack of the selected process in a worker thread and shows it
 * in a pane (grouped identical stacks, `g` toggles grouping, `r` takes a new snapshot). */
#ifndef DIAGTOP_STACK_PANE_H
#define DIAGTOP_STACK_PANE_H
#include "pane.h"

extern const struct pane_class stack_pane_class;
#endif
