/* history: what a process did over the last minutes, one sample a refresh (at most one a second), for the details
 * pane's History tab and the API's charts. Every refresh stores CPU% and RES for every process; the rates read on
 * demand (disk, network, WAIT%) are stored when the refresh read them, and are unknown otherwise. A sample costs
 * 14 bytes (each field in 16 bits); its time is the table's, kept once in a clock shared by every process. */
#ifndef DIAGTOP_HISTORY_H
#define DIAGTOP_HISTORY_H
#include <stddef.h>
#include <stdint.h>

#define HISTORY_SLOTS 600        /* 10 minutes at one sample a second, 15 at the default delay */
#define HISTORY_MIN_STEP 0.95    /* seconds between stored samples; a faster refresh stores every other one */

enum history_field {
    HIST_CPU,           /* percent of one CPU */
    HIST_RES,           /* bytes */
    HIST_DISK_READ,     /* bytes per second */
    HIST_DISK_WRITE,
    HIST_NET_RECEIVED,
    HIST_NET_SENT,
    HIST_WAIT,          /* percent of one CPU spent runnable, waiting for one */
    HIST_FIELDS
};

/* One sample: percents in tenths (linear, up to 6553.4%), sizes and rates on a log scale (0.07% steps). */
struct history_sample { uint16_t v[HIST_FIELDS]; };

/* When each stored sample was taken, shared by every process of a table. */
struct history_clock {
    double t[HISTORY_SLOTS]; /* monotonic seconds of sample seq at t[seq % HISTORY_SLOTS] */
    unsigned long long seq;  /* samples stored so far: the latest is seq - 1 */
    int storing;             /* the current refresh stores a sample */
};

/* One process's samples: a ring that grows to HISTORY_SLOTS as the process lives on. */
struct history {
    struct history_sample *s;
    unsigned cap;
    unsigned long long first; /* the clock's seq of this process's first sample */
    int have;
};

/* A sample decoded; an unknown field is NAN. */
struct history_point {
    double t; /* monotonic seconds */
    double v[HIST_FIELDS];
};

/* A refresh at now: decides whether it stores a sample (HISTORY_MIN_STEP after the last one). */
void history_clock_tick(struct history_clock *c, double now);
/* Starts the current refresh's sample of h, every field unknown; returns it, or NULL when this refresh stores none
 * (or memory ran out: that sample is then missing). */
struct history_sample *history_add(struct history *h, const struct history_clock *c);
/* The current refresh's sample of h if one was started (a later fill sets its rates), else NULL. */
struct history_sample *history_current(struct history *h, const struct history_clock *c);
void history_set(struct history_sample *s, enum history_field f, double value);
double history_get(const struct history_sample *s, enum history_field f);
/* The samples taken at or after since, oldest first, decoded into out (up to max); returns how many. */
size_t history_read(const struct history *h, const struct history_clock *c, double since, struct history_point *out,
                    size_t max);
void history_free(struct history *h);
/* The field's name in JSON and metrics ("cpu_percent", "res_bytes", ...) and its short label ("CPU%", "RES"). */
const char *history_field_key(enum history_field f);
const char *history_field_label(enum history_field f);
#endif
