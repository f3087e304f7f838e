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

/* One resource's pressure stall information (/proc/pressure/RESOURCE): the share of wall time in which some
 * (or all: full) non-idle tasks were stalled on it, averaged over 10, 60 and 300 s, in percent. */
struct pressure {
    int known; /* 0: no such file (a kernel without PSI, or psi=0) */
    double some[3], full[3];
    unsigned long long some_total_us, full_total_us; /* stalled time since boot */
};

enum pressure_resource { PRESSURE_CPU, PRESSURE_IO, PRESSURE_MEMORY, PRESSURE_COUNT };

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
    struct pressure pressure[PRESSURE_COUNT];
    char stat_text[SYSTOTALS_STAT_TEXT_MAX]; /* read buffer: /proc/stat grows with CPUs and interrupts */
};

/* Parses /proc/stat text. Returns 0 or -1. */
int systotals_parse_stat(const char *text, struct procstat_sys *out);
/* Percentages between two samples (a zero interval gives all-idle). */
struct cpu_usage systotals_usage(const struct cpu_ticks *a, const struct cpu_ticks *b);

/* Parses /proc/pressure text ("some avg10=… avg60=… avg300=… total=…" and a "full" line). Returns 0 or -1. */
int systotals_parse_pressure(const char *text, struct pressure *out);
/* "cpu", "io", "memory": the file's name, and the key JSON uses. */
const char *systotals_pressure_name(enum pressure_resource r);

struct systotals *systotals_new(void);
/* Re-reads everything; CPU usage is relative to the previous call. Returns 0 or -errno with a reason. */
int systotals_refresh(struct systotals *st, char *err, size_t errlen);
void systotals_free(struct systotals *st);
#endif
