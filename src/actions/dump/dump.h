/* dump: a gdb-loadable ELF core of a live process, written by diagtop itself. Everything that can be read
 * before the stop is (mappings, auxv, names); while stopped only registers and memory are copied, sparse (pages
 * never touched, and with CAP_SYS_ADMIN pages mapped to the shared zero page, are not read; pages of zeros are
 * not written); headers and notes are written after the process runs again. Any number of mappings: from
 * 65,535 program headers on, the count is in section header 0 as the kernel writes it. The file is created
 * 0600 under a temporary name and renamed without ever replacing a file.
 * Two ways to copy memory: a snapshot (snapshot.h: the process clones a frozen copy of itself, paused only while
 * the kernel copies its page tables, and the copy is read while the process runs on), the default wherever it is
 * safe; or stop-and-copy (the process stays stopped until its memory is copied). Regions a fork does not copy
 * faithfully (MADV_DONTFORK, MADV_WIPEONFORK, MAP_SHARED) are copied from the process during the pause when they
 * are small, and otherwise read while it runs and reported as not snapshot-consistent. */
#ifndef DIAGTOP_DUMP_H
#define DIAGTOP_DUMP_H
#include <signal.h>
#include <stddef.h>

struct ptrace_session;

enum dump_mode {
    DUMP_MODE_AUTO,     /* a snapshot where it is safe, else stop-and-copy (the result says why) */
    DUMP_MODE_SNAPSHOT, /* a snapshot or nothing: fails with the reason instead of falling back */
    DUMP_MODE_STOP,     /* stop-and-copy */
};

struct dump_options {
    const char *path;        /* the core file to create (must not exist) */
    unsigned filter;         /* coredump_filter bits; used when filter_set, else the process's own */
    int filter_set;
    int full;                /* every readable mapping, whole */
    int first_tid;           /* the thread written first (gdb's "current" thread); 0: the main thread */
    double timeout;          /* seconds for every thread to stop */
    enum dump_mode mode;
    const volatile sig_atomic_t *cancel;
    /* Called between chunks with bytes copied so far and the total to copy. */
    void (*progress)(void *arg, unsigned long long done, unsigned long long total);
    void *progress_arg;
    /* Every thread stopped already by the caller (signal_trap's hold): used as it is; the caller detaches. Held at
     * a signal (siginfo given), the dump is a snapshot where one is safe (the main thread is not the one holding
     * the signal): once the copy exists every thread runs on but the held ones (the thread that took the signal
     * waits with it, for the caller to deliver, so that the process neither dies nor handles it before the copy is
     * read). Held at an exit, it is stop-and-copy. */
    struct ptrace_session *held;
    const siginfo_t *siginfo; /* with held: the first thread's signal as it came, for the core's NT_SIGINFO */
};

/* A dumped region a snapshot does not hold as it was at the pause (a MAP_SHARED one only when writable). */
enum dump_region_kind { DUMP_REGION_SHARED, DUMP_REGION_DONTFORK, DUMP_REGION_WIPEONFORK };
struct dump_region {
    unsigned long long start, end;
    unsigned long long bytes; /* of it in the core */
    char path[256];
    enum dump_region_kind kind;
    int consistent; /* copied from the process during the pause; else read while it ran */
};
#define DUMP_REGIONS_MAX 16

struct dump_result {
    char path[4096];
    unsigned long long apparent_bytes, allocated_bytes, estimated_bytes;
    unsigned long long bytes_read, bytes_written;
    int threads, mappings_written, mappings_skipped;
    double total_ms;
    double stopped_ms; /* the pauses together */
    unsigned filter;
    enum dump_mode mode;   /* DUMP_MODE_SNAPSHOT or DUMP_MODE_STOP: what was done */
    char mode_reason[512]; /* why stop-and-copy ("" for a snapshot) */
    /* Each stop from the first interrupt to the last detach: stop-and-copy's one; a snapshot's clone and, when
     * the copy's zombie was reaped by the main thread, that thread's short stop. */
    double pauses_ms[2];
    int npauses;
    double pause_longest_ms;
    struct dump_region regions[DUMP_REGIONS_MAX]; /* the first of them, in address order */
    int nregions, regions_total;
    char zombie[256]; /* why the copy's zombie stayed under the process ("" when it was reaped) */
};

void dump_options_default(struct dump_options *o);
/* Estimated bytes of memory the dump would copy (before sparseness), for a confirmation. Returns 0 or -errno. */
int dump_estimate(int pid, const struct dump_options *o, unsigned long long *bytes, char *err, size_t errlen);
/* The mode dump_write will try first: DUMP_MODE_SNAPSHOT, or DUMP_MODE_STOP with why (a snapshot could still
 * fall back once the process is stopped). */
enum dump_mode dump_mode_predict(int pid, const struct dump_options *o, char *why, size_t whylen);
const char *dump_mode_name(enum dump_mode m);
const char *dump_region_kind_name(enum dump_region_kind k);
int dump_write(int pid, const struct dump_options *o, struct dump_result *r, char *err, size_t errlen);
/* The default file name: core.<comm>.<pid>.<YYYYmmdd-HHMMSS> in dir. */
void dump_default_name(int pid, const char *dir, char *buf, size_t bufsz);
#endif
