/* watch_pane: `diagtop watch` inside the monitor. W on a row opens a one-line form ("cpu 90:5 then dump count 1",
 * the words of diagtop watch); the watch then runs in the monitor's watch_set (a thread each) while the user
 * browses. Rows it follows are marked, the header counts watches and captures, each capture is announced in the
 * status line, and w opens the pane that lists the watches with their events (x disarms the one under the cursor).
 * Quitting disarms them all. */
#ifndef DIAGTOP_WATCH_PANE_H
#define DIAGTOP_WATCH_PANE_H
#include <stddef.h>

#include "pane.h"

struct tui;

extern const struct pane_class watch_pane_class;

/* The form's text as it opens. */
#define WATCH_FORM_DEFAULT "cpu 90:5 then dump count 1"
/* The form's label for process pid (its short name comm). */
void watch_pane_form_label(char *buf, size_t n, int pid, const char *comm);
/* The form was accepted: arms a watch of pid from its words. Sets the status either way. */
void watch_pane_arm(struct tui *t, int pid, const char *text);
/* After each refresh: a capture or a failure since the last call is said in the status line. */
void watch_pane_notice(struct tui *t);
/* Watches running now. */
int watch_pane_armed(const struct tui *t);
/* "2 armed, 1 capture" for the header, "" when nothing was armed. */
void watch_pane_summary(const struct tui *t, char *buf, size_t n);
/* The processes the running watches follow (at most max); returns how many, -1 when no watch runs. */
int watch_pane_marked(const struct tui *t, int *pids, int max);
#endif
