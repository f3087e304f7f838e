/* overlay_view: what is drawn over or under the table: the bottom bar (function keys, status or prompt), menus and
 * the help screen. */
#ifndef DIAGTOP_OVERLAY_VIEW_H
#define DIAGTOP_OVERLAY_VIEW_H
#include "tui_state.h"

void overlay_view_bottom(const struct tui *t);
void overlay_view_menu(const struct tui *t);
void overlay_view_help(const struct tui *t);
#endif
