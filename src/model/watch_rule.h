/* watch_rule: what `diagtop watch` waits for and what it does then. The conditions are parsed from the command
 * line (or a form, or a request) and evaluated on the samples of one process; pure functions, no I/O, so the
 * rules are tested alone. */
#ifndef DIAGTOP_WATCH_RULE_H
#define DIAGTOP_WATCH_RULE_H
#include <stddef.h>

enum watch_cond_kind {
    WATCH_CPU,        /* CPU% (100 = one core) at or above the limit for `seconds` in a row */
    WATCH_CPU_BELOW,  /* CPU% below the limit for `seconds` in a row (a hang, a stalled worker) */
    WATCH_RSS,        /* resident bytes at or above the limit */
    WATCH_RSS_GROWTH, /* resident growth in bytes per minute at or above the limit, fitted over `seconds` */
    WATCH_THREADS,    /* threads at or above the limit */
    WATCH_FDS,        /* open descriptors at or above the limit */
    WATCH_SIGNAL,     /* the process receives one of `signals` (held at its delivery: a PID's watch only) */
    WATCH_EXIT,       /* the process is about to exit (held at PTRACE_EVENT_EXIT) */
    WATCH_COND_KINDS
};

struct watch_cond {
    enum watch_cond_kind kind;
    double limit;
    double seconds; /* CPU: how long it must hold (0: one interval); growth: the window (default 60) */
    unsigned long long signals; /* WATCH_SIGNAL: bit (sig - 1) of each */
};

enum watch_action_kind { WATCH_DO_DUMP, WATCH_DO_STACK, WATCH_DO_PROFILE, WATCH_DO_HEAP, WATCH_DO_EXEC };

struct watch_action {
    enum watch_action_kind kind;
    double seconds; /* profile: how long (default 10) */
    char cmd[1024]; /* exec: a shell command */
};

/* One sample of one process, taken at monotonic time t. */
struct watch_sample {
    double t;
    double cpu_pct; /* over the interval that ends at t; < 0 for the first sample */
    double interval_start;
    unsigned long long rss; /* bytes */
    long threads, fds;      /* fds < 0 when not read */
};

/* The resident sizes of the last samples, for the growth fit (oldest first once full). */
#define WATCH_RING 1024
struct watch_history {
    double t[WATCH_RING];
    double rss[WATCH_RING];
    int n, next;
};

/* What one condition remembers of one process between samples. */
struct watch_cond_state {
    double since; /* start of the run of samples for which it holds; < 0 when it does not hold */
};

/* Whether c is one a process is held for (a signal, an exit), not one evaluated on samples. */
int watch_cond_is_trap(const struct watch_cond *c);
/* --cpu PCT[:SECONDS] and the others: arg is the option's value. Returns 0, or -1 with a reason. */
int watch_cond_parse(enum watch_cond_kind kind, const char *arg, struct watch_cond *out, char *err, size_t errlen);
/* --then dump|stack|profile[:SECONDS]|exec:CMD. Returns 0, or -1 with a reason. */
int watch_action_parse(const char *arg, struct watch_action *out, char *err, size_t errlen);
/* A size: digits with an optional fraction and K, M, G or T (powers of 1024; "B" and "iB" allowed after). */
int watch_parse_size(const char *s, unsigned long long *bytes);
const char *watch_cond_name(enum watch_cond_kind kind);
const char *watch_action_name(enum watch_action_kind kind);
/* Whether the conditions need the descriptor count (the only field that costs a directory listing). */
int watch_conds_need_fds(const struct watch_cond *c, int n);

void watch_history_add(struct watch_history *h, double t, unsigned long long rss);
/* The least-squares slope of resident bytes over the samples of the last `window` seconds, in bytes per minute.
 * Returns 0 with it, or -1 while the samples do not yet span the window. */
int watch_history_growth(const struct watch_history *h, double window, double *per_minute);

/* Evaluates c on the newest sample s (and h, the history it is already in). Returns 1 when it holds now, for
 * as long as it asks, with the value compared in *value (CPU%, bytes, bytes per minute, a count) and how long it
 * has held in *held; else 0. */
int watch_cond_eval(const struct watch_cond *c, struct watch_cond_state *st, const struct watch_sample *s,
                    const struct watch_history *h, double *value, double *held);
/* The condition as a person reads it: "cpu >= 90% for 5 s", "rss-growth >= 10.0 MiB/min over 60 s". */
void watch_cond_describe(const struct watch_cond *c, char *buf, size_t bufsz);
/* A value of c's kind as text: "98.5%", "1.20 GiB", "12.0 MiB/min", "512". */
void watch_cond_format_value(const struct watch_cond *c, double v, char *buf, size_t bufsz);
#endif
