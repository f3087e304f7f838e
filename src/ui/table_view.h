/* table_view: the process table on screen: titles (sorted column marked), rows with the selection, tags and the
 * command's basename highlighted. */
#ifndef DIAGTOP_TABLE_VIEW_H
#define DIAGTOP_TABLE_VIEW_H
#include "tui_state.h"

/* Draws rows [t->top, t->top + t->table_rows) at t->table_y (title on the line above). */
void table_view_draw(struct tui *t);
/* The id of the column under screen x on the title line, or -1. */
int table_view_column_at(const struct tui *t, int x);
#endif
