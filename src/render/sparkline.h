/* sparkline: a series drawn as one line of block characters (▁▂▃▄▅▆▇█, or "_.-=+*#@" on a terminal without
 * UTF-8), and a process's history bucketed into as many columns as the line has. */
#ifndef DIAGTOP_SPARKLINE_H
#define DIAGTOP_SPARKLINE_H
#include <stddef.h>

#include "collect/history.h"

/* Spreads [from, to) over width columns and puts in each the largest value of f among the points of its span
 * (peaks survive the squeeze), NAN where no point falls or none is known. */
void sparkline_buckets(const struct history_point *p, size_t n, enum history_field f, double from, double to,
                       double *out, int width);
/* Draws v[0..n) scaled from lo (the lowest block) to hi (the highest), a NAN as a blank. */
void sparkline_draw(const double *v, int n, double lo, double hi, int ascii, char *out, size_t outsz);
#endif
