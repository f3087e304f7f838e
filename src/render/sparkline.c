#include "sparkline.h"

#include <math.h>
#include <stdio.h>

void sparkline_buckets(const struct history_point *p, size_t n, enum history_field f, double from, double to,
                       double *out, int width)
{
    for (int i = 0; i < width; i++) out[i] = NAN;
    if (width <= 0 || to <= from) return;
    for (size_t k = 0; k < n; k++) {
        double v = p[k].v[f];
        if (isnan(v) || p[k].t < from || p[k].t >= to) continue;
        int i = (int)((p[k].t - from) / (to - from) * width);
        if (i >= width) i = width - 1;
        if (isnan(out[i]) || v > out[i]) out[i] = v;
    }
}

void sparkline_draw(const double *v, int n, double lo, double hi, int ascii, char *out, size_t outsz)
{
    static const char *const blocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    static const char ascii_blocks[] = "_.-=+*#@";
    size_t off = 0;
    if (outsz) out[0] = '\0';
    for (int i = 0; i < n && off + 4 < outsz; i++) {
        if (isnan(v[i])) {
            out[off++] = ' ';
            out[off] = '\0';
            continue;
        }
        int level = hi > lo ? (int)((v[i] - lo) * 7.999 / (hi - lo)) : 0;
        if (level < 0) level = 0;
        if (level > 7) level = 7;
        if (ascii) {
            out[off++] = ascii_blocks[level];
            out[off] = '\0';
        } else {
            off += (size_t)snprintf(out + off, outsz - off, "%s", blocks[level]);
        }
    }
}
