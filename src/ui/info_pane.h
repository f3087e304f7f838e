/* info_pane: Enter on a row: the process's details in a pane with tabs (General, Memory, Modules, FDs, Threads,
 * Environment, I/O), read again at every refresh of the table, with an RSS sparkline since the pane opened. */
#ifndef DIAGTOP_INFO_PANE_H
#define DIAGTOP_INFO_PANE_H
struct tui;

unsigned info_pane_open(struct tui *t, int pid);
void info_pane_shutdown(struct tui *t);
#endif
