/* message_view: the message at the bottom of the screen, a prompt (a question with its answer keys, or a typed
 * line) or a status message, word-wrapped onto as many lines as it needs so that nothing the user must answer or
 * do is cut. The table or pane above gives up those lines while it is shown. */
#ifndef DIAGTOP_MESSAGE_VIEW_H
#define DIAGTOP_MESSAGE_VIEW_H
#include "tui_state.h"

/* The lines the message needs at this width (at most LINES), 0 when there is none to show. A pane's search, filter
 * or file name is shown here too, in front of a status message. */
int message_view_height(const struct tui *t);
/* Draws it on its last lines of the screen; returns 0 when there is none (the caller draws its key bar). */
int message_view_draw(const struct tui *t);
/* Last before the screen is refreshed: shows the terminal cursor at a typed line's cursor, hides it otherwise. */
void message_view_place_cursor(const struct tui *t);
#endif
