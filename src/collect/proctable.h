/* proctable: the process table. Samples every process (and, on request, every thread) from /proc/PID/stat through
 * descriptors kept open across refreshes, computes CPU% from deltas keyed on (pid, start time), and fills the
 * costlier fields (statm, command line, exe, runtime) only for the rows a caller asks for. It only reads: it never
 * signals, stops or attaches to anything. */
#ifndef DIAGTOP_PROCTABLE_H
#define DIAGTOP_PROCTABLE_H
#include <stddef.h>
#include <sys/types.h>

#include "history.h"
#include "runtime.h"

/* What a caller needs beyond /proc/PID/stat, per row (see render/columns.c for which column needs what). */
enum proc_need {
    PROC_NEED_STATM = 1 << 0,   /* exact resident (RES, %MEM) and shared memory (SHR) */
    PROC_NEED_CMDLINE = 1 << 1, /* command line, cached per process identity */
    PROC_NEED_EXE = 1 << 2,     /* executable path, cached */
    PROC_NEED_RUNTIME = 1 << 3, /* runtime kind and agent endpoint, cached */
    PROC_NEED_IO = 1 << 4,      /* storage bytes read and written, and their rates (io) */
    PROC_NEED_SCHED = 1 << 5,   /* time waiting for a CPU and context switches (schedstat of every thread) */
    PROC_NEED_OOM = 1 << 6,     /* the OOM killer's score */
    PROC_NEED_UNIT = 1 << 7,    /* the systemd unit or container of the cgroup, cached */
    PROC_NEED_NET = 1 << 8,     /* TCP bytes received and sent (one sock_diag dump a refresh, fds matched) */
    PROC_NEED_ALL = (1 << 9) - 1, /* what JSON carries */
};

struct proc_row {
    int pid;  /* the TID for thread rows */
    int tgid; /* the process a thread belongs to (== pid for processes) */
    int ppid;
    int is_thread, is_kernel;
    uid_t uid;
    int uid_known;
    char state;
    long priority, nice, nlwp;
    unsigned long long utime, stime;  /* clock ticks */
    unsigned long long start_ticks;   /* clock ticks after boot */
    unsigned long long vsize_bytes;
    unsigned long long rss_bytes;     /* statm's (exact) once filled with PROC_NEED_STATM, else stat's (lags) */
    long long shared_bytes;           /* -1: not read or unreadable */
    double cpu_percent, mem_percent;
    double growth_bytes_per_min;      /* RES growth over the last minutes */
    int growth_known;                 /* at least a second of history */
    char comm[64];                    /* raw, sanitize before display */
    const char *cmdline;              /* raw bytes, arguments separated by NUL; NULL until filled or unreadable */
    size_t cmdline_len;
    const char *exe;                  /* NULL until filled or unreadable (other user's process) */
    int exe_deleted;
    enum runtime_kind runtime;        /* RUNTIME_UNKNOWN until filled or when undeterminable */
    int agent;                        /* an agent endpoint exists (gops port, HotSpot socket) */
    /* Activity, over the time since the row was last filled with its need (a rate needs two fills). */
    int io_known, io_rates_known;     /* io: 0 until read, or unreadable (another user's process) */
    unsigned long long disk_read_bytes, disk_write_bytes;
    double disk_read_per_sec, disk_write_per_sec;
    int sched_known, sched_rates_known;
    unsigned long long wait_ns, switches; /* summed over live threads */
    double wait_percent;              /* runnable, waiting for a CPU: 100 = one thread the whole interval */
    double switches_per_sec;
    int io_wait_known;                /* delay accounting on (kernel.task_delayacct) and an interval seen */
    double io_wait_percent;           /* blocked on block I/O: 100 = one thread the whole interval (stat field 42) */
    int io_delay_known;               /* delay accounting on at this refresh */
    double io_delay_seconds;          /* time blocked on block I/O in all, since the process started */
    int net_known, net_rates_known;   /* 0: unreadable fds, another network namespace, or a thread row */
    unsigned long long net_received_bytes, net_sent_bytes; /* TCP, since diagtop first sampled the process */
    double net_received_per_sec, net_sent_per_sec;
    int oom_score;                    /* -1: not read or unreadable */
    const char *unit;                 /* systemd unit or container ("" for none); NULL until filled */
};

struct task_counts {
    int total, running, sleeping, stopped, zombie, threads;
};

struct proctable;

struct proctable *proctable_new(void);
void proctable_free(struct proctable *t);

/* Re-samples every process (and threads when with_threads) from /proc/PID/stat; costlier fields come through
 * proctable_fill. Returns 0 or -errno with a reason (/proc cannot be listed). */
int proctable_refresh(struct proctable *t, int with_threads, char *err, size_t errlen);

/* Fills the extra fields in needs for the given rows only (the rows on screen). */
void proctable_fill(struct proctable *t, struct proc_row **rows, size_t n, unsigned needs);

/* The rows of the last refresh; valid until the next refresh. */
struct proc_row **proctable_rows(struct proctable *t, size_t *n);
/* proctable_fill for the row of process or thread pid in the last refresh (a pane or a request watching one
 * process); returns the row, or NULL when pid was not in it. */
struct proc_row *proctable_fill_pid(struct proctable *t, int pid, unsigned needs);
/* Process pid's history samples taken at or after since (monotonic seconds), oldest first; returns how many. */
size_t proctable_history(struct proctable *t, int pid, double since, struct history_point *out, size_t max);
struct task_counts proctable_counts(const struct proctable *t);
/* Whether the kernel keeps delay accounting (kernel.task_delayacct), read at each refresh: IO% needs it. */
int proctable_delayacct(const struct proctable *t);
/* Seconds covered by the CPU% of the last refresh (0 on the first). */
double proctable_interval(const struct proctable *t);
/* Memory total used for %MEM, in bytes. */
unsigned long long proctable_mem_total(const struct proctable *t);
/* How many /proc/PID/stat descriptors are kept open (for diagnostics and benchmarks). */
size_t proctable_kept_fds(const struct proctable *t);
#endif
