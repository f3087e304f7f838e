/* systotals: the machine-wide numbers of the header: uptime, load, CPU usage per core from /proc/stat deltas,
 * memory and swap (libproc2's meminfo). Task counts come from the process table. */
#ifndef DIAGTOP_SYSTOTALS_H
#define DIAGTOP_SYSTOTALS_H
#include <stddef.h>

#define SYSTOTALS_MAX_CPUS 1024
#define SYSTOTALS_STAT_TEXT_MAX (256 * 1024)

struct cpu_ticks {
    unsigned long long user, nice, system, idle, iowait, irq, softirq, steal;
};

struct cpu_usage { /* percentages of the interval between two samples */
    double user, system, iowait, steal, idle;
};

struct procstat_sys { /* parsed /proc/stat */
    struct cpu_ticks total;
    int ncpu;
    struct cpu_ticks cpu[SYSTOTALS_MAX_CPUS];
    unsigned long long btime; /* boot time, seconds since the epoch */
};

struct mem_totals { /* bytes */
    unsigned long long total, free, available, used, buffers, cached, swap_total, swap_free, swap_used;
};

struct systotals {
    double uptime_seconds;
    double load[3];
    long hertz;
    long page_size;
    struct procstat_sys prev, cur;
    int have_prev;
    struct cpu_usage total;
    struct cpu_usage *per_cpu; /* cur.ncpu entries */
    struct mem_totals mem;
    char stat_text[SYSTOTALS_STAT_TEXT_MAX]; /* read buffer: /proc/stat grows with CPUs and interrupts */
};

/* Parses /proc/stat text. Returns 0 or -1. */
int systotals_parse_stat(const char *text, struct procstat_sys *out);
/* Percentages between two samples (a zero interval gives all-idle). */
struct cpu_usage systotals_usage(const struct cpu_ticks *a, const struct cpu_ticks *b);

struct systotals *systotals_new(void);
/* Re-reads everything; CPU usage is relative to the previous call. Returns 0 or -errno with a reason. */
int systotals_refresh(struct systotals *st, char *err, size_t errlen);
void systotals_free(struct systotals *st);
#endif
