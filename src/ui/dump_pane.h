/* dump_pane: the D key: after a confirmation naming the file and the estimated size, writes a core file of the
 * selected process in a worker thread, with a progress line (bytes, MB/s, time left) while the table keeps
 * refreshing; Esc cancels (the partial file is removed, the process runs on). */
#ifndef DIAGTOP_DUMP_PANE_H
#define DIAGTOP_DUMP_PANE_H
#include <stddef.h>
struct tui;

/* Prepares the confirmation for pid: writes the question into question. Returns 0, or -1 with a reason. */
int dump_pane_prepare(struct tui *t, int pid, char *question, size_t qsz);
/* After "y": starts the dump prepared last. */
unsigned dump_pane_start(struct tui *t);
void dump_pane_done(struct tui *t);
int dump_pane_fd(const struct tui *t);
void dump_pane_shutdown(struct tui *t);
#endif
