#include "history.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define UNKNOWN 0xFFFFu
#define CODE_MAX 0xFFFEu
#define LOG_STEPS 1000.0 /* codes per doubling: each step is 2^(1/1000), 0.07% */

static const struct {
    const char *key, *label;
    int linear; /* tenths of a percent; else a log scale */
} fields[HIST_FIELDS] = {
    [HIST_CPU] = {"cpu_percent", "CPU%", 1},
    [HIST_RES] = {"res_bytes", "RES", 0},
    [HIST_DISK_READ] = {"disk_read_bytes_per_second", "DISK R/s", 0},
    [HIST_DISK_WRITE] = {"disk_write_bytes_per_second", "DISK W/s", 0},
    [HIST_NET_RECEIVED] = {"net_received_bytes_per_second", "NET R/s", 0},
    [HIST_NET_SENT] = {"net_sent_bytes_per_second", "NET W/s", 0},
    [HIST_WAIT] = {"wait_percent", "WAIT%", 1},
};

const char *history_field_key(enum history_field f) { return fields[f].key; }
const char *history_field_label(enum history_field f) { return fields[f].label; }

void history_clock_tick(struct history_clock *c, double now)
{
    double last = c->seq ? c->t[(c->seq - 1) % HISTORY_SLOTS] : 0;
    c->storing = !c->seq || now - last >= HISTORY_MIN_STEP;
    if (c->storing) c->t[c->seq++ % HISTORY_SLOTS] = now;
}

/* Where sample seq of h lives; the ring is linear until it reaches HISTORY_SLOTS, so growing keeps the order. */
static unsigned slot_of(const struct history *h, unsigned long long seq)
{
    unsigned long long k = seq - h->first;
    return h->cap == HISTORY_SLOTS ? (unsigned)(k % HISTORY_SLOTS) : (unsigned)k;
}

/* Makes room for sample seq; new slots read as unknown, so a sample missed for want of memory is a gap. */
static int ensure_slot(struct history *h, unsigned long long seq)
{
    unsigned long long need = seq - h->first + 1;
    if (h->cap == HISTORY_SLOTS || need <= h->cap) return 0;
    unsigned cap = h->cap ? h->cap : 8;
    while (cap < need && cap < HISTORY_SLOTS) cap *= 2;
    if (cap > HISTORY_SLOTS) cap = HISTORY_SLOTS;
    struct history_sample *s = realloc(h->s, cap * sizeof *s);
    if (!s) return -1;
    memset(s + h->cap, 0xFF, (cap - h->cap) * sizeof *s);
    h->s = s;
    h->cap = cap;
    return 0;
}

struct history_sample *history_add(struct history *h, const struct history_clock *c)
{
    if (!c->storing) return NULL;
    unsigned long long seq = c->seq - 1;
    if (!h->have) {
        h->first = seq;
        h->have = 1;
    }
    if (ensure_slot(h, seq) < 0) return NULL;
    struct history_sample *s = &h->s[slot_of(h, seq)];
    memset(s, 0xFF, sizeof *s);
    return s;
}

struct history_sample *history_current(struct history *h, const struct history_clock *c)
{
    if (!c->storing || !h->have) return NULL;
    unsigned long long seq = c->seq - 1;
    int held = h->cap == HISTORY_SLOTS || seq - h->first < h->cap; /* not when its add ran out of memory */
    return held ? &h->s[slot_of(h, seq)] : NULL;
}

void history_set(struct history_sample *s, enum history_field f, double value)
{
    unsigned code;
    if (isnan(value)) code = UNKNOWN;
    else if (fields[f].linear) code = value <= 0 ? 0 : value * 10 >= CODE_MAX ? CODE_MAX : (unsigned)lround(value * 10);
    else if (value < 1) code = 0;
    else {
        double k = 1 + round(log2(value) * LOG_STEPS);
        code = k >= CODE_MAX ? CODE_MAX : (unsigned)k;
    }
    s->v[f] = (uint16_t)code;
}

double history_get(const struct history_sample *s, enum history_field f)
{
    unsigned code = s->v[f];
    if (code == UNKNOWN) return NAN;
    if (fields[f].linear) return code / 10.0;
    return code == 0 ? 0 : exp2((code - 1) / LOG_STEPS);
}

size_t history_read(const struct history *h, const struct history_clock *c, double since, struct history_point *out,
                    size_t max)
{
    if (!h->have || !h->cap || !c->seq) return 0;
    unsigned long long end = c->seq, begin = h->first;
    if (end - begin > HISTORY_SLOTS) begin = end - HISTORY_SLOTS; /* the clock keeps no older times */
    if (h->cap < HISTORY_SLOTS && end - h->first > h->cap) end = h->first + h->cap; /* the last add failed */
    size_t n = 0;
    for (unsigned long long seq = begin; seq < end && n < max; seq++) {
        double t = c->t[seq % HISTORY_SLOTS];
        if (t < since) continue;
        const struct history_sample *s = &h->s[slot_of(h, seq)];
        out[n].t = t;
        for (int f = 0; f < HIST_FIELDS; f++) out[n].v[f] = history_get(s, (enum history_field)f);
        n++;
    }
    return n;
}

void history_free(struct history *h)
{
    free(h->s);
    memset(h, 0, sizeof *h);
}
