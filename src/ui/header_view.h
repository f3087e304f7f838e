/* header_view: the meters above the table: a CPU bar per core, memory and swap bars, tasks, load and uptime; below
 * them, the filter, user and search that hold. */
#ifndef DIAGTOP_HEADER_VIEW_H
#define DIAGTOP_HEADER_VIEW_H
#include "tui_state.h"

/* Lines the header needs at the current size (at most half the screen). */
int header_view_height(const struct tui *t);
void header_view_draw(const struct tui *t);
#endif
