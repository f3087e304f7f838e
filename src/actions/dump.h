/* dump: a gdb-loadable ELF core of a live process, written by diagtop itself. Everything that can be read
 * before the stop is (mappings, auxv, names); while stopped only registers and memory are copied, sparse (pages
 * never touched, and with CAP_SYS_ADMIN pages mapped to the shared zero page, are not read; pages of zeros are
 * not written); headers and notes are written after the process runs again. Any number of mappings: from
 * 65,535 program headers on, the count is in section header 0 as the kernel writes it. The file is created
 * 0600 under a temporary name and renamed without ever replacing a file. */
#ifndef DIAGTOP_DUMP_H
#define DIAGTOP_DUMP_H
#include <signal.h>
#include <stddef.h>

struct dump_options {
    const char *path;        /* the core file to create (must not exist) */
    unsigned filter;         /* coredump_filter bits; used when filter_set, else the process's own */
    int filter_set;
    int full;                /* every readable mapping, whole */
    int first_tid;           /* the thread written first (gdb's "current" thread); 0: the main thread */
    double timeout;          /* seconds for every thread to stop */
    const volatile sig_atomic_t *cancel;
    /* Called between chunks with bytes copied so far and the total to copy. */
    void (*progress)(void *arg, unsigned long long done, unsigned long long total);
    void *progress_arg;
};

struct dump_result {
    char path[4096];
    unsigned long long apparent_bytes, allocated_bytes, estimated_bytes;
    unsigned long long bytes_read, bytes_written;
    int threads, mappings_written, mappings_skipped;
    double total_ms, stopped_ms;
    unsigned filter;
};

void dump_options_default(struct dump_options *o);
/* Estimated bytes of memory the dump would copy (before sparseness), for a confirmation. Returns 0 or -errno. */
int dump_estimate(int pid, const struct dump_options *o, unsigned long long *bytes, char *err, size_t errlen);
int dump_write(int pid, const struct dump_options *o, struct dump_result *r, char *err, size_t errlen);
/* The default file name: core.<comm>.<pid>.<YYYYmmdd-HHMMSS> in dir. */
void dump_default_name(int pid, const char *dir, char *buf, size_t bufsz);
#endif
