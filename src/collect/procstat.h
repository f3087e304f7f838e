/* procstat: parsers for /proc/PID/stat and /proc/PID/statm text. Pure functions, no I/O. */
#ifndef DIAGTOP_PROCSTAT_H
#define DIAGTOP_PROCSTAT_H
#include <stddef.h>

#define PROCSTAT_COMM_MAX 64
#define PROCSTAT_PF_KTHREAD 0x00200000u /* task flag of kernel threads (include/linux/sched.h) */

struct procstat {
    int pid;
    char comm[PROCSTAT_COMM_MAX]; /* raw bytes as the kernel gave them (not sanitized) */
    char state;
    int ppid;
    unsigned int flags;
    unsigned long long minflt, majflt;
    unsigned long long utime, stime;   /* clock ticks */
    unsigned long long cutime, cstime; /* clock ticks, waited-for children */
    long priority, nice, num_threads;
    unsigned long long starttime; /* clock ticks after boot */
    unsigned long long vsize;     /* bytes */
    long long rss;                /* pages */
    /* Where the program's code and its stack are: an execve() changes them, nothing else does. 0 when the reader
     * may not look at the process's memory, and for a zombie. */
    unsigned long long startcode, endcode, startstack;
    int processor;
    unsigned int rt_priority, policy;
    unsigned long long blkio_ticks; /* clock ticks blocked on block I/O (delay accounting; 0 while it is off) */
};

struct procstatm {
    unsigned long long size, resident, shared, text, data; /* pages */
};

/* Parses one stat line. The command name sits between the first '(' and the LAST ')' and may itself contain
 * spaces, parentheses and any byte. Returns 0, or -1 if the text is not a stat line. */
int procstat_parse(const char *buf, size_t len, struct procstat *out);

/* Reads and parses /proc/PID/stat, or /proc/PID/task/TID/stat when tid > 0. Returns 0, or -1 when the task is
 * gone or unreadable. */
int procstat_read(int pid, int tid, struct procstat *out);

/* One thread at one moment: for CPU% over an interval (two samples) and for names and states. */
struct thread_sample {
    int tid;
    unsigned long long ticks; /* utime + stime */
    long long runtime_ns;     /* time on a CPU from schedstat (nanoseconds, precise over short intervals); -1 */
    char state;
    char name[PROCSTAT_COMM_MAX];
};

/* The first field of /proc/PID/task/TID/schedstat: nanoseconds the thread spent on a CPU; -1 when unreadable. */
long long procstat_read_runtime_ns(int pid, int tid);

/* Samples every thread of pid (up to max); returns the count. with_runtime also reads each thread's schedstat. */
int procstat_sample_threads(int pid, struct thread_sample *out, int max, int with_runtime);

/* Parses statm ("size resident shared text lib data dt"). Returns 0 or -1. */
int procstat_parse_statm(const char *buf, struct procstatm *out);
#endif
