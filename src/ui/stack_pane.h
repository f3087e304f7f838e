/* stack_pane: the `b` key: captures every thread's stack of the selected process in the pane's job and shows it
 * (grouped identical stacks, `g` toggles grouping, `r` takes a new snapshot); for a Go program or a JVM the
 * runtime's own view first (goroutines, Java threads; `v` switches to the OS threads), `w` reads the OS threads
 * without stopping the process. */
#ifndef DIAGTOP_STACK_PANE_H
#define DIAGTOP_STACK_PANE_H
#include "pane.h"

extern const struct pane_class stack_pane_class;
#endif
