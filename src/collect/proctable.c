#include "proctable.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/fileio.h"
#include "util/grow.h"
#include "util/tasks.h"
#include "util/text.h"
#include "growth.h"
#include "history.h"
#include "proc_net.h"
#include "procactivity.h"
#include "tcp_counters.h"
#include "thread_sched.h"
#include "procstat.h"
#include "systotals.h"

#define STAT_TEXT_MAX 1024
#define CMDLINE_MAX (64 * 1024)
#define EXE_RECHECK_SECONDS 5.0   /* how often a shown row's exe identity is re-checked for an exec */
#define AGENT_RECHECK_SECONDS 5.0 /* an agent can start listening at any time */
#define YOUNG_PROCESS_SECONDS 2.0 /* a JVM maps libjvm.so shortly after exec: classify again */
#define FD_RESERVE 64             /* descriptors left for everything else */
#define STATM_MAX_AGE_SECONDS 10.0 /* an idle process's statm is re-read at least this often */
#define UNIT_RECHECK_SECONDS 5.0   /* a process can be moved to another cgroup (systemd-run --scope, docker exec) */
#define UNIT_MAX 64
#define OOM_RECHECK_SECONDS 5.0    /* oom_score_adj can be written at any time */
#define FEW_NET_ROWS 16            /* up to this many rows with NET, a quiet one is told by its fd count, not a dump */

/* One process or thread, as long as it keeps its identity (pid, start time). */
struct proc_entry {
    struct proc_row row;
    struct proc_entry *next; /* hash chain */
    int stat_fd, statm_fd, io_fd, sched_fd, oom_fd; /* kept open: a pread costs half an open, read and close */
    unsigned gen;
    unsigned long long prev_ticks;
    int have_prev;
    /* Memory can only change when the process runs, faults or loses pages (which shows in its RSS): when none of
     * that happened since statm was read, the value read then still holds. */
    unsigned long long faults, stat_rss;
    int memory_may_have_changed;
    double statm_time;
    unsigned long long statm_rss; /* valid while row.shared_bytes >= 0 */
    struct growth growth;
    struct history history; /* processes only, not thread rows */
    unsigned long long prev_blkio; /* stat's block I/O delay ticks at the previous refresh */
    /* Caches of this identity, dropped when the program changes (exec). */
    char *cmdline;
    int cmdline_tried;
    char *exe;
    int exe_tried;
    dev_t exe_dev;
    ino_t exe_ino;
    double exe_checked;
    int runtime_tried;
    double agent_checked;
    /* The previous fill of the activity counters, for their rates. */
    double io_time, sched_time, net_time;
    unsigned io_gen, sched_gen, net_gen; /* the refresh a rate was last taken in: once per refresh (sort, then draw) */
    struct proc_net_state net;
    char unit[UNIT_MAX];
    double unit_checked;
    int oom_read;
    unsigned long long oom_rss; /* stat's RES when oom_score was read */
    double oom_time;
    /* schedstat's sums when io was read: while they stay, no thread ran, and only a running thread moves its
     * process's I/O counters (the kernel charges I/O to the task that issues it) */
    unsigned long long run_ns, io_run_ns, io_switches;
    long io_nlwp;
    int io_sched_valid;
    struct thread_sched threads_sched; /* a multi-threaded process's per-thread schedstat descriptors */
};

/* What an executable (device, inode) is, so that many processes of one binary read its ELF once. */
#define EXE_KINDS 4096
struct exe_kind {
    dev_t dev;
    ino_t ino;
    enum runtime_kind kind; /* RUNTIME_UNKNOWN: empty slot */
};

struct proctable {
    int procfd;
    struct exe_kind exe_kinds[EXE_KINDS];
    struct proc_entry **buckets;
    size_t nbuckets, nentries;
    unsigned gen;
    double last_time, interval;
    long hertz, page_size;
    unsigned long long mem_total;
    size_t kept_fds, max_kept_fds;
    struct proc_row **rows;
    size_t nrows, rows_cap;
    struct task_counts counts;
    struct history_clock clock; /* when each process's history sample was taken */
    pid_t self;                 /* diagtop's own process: its NET is not read (below) */
    int delayacct;              /* kernel.task_delayacct at this refresh: IO% is known only while it is 1 */
    struct tcp_counters tcp; /* dumped once a refresh, when a row needs it */
    unsigned tcp_gen;
    unsigned net_rows, net_rows_prev, net_rows_gen; /* rows filled with NET this refresh and the previous one */
    int tcp_ok;
    char text[STAT_TEXT_MAX];
};

static size_t bucket_of(const struct proctable *t, int pid) { return ((unsigned)pid * 2654435761u) % t->nbuckets; }

static struct proc_entry *entry_find(struct proctable *t, int pid)
{
    for (struct proc_entry *e = t->buckets[bucket_of(t, pid)]; e; e = e->next)
        if (e->row.pid == pid) return e;
    return NULL;
}

static void table_grow(struct proctable *t)
{
    size_t nb = t->nbuckets * 2;
    struct proc_entry **b = calloc(nb, sizeof *b);
    if (!b) return; /* longer chains, still correct */
    struct proc_entry **old = t->buckets;
    size_t oldn = t->nbuckets;
    t->buckets = b;
    t->nbuckets = nb;
    for (size_t i = 0; i < oldn; i++) {
        for (struct proc_entry *e = old[i], *next; e; e = next) {
            next = e->next;
            size_t k = bucket_of(t, e->row.pid);
            e->next = b[k];
            b[k] = e;
        }
    }
    free(old);
}

static struct proc_entry *entry_add(struct proctable *t, int pid)
{
    struct proc_entry *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->row.pid = pid;
    e->row.oom_score = -1;
    e->stat_fd = e->statm_fd = e->io_fd = e->sched_fd = e->oom_fd = -1;
    if (t->nentries + 1 > t->nbuckets * 2) table_grow(t);
    size_t k = bucket_of(t, pid);
    e->next = t->buckets[k];
    t->buckets[k] = e;
    t->nentries++;
    return e;
}

static void close_fd(struct proctable *t, int *fd)
{
    if (*fd < 0) return;
    close(*fd);
    *fd = -1;
    t->kept_fds--;
}

/* Forgets what belongs to the program the identity ran (on exec or a new identity). */
static void entry_drop_program_caches(struct proc_entry *e)
{
    free(e->cmdline);
    free(e->exe);
    e->cmdline = e->exe = NULL;
    e->cmdline_tried = e->exe_tried = e->runtime_tried = 0;
    e->exe_checked = 0;
    e->row.cmdline = e->row.exe = NULL;
    e->row.cmdline_len = 0;
    e->row.exe_deleted = 0;
    e->row.runtime = RUNTIME_UNKNOWN;
    e->row.agent = 0;
}

/* Closes the descriptors kept for the fields filled on demand (stat's stays: every refresh reads it). */
static void entry_close_kept(struct proctable *t, struct proc_entry *e)
{
    close_fd(t, &e->statm_fd);
    close_fd(t, &e->io_fd);
    close_fd(t, &e->sched_fd);
    close_fd(t, &e->oom_fd);
    thread_sched_close(&e->threads_sched, &t->kept_fds);
}

static void entry_reset_identity(struct proctable *t, struct proc_entry *e)
{
    entry_drop_program_caches(e);
    entry_close_kept(t, e);
    e->have_prev = 0;
    memset(&e->growth, 0, sizeof e->growth);
    history_free(&e->history);
    e->row.uid_known = 0;
    e->row.shared_bytes = -1;
    e->row.io_known = e->row.io_rates_known = e->row.sched_known = e->row.sched_rates_known = 0;
    e->row.oom_score = -1;
    e->oom_read = e->io_sched_valid = 0;
    e->row.unit = NULL;
    e->unit_checked = 0;
    e->row.net_known = e->row.net_rates_known = 0;
    e->row.net_received_bytes = e->row.net_sent_bytes = 0;
    proc_net_state_free(&e->net);
}

static void entry_free(struct proctable *t, struct proc_entry *e)
{
    entry_drop_program_caches(e);
    close_fd(t, &e->stat_fd);
    entry_close_kept(t, e);
    proc_net_state_free(&e->net);
    history_free(&e->history);
    free(e);
}

/* Opens "<path>" under /proc, keeping it only while the descriptor budget allows. */
static int open_kept(struct proctable *t, const char *path, int *keep)
{
    int fd = openat(t->procfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    *keep = t->kept_fds < t->max_kept_fds;
    if (*keep) t->kept_fds++;
    return fd;
}

/* An entry's directory below /proc: "PID" or "TGID/task/TID". */
static void entry_dir(const struct proc_entry *e, char *buf, size_t bufsz)
{
    if (e->row.is_thread) snprintf(buf, bufsz, "%d/task/%d", e->row.tgid, e->row.pid);
    else snprintf(buf, bufsz, "%d", e->row.pid);
}

/* Path of an entry's file below /proc: "PID/name" or "TGID/task/TID/name". */
static void entry_path(const struct proc_entry *e, const char *name, char *buf, size_t bufsz)
{
    char dir[48];
    entry_dir(e, dir, sizeof dir);
    snprintf(buf, bufsz, "%s/%s", dir, name);
}

/* Reads a small file of the entry through a kept descriptor when possible. A kept descriptor of an exited process
 * fails (ESRCH) rather than reading a newcomer with the same pid: then reopen once. */
static ssize_t entry_read(struct proctable *t, struct proc_entry *e, int *fd, const char *name, char *buf,
                          size_t bufsz)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        if (*fd < 0) {
            char path[96];
            int keep;
            entry_path(e, name, path, sizeof path);
            int nfd = open_kept(t, path, &keep);
            if (nfd < 0) return nfd;
            if (!keep) {
                ssize_t r = fileio_pread_once(nfd, buf, bufsz);
                close(nfd);
                return r;
            }
            *fd = nfd;
        }
        ssize_t r = fileio_pread_once(*fd, buf, bufsz);
        if (r > 0) return r;
        close_fd(t, fd);
        if (r == 0) return -ESRCH;
    }
    return -ESRCH;
}

static void row_set_rss(const struct proctable *t, struct proc_row *r, unsigned long long rss)
{
    r->rss_bytes = rss;
    r->mem_percent = t->mem_total ? 100.0 * (double)rss / (double)t->mem_total : 0.0;
}

/* Samples one process or thread from its stat file; returns 0 if it is (still) there. */
static int entry_sample(struct proctable *t, struct proc_entry *e, double now, int first_refresh)
{
    ssize_t n = entry_read(t, e, &e->stat_fd, "stat", t->text, sizeof t->text);
    struct procstat ps;
    if (n <= 0 || procstat_parse(t->text, (size_t)n, &ps) < 0) return -1;

    struct proc_row *r = &e->row;
    if (e->gen == 0 || ps.starttime != r->start_ticks) {
        if (e->gen != 0) entry_reset_identity(t, e);
        r->start_ticks = ps.starttime;
        struct stat st; /* /proc/PID files belong to the process's effective uid */
        if (e->stat_fd >= 0 && fstat(e->stat_fd, &st) == 0) {
            r->uid = st.st_uid;
            r->uid_known = 1;
        }
        r->shared_bytes = -1;
    } else if (strcmp(r->comm, ps.comm) != 0) {
        entry_drop_program_caches(e); /* a new name: most likely an exec */
    }
    if (!r->uid_known) {
        char path[96];
        struct stat st;
        entry_dir(e, path, sizeof path);
        if (fstatat(t->procfd, path, &st, 0) == 0) {
            r->uid = st.st_uid;
            r->uid_known = 1;
        }
    }
    memcpy(r->comm, ps.comm, sizeof r->comm);
    r->state = ps.state;
    r->ppid = ps.ppid;
    r->is_kernel = (ps.flags & PROCSTAT_PF_KTHREAD) != 0;
    r->priority = ps.priority;
    r->nice = ps.nice;
    r->nlwp = ps.num_threads;
    r->utime = ps.utime;
    r->stime = ps.stime;
    unsigned long long rss = ps.rss > 0 ? (unsigned long long)ps.rss * (unsigned long long)t->page_size : 0;
    unsigned long long faults = ps.minflt + ps.majflt;
    e->memory_may_have_changed |= !e->have_prev || ps.utime + ps.stime != e->prev_ticks || rss != e->stat_rss ||
                                  ps.vsize != r->vsize_bytes || faults != e->faults;
    e->faults = faults;
    e->stat_rss = rss;
    r->vsize_bytes = ps.vsize;
    /* stat's rss lags the kernel's per-CPU counters by up to a few hundred KiB; statm's (what top and VmRSS show)
     * does not. Keep statm's while it holds; fill_statm reads it again for the rows that need it. */
    row_set_rss(t, r, !e->memory_may_have_changed && r->shared_bytes >= 0 ? e->statm_rss : rss);

    /* CPU% over the interval. A process first seen after the first refresh started within the interval, so all
     * its ticks belong to it; on the first refresh there is no interval yet. */
    unsigned long long ticks = ps.utime + ps.stime;
    double interval = now - t->last_time;
    unsigned long long base = e->have_prev ? e->prev_ticks : 0;
    if ((e->have_prev || !first_refresh) && interval > 0 && ticks >= base)
        r->cpu_percent = 100.0 * (double)(ticks - base) / ((double)t->hertz * interval);
    else
        r->cpu_percent = 0.0;
    /* IO%: stat's block I/O delay over the same interval, as CPU%; unknown without delay accounting. */
    r->io_wait_known = t->delayacct && e->have_prev && interval > 0 && ps.blkio_ticks >= e->prev_blkio;
    r->io_wait_percent =
        r->io_wait_known ? 100.0 * (double)(ps.blkio_ticks - e->prev_blkio) / ((double)t->hertz * interval) : 0;
    e->prev_blkio = ps.blkio_ticks;
    r->io_delay_known = t->delayacct;
    r->io_delay_seconds = (double)ps.blkio_ticks / (double)t->hertz;
    e->prev_ticks = ticks;
    e->have_prev = 1;

    /* stat's value for every sample: a slope over one source, not a step where statm's takes over */
    r->growth_known = growth_add(&e->growth, now, rss, &r->growth_bytes_per_min);
    struct history_sample *hs = r->is_thread ? NULL : history_add(&e->history, &t->clock);
    if (hs) {
        history_set(hs, HIST_CPU, first_refresh ? NAN : r->cpu_percent);
        history_set(hs, HIST_RES, (double)r->rss_bytes);
    }
    return 0;
}

static void rows_push(struct proctable *t, struct proc_row *r)
{
    if (GROW(t->rows, t->rows_cap, t->nrows, 1024) < 0) return;
    t->rows[t->nrows++] = r;
}

static void count_state(struct task_counts *c, char state)
{
    c->total++;
    switch (state) {
    case 'R': c->running++; break;
    case 'T': case 't': c->stopped++; break;
    case 'Z': c->zombie++; break;
    default: c->sleeping++; break;
    }
}

/* Looks up or creates the entry of pid and samples it; returns it, or NULL when it vanished. */
static struct proc_entry *visit(struct proctable *t, int pid, int tgid, double now, int first)
{
    struct proc_entry *e = entry_find(t, pid);
    if (!e) {
        e = entry_add(t, pid);
        if (!e) return NULL;
    }
    e->row.is_thread = pid != tgid;
    e->row.tgid = tgid;
    if (entry_sample(t, e, now, first) < 0) return NULL; /* vanished: swept below */
    e->gen = t->gen;
    return e;
}

static void visit_threads(struct proctable *t, struct proc_entry *proc, double now, int first)
{
    struct tasks it;
    if (tasks_open(&it, t->procfd, proc->row.pid) < 0) return;
    int tid;
    while ((tid = tasks_next(&it))) {
        if (tid == proc->row.pid) continue;
        struct proc_entry *th = visit(t, tid, proc->row.pid, now, first);
        if (!th) continue;
        th->row.uid = proc->row.uid;
        th->row.uid_known = proc->row.uid_known;
        rows_push(t, &th->row);
        t->counts.threads++;
    }
    tasks_close(&it);
}

static void sweep(struct proctable *t)
{
    for (size_t i = 0; i < t->nbuckets; i++) {
        struct proc_entry **pp = &t->buckets[i];
        while (*pp) {
            struct proc_entry *e = *pp;
            if (e->gen != t->gen) {
                *pp = e->next;
                t->nentries--;
                entry_free(t, e);
            } else {
                pp = &e->next;
            }
        }
    }
}

struct proctable *proctable_new(void)
{
    struct proctable *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    t->nbuckets = 4096;
    t->buckets = calloc(t->nbuckets, sizeof *t->buckets);
    if (t->procfd < 0 || !t->buckets) {
        proctable_free(t);
        return NULL;
    }
    t->hertz = sysconf(_SC_CLK_TCK);
    t->self = getpid();
    t->page_size = sysconf(_SC_PAGESIZE);
    /* Kept descriptors make a refresh about twice as cheap: use the whole hard limit, keep a reserve. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        if (rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &rl);
            getrlimit(RLIMIT_NOFILE, &rl);
        }
        rlim_t cur = rl.rlim_cur == RLIM_INFINITY ? 1 << 20 : rl.rlim_cur;
        t->max_kept_fds = cur > FD_RESERVE * 2 ? (size_t)(cur - FD_RESERVE) : 0;
    }
    return t;
}

void proctable_free(struct proctable *t)
{
    if (!t) return;
    for (size_t i = 0; t->buckets && i < t->nbuckets; i++) {
        for (struct proc_entry *e = t->buckets[i], *next; e; e = next) {
            next = e->next;
            entry_free(t, e);
        }
    }
    free(t->buckets);
    free(t->rows);
    tcp_counters_free(&t->tcp);
    if (t->procfd >= 0) close(t->procfd);
    free(t);
}

static unsigned long long read_mem_total(int procfd)
{
    char buf[512];
    if (fileio_read_at(procfd, "meminfo", buf, sizeof buf) <= 0) return 0;
    unsigned long long kib = 0;
    return sscanf(buf, "MemTotal: %llu kB", &kib) == 1 ? kib * 1024ULL : 0;
}

/* kernel.task_delayacct (a sysctl root may switch at any time): 1 when the kernel counts block I/O delays. */
static int read_delayacct(int procfd)
{
    char buf[8];
    return fileio_read_at(procfd, "sys/kernel/task_delayacct", buf, sizeof buf) > 0 && buf[0] == '1';
}

int proctable_refresh(struct proctable *t, int with_threads, char *err, size_t errlen)
{
    double now = clock_monotonic_seconds();
    int first = t->gen == 0;
    t->gen++;
    t->nrows = 0;
    memset(&t->counts, 0, sizeof t->counts);
    if (!t->mem_total) t->mem_total = read_mem_total(t->procfd);
    history_clock_tick(&t->clock, now);
    t->delayacct = read_delayacct(t->procfd);

    int dfd = openat(t->procfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        int e = errno;
        if (dfd >= 0) close(dfd);
        snprintf(err, errlen, "cannot list /proc: %s", strerror(e));
        return -e;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        int pid;
        if (text_parse_pid(de->d_name, &pid) < 0) continue;
        struct proc_entry *e = visit(t, pid, pid, now, first);
        if (!e) continue;
        rows_push(t, &e->row);
        count_state(&t->counts, e->row.state);
        if (with_threads && e->row.nlwp > 1) visit_threads(t, e, now, first);
    }
    closedir(d);
    sweep(t);
    t->interval = first ? 0 : now - t->last_time;
    t->last_time = now;
    return 0;
}

/* The entry owning a row (rows are the first member of their entry). */
static struct proc_entry *entry_of(struct proc_row *r) { return (struct proc_entry *)r; }

static void fill_statm(struct proctable *t, struct proc_entry *e, double now)
{
    if (!e->memory_may_have_changed && e->row.shared_bytes >= 0 && now - e->statm_time < STATM_MAX_AGE_SECONDS)
        return; /* about 3 us of kernel time per process saved on every refresh of an idle system */
    char buf[256];
    struct procstatm sm;
    ssize_t n = entry_read(t, e, &e->statm_fd, "statm", buf, sizeof buf);
    int ok = n > 0 && procstat_parse_statm(buf, &sm) == 0;
    e->row.shared_bytes = ok ? (long long)(sm.shared * (unsigned long long)t->page_size) : -1;
    if (ok) {
        e->statm_rss = sm.resident * (unsigned long long)t->page_size;
        row_set_rss(t, &e->row, e->statm_rss);
    }
    e->memory_may_have_changed = 0;
    e->statm_time = now;
}

static void fill_cmdline(struct proctable *t, struct proc_entry *e)
{
    if (e->cmdline_tried) return;
    e->cmdline_tried = 1;
    char path[96];
    entry_path(e, "cmdline", path, sizeof path);
    char *buf = malloc(CMDLINE_MAX);
    if (!buf) return;
    ssize_t n = fileio_read_at(t->procfd, path, buf, CMDLINE_MAX);
    if (n <= 0) { /* kernel thread, zombie, or exiting: no command line */
        free(buf);
        return;
    }
    while (n > 0 && buf[n - 1] == '\0') n--; /* trailing separators */
    char *shrunk = realloc(buf, (size_t)n + 1);
    e->cmdline = shrunk ? shrunk : buf;
    e->cmdline[n] = '\0';
    e->row.cmdline = e->cmdline;
    e->row.cmdline_len = (size_t)n;
}

/* Has the program behind the identity changed since the caches were filled? Checks the exe's device and inode,
 * at most every EXE_RECHECK_SECONDS per entry. */
static void check_exec(struct proctable *t, struct proc_entry *e, double now)
{
    if (e->row.is_kernel || now - e->exe_checked < EXE_RECHECK_SECONDS) return;
    char path[96];
    struct stat st;
    entry_path(e, "exe", path, sizeof path);
    int ok = fstatat(t->procfd, path, &st, 0) == 0;
    if (ok && e->exe_checked > 0 && (st.st_dev != e->exe_dev || st.st_ino != e->exe_ino))
        entry_drop_program_caches(e);
    if (ok) {
        e->exe_dev = st.st_dev;
        e->exe_ino = st.st_ino;
    }
    e->exe_checked = now;
}

static void fill_exe(struct proctable *t, struct proc_entry *e)
{
    if (e->exe_tried) return;
    e->exe_tried = 1;
    char path[96], link[4096];
    entry_path(e, "exe", path, sizeof path);
    ssize_t n = readlinkat(t->procfd, path, link, sizeof link - 1);
    if (n <= 0) return;
    link[n] = '\0';
    static const char deleted[] = " (deleted)";
    size_t dl = sizeof deleted - 1;
    if ((size_t)n > dl && strcmp(link + n - dl, deleted) == 0) {
        link[n - dl] = '\0';
        e->row.exe_deleted = 1;
    }
    e->exe = strdup(link);
    e->row.exe = e->exe;
}

/* Seconds since the process started (start time is counted in ticks on the boot clock). */
static double process_age(const struct proctable *t, const struct proc_row *r)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 - (double)r->start_ticks / (double)t->hertz;
}

/* The cache slot of an executable (open addressing; when full, the last probed slot is reused). */
static struct exe_kind *exe_kind_slot(struct proctable *t, dev_t dev, ino_t ino)
{
    size_t h = ((size_t)ino * 2654435761u ^ (size_t)dev) % EXE_KINDS;
    struct exe_kind *k = NULL;
    for (int probe = 0; probe < 8; probe++) {
        k = &t->exe_kinds[(h + (size_t)probe) % EXE_KINDS];
        if (k->kind == RUNTIME_UNKNOWN || (k->dev == dev && k->ino == ino)) return k;
    }
    k->kind = RUNTIME_UNKNOWN;
    return k;
}

static void fill_runtime(struct proctable *t, struct proc_entry *e, double now)
{
    struct proc_row *r = &e->row;
    if (r->is_kernel || r->is_thread) return;
    if (!e->runtime_tried) {
        /* check_exec ran just before: exe_dev/exe_ino are this program's (0 when the exe is unreadable). */
        struct exe_kind *k = e->exe_ino ? exe_kind_slot(t, e->exe_dev, e->exe_ino) : NULL;
        enum runtime_kind elf = k && k->dev == e->exe_dev && k->ino == e->exe_ino ? k->kind : RUNTIME_UNKNOWN;
        r->runtime = runtime_detect(t->procfd, r->pid, r->uid, &elf, &r->agent);
        if (k && elf != RUNTIME_UNKNOWN) *k = (struct exe_kind){e->exe_dev, e->exe_ino, elf};
        /* A JVM maps libjvm.so only after its launcher has started: look at young processes again. */
        e->runtime_tried = !(r->runtime == RUNTIME_NATIVE && process_age(t, r) < YOUNG_PROCESS_SECONDS);
        e->agent_checked = now;
        return;
    }
    if ((r->runtime == RUNTIME_GO || r->runtime == RUNTIME_JAVA) && now - e->agent_checked >= AGENT_RECHECK_SECONDS) {
        r->agent = runtime_agent_present(t->procfd, r->pid, r->uid, r->runtime);
        e->agent_checked = now;
    }
}

/* A rate just taken goes into the process's sample of this refresh (a rate read on demand is in the history only
 * for the refreshes that read it: the rows shown, the process the History tab shows). */
static void history_note(struct proctable *t, struct proc_entry *e, enum history_field f, double v)
{
    struct history_sample *hs = e->row.is_thread ? NULL : history_current(&e->history, &t->clock);
    if (hs) history_set(hs, f, v);
}

/* A counter's rate since the previous fill; a counter that fell (a thread ended and took its share out of a sum)
 * counts as unchanged. */
static double rate_since(unsigned long long now_v, unsigned long long prev_v, double seconds)
{
    return now_v > prev_v && seconds > 0 ? (double)(now_v - prev_v) / seconds : 0.0;
}

static void fill_io(struct proctable *t, struct proc_entry *e, double now)
{
    struct proc_row *r = &e->row;
    if (e->io_gen == t->gen) return;
    e->io_gen = t->gen;
    int sched_now = e->sched_gen == t->gen && r->sched_known;
    if (r->io_known && sched_now && e->io_sched_valid && e->run_ns == e->io_run_ns &&
        r->switches == e->io_switches && r->nlwp == e->io_nlwp) {
        /* nothing ran since io was read: the counters stand, the rates are 0 (3 us a process saved) */
        r->disk_read_per_sec = r->disk_write_per_sec = 0;
        r->io_rates_known = 1;
        history_note(t, e, HIST_DISK_READ, 0);
        history_note(t, e, HIST_DISK_WRITE, 0);
        e->io_time = now;
        return;
    }
    e->io_sched_valid = sched_now;
    e->io_run_ns = e->run_ns;
    e->io_switches = r->switches;
    e->io_nlwp = r->nlwp;
    char buf[512];
    struct proc_io io;
    ssize_t n = r->is_kernel ? -1 : entry_read(t, e, &e->io_fd, "io", buf, sizeof buf - 1);
    if (n > 0) buf[n] = '\0';
    if (n <= 0 || procactivity_parse_io(buf, &io) < 0) { /* EACCES: another user's process */
        r->io_known = r->io_rates_known = 0;
        return;
    }
    if (r->io_known) {
        r->disk_read_per_sec = rate_since(io.read_bytes, r->disk_read_bytes, now - e->io_time);
        r->disk_write_per_sec = rate_since(io.write_bytes, r->disk_write_bytes, now - e->io_time);
        r->io_rates_known = 1;
        history_note(t, e, HIST_DISK_READ, r->disk_read_per_sec);
        history_note(t, e, HIST_DISK_WRITE, r->disk_write_per_sec);
    }
    r->disk_read_bytes = io.read_bytes;
    r->disk_write_bytes = io.write_bytes;
    r->io_known = 1;
    e->io_time = now;
}

static void fill_sched(struct proctable *t, struct proc_entry *e, double now)
{
    struct proc_row *r = &e->row;
    if (e->sched_gen == t->gen) return;
    e->sched_gen = t->gen;
    struct proc_sched sc;
    int rc;
    if (!r->is_thread && r->nlwp > 1) { /* a process's own schedstat is its main thread's: sum the threads */
        rc = thread_sched_read(&e->threads_sched, t->procfd, r->pid, r->nlwp, &t->kept_fds, t->max_kept_fds, &sc);
    } else {
        char buf[128];
        ssize_t n = entry_read(t, e, &e->sched_fd, "schedstat", buf, sizeof buf - 1);
        if (n > 0) buf[n] = '\0';
        rc = n > 0 && procactivity_parse_sched(buf, &sc) == 0 ? 0 : -1;
    }
    if (rc < 0) {
        r->sched_known = r->sched_rates_known = 0;
        return;
    }
    if (r->sched_known) {
        double seconds = now - e->sched_time;
        r->wait_percent = rate_since(sc.wait_ns, r->wait_ns, seconds) / 1e7; /* ns per s, as a share of one CPU */
        r->switches_per_sec = rate_since(sc.switches, r->switches, seconds);
        r->sched_rates_known = 1;
        history_note(t, e, HIST_WAIT, r->wait_percent);
    }
    r->wait_ns = sc.wait_ns;
    r->switches = sc.switches;
    e->run_ns = sc.run_ns;
    r->sched_known = 1;
    e->sched_time = now;
}

static void fill_oom(struct proctable *t, struct proc_entry *e, double now)
{
    /* The score is the process's memory (resident, swapped, page tables) against the machine's, plus its
     * oom_score_adj: a RES that did not move leaves it where it was, but for an adjustment (looked at every few
     * seconds). About 3 us a process saved on each refresh. */
    if (e->oom_read && e->oom_rss == e->stat_rss && now - e->oom_time < OOM_RECHECK_SECONDS) return;
    e->oom_read = 1;
    e->oom_rss = e->stat_rss;
    e->oom_time = now;
    char buf[32];
    ssize_t n = entry_read(t, e, &e->oom_fd, "oom_score", buf, sizeof buf - 1);
    int score;
    if (n > 0) buf[n] = '\0';
    e->row.oom_score = n > 0 && sscanf(buf, "%d", &score) == 1 ? score : -1;
}

static void fill_net(struct proctable *t, struct proc_entry *e, double now)
{
    struct proc_row *r = &e->row;
    if (e->net_gen == t->gen) return;
    e->net_gen = t->gen;
    if (t->net_rows_gen != t->gen) {
        t->net_rows_prev = t->net_rows;
        t->net_rows = 0;
        t->net_rows_gen = t->gen;
    }
    t->net_rows++;
    char dir[64];
    unsigned long long received = 0, sent = 0;
    entry_dir(e, dir, sizeof dir);
    /* Not diagtop itself: it keeps a descriptor open for each process's files, so its fd directory holds
     * thousands of entries whose count changes at every refresh; matching them would cost more than every other
     * process's NET together (10,000 readlinks a refresh at 2,000 processes). */
    int eligible = !r->is_thread && !r->is_kernel && r->tgid != t->self;
    int rc;
    if (eligible && t->tcp_gen != t->gen && t->net_rows_prev <= FEW_NET_ROWS &&
        proc_net_quiet(&e->net, t->procfd, dir)) {
        rc = 1; /* no socket, none opened: 0 without the dump */
    } else {
        if (t->tcp_gen != t->gen) { /* one dump serves every row of this refresh */
            char err[128];
            t->tcp_ok = tcp_counters_dump(&t->tcp, now, err, sizeof err) == 0;
            t->tcp_gen = t->gen;
        }
        rc = t->tcp_ok && eligible ? proc_net_sample(&e->net, t->procfd, dir, &t->tcp, now, &received, &sent) : -1;
    }
    if (rc < 0) {
        r->net_known = r->net_rates_known = 0;
        return;
    }
    r->net_received_bytes += received;
    r->net_sent_bytes += sent;
    if (rc > 0) {
        r->net_received_per_sec = rate_since(received, 0, now - e->net_time);
        r->net_sent_per_sec = rate_since(sent, 0, now - e->net_time);
        r->net_rates_known = 1;
        history_note(t, e, HIST_NET_RECEIVED, r->net_received_per_sec);
        history_note(t, e, HIST_NET_SENT, r->net_sent_per_sec);
    }
    r->net_known = 1;
    e->net_time = now;
}

static void fill_unit(struct proctable *t, struct proc_entry *e, double now)
{
    if (e->row.unit && now - e->unit_checked < UNIT_RECHECK_SECONDS) return;
    char dir[64];
    entry_dir(e, dir, sizeof dir);
    if (procactivity_read_unit(t->procfd, dir, e->unit, sizeof e->unit) < 0) e->unit[0] = '\0';
    e->row.unit = e->unit;
    e->unit_checked = now;
}

void proctable_fill(struct proctable *t, struct proc_row **rows, size_t n, unsigned needs)
{
    double now = clock_monotonic_seconds();
    for (size_t i = 0; i < n; i++) {
        struct proc_entry *e = entry_of(rows[i]);
        if (needs & (PROC_NEED_CMDLINE | PROC_NEED_EXE | PROC_NEED_RUNTIME)) check_exec(t, e, now);
        if (needs & PROC_NEED_STATM) fill_statm(t, e, now);
        if (needs & PROC_NEED_CMDLINE) fill_cmdline(t, e);
        if (needs & PROC_NEED_EXE) fill_exe(t, e);
        if (needs & PROC_NEED_RUNTIME) fill_runtime(t, e, now);
        if (needs & PROC_NEED_SCHED) fill_sched(t, e, now); /* first: it tells fill_io whether anything ran */
        if (needs & PROC_NEED_IO) fill_io(t, e, now);
        if (needs & PROC_NEED_UNIT) fill_unit(t, e, now);
        if (needs & PROC_NEED_NET) fill_net(t, e, now);
        if (needs & PROC_NEED_OOM) fill_oom(t, e, now);
    }
}

struct proc_row **proctable_rows(struct proctable *t, size_t *n)
{
    *n = t->nrows;
    return t->rows;
}

struct proc_row *proctable_fill_pid(struct proctable *t, int pid, unsigned needs)
{
    struct proc_entry *e = entry_find(t, pid);
    struct proc_row *row = e && e->gen == t->gen ? &e->row : NULL;
    if (row) proctable_fill(t, &row, 1, needs);
    return row;
}

size_t proctable_history(struct proctable *t, int pid, double since, struct history_point *out, size_t max)
{
    struct proc_entry *e = entry_find(t, pid);
    return e && e->gen == t->gen && !e->row.is_thread ? history_read(&e->history, &t->clock, since, out, max) : 0;
}

struct task_counts proctable_counts(const struct proctable *t) { return t->counts; }
int proctable_delayacct(const struct proctable *t) { return t->delayacct; }
double proctable_interval(const struct proctable *t) { return t->interval; }
unsigned long long proctable_mem_total(const struct proctable *t) { return t->mem_total; }
size_t proctable_kept_fds(const struct proctable *t) { return t->kept_fds; }
