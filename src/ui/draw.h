/* draw: clipped text output on the curses screen. Text given here is already sanitized of control bytes; in a
 * non-UTF-8 locale non-ASCII bytes become '?'. */
#ifndef DIAGTOP_DRAW_H
#define DIAGTOP_DRAW_H
#include "screen.h"

/* Draws at most maxw columns of text at (y, x) with attr; returns the columns used. */
int draw_text(const struct screen *s, int y, int x, int maxw, const char *text, int attr);
/* Draws text word-wrapped in the columns [left, left + w) from line y down, as many lines as it needs; the first
 * line starts at left + *x (after other text), and *x is left after the last character (relative to left).
 * Returns the lines it went down from y (0: all on line y). With s NULL it draws nothing, only measures. */
int draw_wrapped(const struct screen *s, int y, int left, int w, int *x, const char *text, int attr);
/* Fills maxw columns at (y, x) with spaces in attr (a highlighted row's background). */
void draw_fill(int y, int x, int maxw, int attr);
/* Horizontal glyphs for the tree and panels, by glyph mode. */
void draw_hline(const struct screen *s, int y, int x, int w, int attr);
#endif
