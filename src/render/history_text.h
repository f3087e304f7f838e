/* history_text: a process's history as text lines, one sparkline a field over the time kept, with its latest,
 * lowest and highest values: the details pane's History tab and the Memory tab's RSS line. */
#ifndef DIAGTOP_HISTORY_TEXT_H
#define DIAGTOP_HISTORY_TEXT_H
#include <stddef.h>

#include "collect/history.h"
#include "text_lines.h"

/* Every field of points p[0..n) (oldest first) fitted to width columns, ending at now. */
void history_text(const struct history_point *p, size_t n, double now, int width, int ascii, struct text_lines *tl);
/* One field as "spark  last X  min Y  max Z" into out; returns 0 when no sample of the field is known. */
int history_text_field(const struct history_point *p, size_t n, enum history_field f, int width, int ascii,
                       char *out, size_t outsz);
#endif
