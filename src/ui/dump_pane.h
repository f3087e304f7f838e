/* dump_pane: the D key: after a confirmation naming the file and the estimated size, writes a core file of the
 * selected process in a worker thread, with a progress line (bytes, MB/s, time left) while the table keeps
 * refreshing; Esc cancels (the partial file is removed, the process runs on). */
#ifndef DIAGTOP_DUMP_PANE_H
#define DIAGTOP_DUMP_PANE_H
#include "pane.h"

extern const struct pane_class dump_pane_class;
/* Who holds a class of a JVM (t->pane_arg names it): a heap dump, asked first, then the merged paths from GC roots
 * to its instances (heap_pane's w). */
extern const struct pane_class holders_pane_class;
#endif
