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
/* Draws text wrapped at the screen's width from line y down, at most maxlines of it, continuation lines starting
 * at column indent (ignored past half the width); returns the lines it needs (at least 1), drawn or not. With s
 * NULL it only measures. */
int draw_hanging(const struct screen *s, int y, int maxlines, int indent, const char *text, int attr);
/* Draws one line of text with its first skip characters scrolled off to the left, cut at the screen's width: a
 * '<' in the first column marks what is off to the left, a '>' in the last what is off to the right. Returns 1
 * when anything is off screen. */
int draw_cut(const struct screen *s, int y, int skip, const char *text, int attr);
/* Fills maxw columns at (y, x) with spaces in attr (a highlighted row's background). */
void draw_fill(int y, int x, int maxw, int attr);
/* Horizontal glyphs for the tree and panels, by glyph mode. */
void draw_hline(const struct screen *s, int y, int x, int w, int attr);
#endif
