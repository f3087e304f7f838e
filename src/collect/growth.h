/* growth: resident-memory growth per minute from a small ring of samples (the column that finds leaks). */
#ifndef DIAGTOP_GROWTH_H
#define DIAGTOP_GROWTH_H

#define GROWTH_SLOTS 32
#define GROWTH_STEP_SECONDS 10.0  /* one stored sample per step: 32 slots cover 5 minutes */
#define GROWTH_WINDOW_SECONDS 300.0

struct growth {
    double t[GROWTH_SLOTS];
    unsigned long long bytes[GROWTH_SLOTS];
    int head, count;
};

/* Records a sample (kept only if GROWTH_STEP_SECONDS have passed since the last stored one) and returns 1 with the
 * growth in bytes per minute between the oldest sample inside the window and this one, or 0 if less than a second
 * of history exists. */
int growth_add(struct growth *g, double now, unsigned long long bytes, double *per_minute);
#endif
