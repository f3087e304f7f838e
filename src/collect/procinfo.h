/* procinfo: one process in depth, read from /proc on demand (never stops anything): general facts, memory
 * accounting (status + smaps_rollup), mapped modules, open descriptors (sockets resolved through /proc/net),
 * threads, environment and I/O counters. A field that cannot be read is -1 / NULL; a section that cannot be read
 * at all carries a one-line reason, and never fails the others. */
#ifndef DIAGTOP_PROCINFO_H
#define DIAGTOP_PROCINFO_H
#include <stddef.h>
#include <sys/types.h>

#include "cgroup_name.h"

enum procinfo_section {
    PI_GENERAL = 1 << 0, PI_MEMORY = 1 << 1, PI_MODULES = 1 << 2, PI_FDS = 1 << 3, PI_THREADS = 1 << 4,
    PI_ENV = 1 << 5, PI_IO = 1 << 6, PI_ALL = 0x7F
};

/* Section names as used by --section: "general", "memory", ... */
const char *procinfo_section_name(enum procinfo_section s);
/* Parses "general,memory"; returns the mask or -1. */
int procinfo_parse_sections(const char *list);


struct pi_ancestor { int pid; char comm[64]; };
struct pi_limit { char name[64]; char soft[32], hard[32], units[16]; };

struct pi_general {
    int pid, ppid;
    char comm[64];
    struct pi_ancestor ancestors[32]; /* parent, grandparent, ... up to 1 */
    int nancestors;
    long long ruid, euid, rgid, egid;
    char user[64];
    char state;
    char start_time[32];      /* ISO 8601 UTC */
    double age_seconds;
    double utime, stime, cutime, cstime; /* seconds */
    long nice, priority;
    char policy[16];
    long threads;
    char *exe; int exe_deleted;
    char *cwd;
    char *cmdline;            /* arguments joined by spaces, raw bytes */
    char *cgroup;             /* cgroup v2 path */
    struct cgroup_container container; /* from the cgroup path; runtime "" when it names none */
    char namespaces[8][48];   /* "mnt:[4026531840]" */
    int nnamespaces;
    int ns_differs[8];        /* namespaces[i] is not diagtop's own (1), is (0), or ours is unreadable (-1) */
    int nspid[8];             /* NSpid: its PID in each PID namespace it is in, ours (outermost) first */
    int nnspid;
    long long oom_score, oom_score_adj;
    struct pi_limit limits[20];
    int nlimits;
};

struct pi_memory { /* bytes, -1 unknown */
    long long rss, hwm, rss_anon, rss_file, rss_shmem, vm_size, vm_peak, vm_data, vm_stk, vm_lck, vm_swap, huge;
    long long pss, uss, private_clean, private_dirty, swap, swap_pss, anon_huge;
};

/* One line of /proc/PID/maps: a library is usually four (r--p header, r-xp text, r--p relro, rw-p data). */
struct pi_mapping {
    unsigned long long start, end, offset;
    char perms[8];                       /* as maps says: "r-xp" */
};

struct pi_module {
    char *path;
    unsigned long long start, end, size; /* lowest start, highest end, sum of mapped bytes */
    struct pi_mapping *maps; int nmaps;  /* its mappings in address order */
    size_t maps_cap;
    int shared_object;
};

struct pi_fd {
    int fd;
    char type[16];    /* file, socket, pipe, anon, dev, ... */
    char *target;     /* path or a description of the socket */
};

struct pi_thread {
    int tid;
    char name[64];
    char state;
    double cpu_percent; /* -1 unknown */
    double utime, stime;
    char wchan[64];
};

struct pi_env { char *name, *value; };

struct pi_io { long long rchar, wchar, syscr, syscw, read_bytes, write_bytes, cancelled_write_bytes; };

struct proc_info {
    int pid;
    unsigned sections; /* what was asked */
    struct pi_general general;
    struct pi_memory memory;
    struct pi_module *modules; int nmodules;
    struct pi_fd *fds; int nfds; long long fd_soft_limit;
    struct pi_thread *threads; int nthreads;
    struct pi_env *env; int nenv;
    struct pi_io io;
    /* Why a section (or part of it) could not be read; "" when it could. */
    char general_err[128], memory_err[128], smaps_err[128], modules_err[128], fds_err[128], threads_err[128],
        env_err[128], io_err[128];
};

/* Reads the asked sections of pid. cpu_sample: seconds over which thread CPU% is measured (0: not measured).
 * Returns 0, or -ESRCH with a reason when the process does not exist. */
int procinfo_collect(int pid, unsigned sections, double cpu_sample, struct proc_info *out, char *err, size_t errlen);
void procinfo_free(struct proc_info *pi);

/* Parsers, exposed for tests. */
void procinfo_parse_status(const char *text, struct pi_general *g, struct pi_memory *m);
void procinfo_parse_smaps_rollup(const char *text, struct pi_memory *m);
int procinfo_parse_limits(const char *text, struct pi_limit *out, int max);
void procinfo_parse_io(const char *text, struct pi_io *io);
/* Does an environment variable's name look like it holds a secret (SECRET, TOKEN, PASSWORD, KEY, CREDENTIAL)? */
int procinfo_env_is_secret(const char *name);
#endif
