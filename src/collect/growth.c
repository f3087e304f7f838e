#include "growth.h"

int growth_add(struct growth *g, double now, unsigned long long bytes, double *per_minute)
{
    int last = (g->head + GROWTH_SLOTS - 1) % GROWTH_SLOTS;
    if (g->count == 0 || now - g->t[last] >= GROWTH_STEP_SECONDS) {
        g->t[g->head] = now;
        g->bytes[g->head] = bytes;
        g->head = (g->head + 1) % GROWTH_SLOTS;
        if (g->count < GROWTH_SLOTS) g->count++;
    }
    /* The oldest stored sample still inside the window. */
    int oldest = (g->head + GROWTH_SLOTS - g->count) % GROWTH_SLOTS;
    for (int i = 0; i < g->count; i++) {
        int idx = (oldest + i) % GROWTH_SLOTS;
        if (now - g->t[idx] <= GROWTH_WINDOW_SECONDS) {
            oldest = idx;
            break;
        }
    }
    double dt = now - g->t[oldest];
    if (dt < 1.0) return 0;
    *per_minute = ((double)bytes - (double)g->bytes[oldest]) * 60.0 / dt;
    return 1;
}
