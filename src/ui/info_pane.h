/* info_pane: Enter on a row: the process's details in a pane with tabs (General, Memory, Modules, FDs, Threads,
 * Environment, I/O), read again at every refresh of the table, with an RSS sparkline since the pane opened and,
 * on the Memory tab, the runtime's own memory statistics (Go, JVM) asked for in the pane's job. */
#ifndef DIAGTOP_INFO_PANE_H
#define DIAGTOP_INFO_PANE_H
#include "pane.h"

extern const struct pane_class info_pane_class;
#endif
