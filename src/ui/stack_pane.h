/* stack_pane: the `b` key: captures every thread's stack of the selected process in a worker thread and shows it
 * in a pane (grouped identical stacks, `g` toggles grouping, `r` takes a new snapshot). */
#ifndef DIAGTOP_STACK_PANE_H
#define DIAGTOP_STACK_PANE_H
struct tui;

unsigned stack_pane_open(struct tui *t, int pid);
/* The worker finished: show its result. */
void stack_pane_done(struct tui *t);
/* Ends any capture (bounded wait) and frees the pane's state; called when the TUI exits. */
void stack_pane_shutdown(struct tui *t);
/* The descriptor that becomes readable when a capture finishes, or -1. */
int stack_pane_fd(const struct tui *t);
#endif
