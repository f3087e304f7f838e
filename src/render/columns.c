#include "columns.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util/text.h"

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b) ? 1 : 0)

/* Comparators of columns that sort by one numeric field. */
#define FIELD_COMPARATOR(fn, field)                                                                              \
    static int fn(const struct proc_row *a, const struct proc_row *b, const struct column_ctx *c)              \
    {                                                                                                          \
        (void)c;                                                                                               \
        return CMP(a->field, b->field);                                                                        \
    }
FIELD_COMPARATOR(cmp_pid, pid)
FIELD_COMPARATOR(cmp_pri, priority)
FIELD_COMPARATOR(cmp_ni, nice)
FIELD_COMPARATOR(cmp_virt, vsize_bytes)
FIELD_COMPARATOR(cmp_res, rss_bytes)
FIELD_COMPARATOR(cmp_shr, shared_bytes)
FIELD_COMPARATOR(cmp_state, state)
FIELD_COMPARATOR(cmp_cpu, cpu_percent)
FIELD_COMPARATOR(cmp_thr, nlwp)
FIELD_COMPARATOR(cmp_oom, oom_score)

/* Comparators of rates: a row without one (unreadable, or one sample yet) sorts as zero. */
#define RATE_COMPARATOR(fn, known, field)                                                                        \
    static int fn(const struct proc_row *a, const struct proc_row *b, const struct column_ctx *c)              \
    {                                                                                                          \
        (void)c;                                                                                               \
        return CMP(a->known ? a->field : 0, b->known ? b->field : 0);                                          \
    }
RATE_COMPARATOR(cmp_disk_read, io_rates_known, disk_read_per_sec)
RATE_COMPARATOR(cmp_disk_write, io_rates_known, disk_write_per_sec)
RATE_COMPARATOR(cmp_net_read, net_rates_known, net_received_per_sec)
RATE_COMPARATOR(cmp_net_write, net_rates_known, net_sent_per_sec)
RATE_COMPARATOR(cmp_wait, sched_rates_known, wait_percent)
RATE_COMPARATOR(cmp_csw, sched_rates_known, switches_per_sec)
RATE_COMPARATOR(cmp_io_wait, io_wait_known, io_wait_percent)

static int cmp_user(const struct proc_row *a, const struct proc_row *b, const struct column_ctx *c)
{
    return strcmp(users_name(c->users, a->uid), users_name(c->users, b->uid));
}
static int cmp_time(const struct proc_row *a, const struct proc_row *b, const struct column_ctx *c)
{
    (void)c;
    return CMP(a->utime + a->stime, b->utime + b->stime);
}
static int cmp_growth(const struct proc_row *a, const struct proc_row *b, const struct column_ctx *c)
{
    (void)c;
    double ga = a->growth_known ? a->growth_bytes_per_min : 0, gb = b->growth_known ? b->growth_bytes_per_min : 0;
    return CMP(ga, gb);
}
static int cmp_runtime(const struct proc_row *a, const struct proc_row *b, const struct column_ctx *c)
{
    (void)c;
    return CMP(a->runtime * 2 + a->agent, b->runtime * 2 + b->agent);
}
static int cmp_unit(const struct proc_row *a, const struct proc_row *b, const struct column_ctx *c)
{
    (void)c;
    return strcmp(a->unit ? a->unit : "", b->unit ? b->unit : "");
}
static int cmp_command(const struct proc_row *a, const struct proc_row *b, const struct column_ctx *c)
{
    (void)c;
    const char *sa = a->cmdline && !a->is_thread ? a->cmdline : a->comm;
    const char *sb = b->cmdline && !b->is_thread ? b->cmdline : b->comm;
    return strcmp(sa, sb);
}

static void fmt_pid(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    (void)c;
    snprintf(buf, n, "%d", r->pid);
}
static void fmt_user(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    snprintf(buf, n, "%s", r->uid_known ? users_name(c->users, r->uid) : "-");
}
static void fmt_pri(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    (void)c;
    if (r->priority <= -100) snprintf(buf, n, "rt"); /* real-time, as top shows it */
    else snprintf(buf, n, "%ld", r->priority);
}
static void fmt_ni(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    (void)c;
    snprintf(buf, n, "%ld", r->nice);
}
static void fmt_virt(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    (void)c;
    text_format_kib_scaled(buf, n, r->vsize_bytes / 1024);
}
static void fmt_res(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    (void)c;
    text_format_kib_scaled(buf, n, r->rss_bytes / 1024);
}
static void fmt_shr(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    (void)c;
    if (r->shared_bytes < 0) snprintf(buf, n, "-");
    else text_format_kib_scaled(buf, n, (unsigned long long)r->shared_bytes / 1024);
}
static void fmt_state(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    (void)c;
    snprintf(buf, n, "%c", r->state);
}
static void fmt_cpu(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    (void)c;
    snprintf(buf, n, r->cpu_percent >= 999.5 ? "%.0f" : "%.1f", r->cpu_percent);
}
static void fmt_mem(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    (void)c;
    snprintf(buf, n, "%.1f", r->mem_percent);
}
static void fmt_time(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    /* TIME+ as top: minutes:seconds.hundredths, hours once minutes pass 999. */
    unsigned long long hundredths = (r->utime + r->stime) * 100ULL / (unsigned long long)(c->hertz ? c->hertz : 100);
    unsigned long long secs = hundredths / 100, mins = secs / 60;
    if (mins < 1000) snprintf(buf, n, "%llu:%02llu.%02llu", mins, secs % 60, hundredths % 100);
    else snprintf(buf, n, "%lluh%02llu", mins / 60, mins % 60);
}
static void fmt_thr(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    (void)c;
    snprintf(buf, n, "%ld", r->nlwp);
}
static void fmt_growth(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    (void)c;
    if (!r->growth_known || r->is_kernel) {
        snprintf(buf, n, "-");
        return;
    }
    /* the title says per minute; the cell says how much: "+1.2M", "-512K", "0" */
    double kib = r->growth_bytes_per_min / 1024.0;
    char num[32];
    text_format_kib_scaled(num, sizeof num, (unsigned long long)(kib < 0 ? -kib : kib));
    snprintf(buf, n, "%s%s", kib <= -1.0 ? "-" : kib >= 1.0 ? "+" : "", kib > -1.0 && kib < 1.0 ? "0" : num);
}
static void fmt_runtime(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    (void)c;
    /* a native program shows as such only with an agent (native*): otherwise the column would say it of nearly all */
    const char *name = r->runtime == RUNTIME_GO || r->runtime == RUNTIME_JAVA || (r->runtime == RUNTIME_NATIVE && r->agent)
                           ? runtime_name(r->runtime) : "-";
    snprintf(buf, n, "%s%s", name, r->agent ? "*" : "");
}
/* Bytes per second: "0", "512B", "1.2M" (KiB and up scaled as RES is); "-" without a rate. */
static void format_byte_rate(char *buf, size_t n, int known, double per_sec)
{
    if (!known) snprintf(buf, n, "-");
    else if (per_sec < 1024) snprintf(buf, n, per_sec < 0.5 ? "0" : "%.0fB", per_sec);
    else text_format_kib_scaled(buf, n, (unsigned long long)(per_sec / 1024.0 + 0.5));
}
/* Formatters of byte rates: known says whether the row has one. */
#define RATE_FORMATTER(fn, known, field)                                                                         \
    static void fn(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)                  \
    {                                                                                                          \
        (void)c;                                                                                               \
        format_byte_rate(buf, n, r->known, r->field);                                                          \
    }
RATE_FORMATTER(fmt_disk_read, io_rates_known, disk_read_per_sec)
RATE_FORMATTER(fmt_disk_write, io_rates_known, disk_write_per_sec)
RATE_FORMATTER(fmt_net_read, net_rates_known, net_received_per_sec)
RATE_FORMATTER(fmt_net_write, net_rates_known, net_sent_per_sec)
/* A share of one thread's time (WAIT%, IO%): one decimal below 1000, "-" when unknown. */
static void share_cell(char *buf, size_t n, int known, double percent)
{
    if (!known) snprintf(buf, n, "-");
    else snprintf(buf, n, percent >= 999.5 ? "%.0f" : "%.1f", percent);
}
static void fmt_wait(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    (void)c;
    share_cell(buf, n, r->sched_rates_known, r->wait_percent);
}
static void fmt_io_wait(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    (void)c;
    share_cell(buf, n, r->io_wait_known, r->io_wait_percent);
}
static void fmt_csw(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    (void)c;
    if (!r->sched_rates_known) snprintf(buf, n, "-");
    else if (r->switches_per_sec < 99999.5) snprintf(buf, n, "%.0f", r->switches_per_sec);
    else snprintf(buf, n, "%.0fk", r->switches_per_sec / 1000);
}
static void fmt_oom(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    (void)c;
    if (r->oom_score < 0) snprintf(buf, n, "-");
    else snprintf(buf, n, "%d", r->oom_score);
}
static void fmt_unit(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    (void)c;
    const char *u = r->unit && *r->unit ? r->unit : "-";
    text_sanitize_display(buf, n, u, strlen(u)); /* a cgroup's name is anyone's choice of bytes */
}
static void fmt_command(char *buf, size_t n, const struct proc_row *r, const struct column_ctx *c)
{
    (void)c;
    size_t off, len;
    columns_format_command(buf, n, r, &off, &len);
}

const struct column columns_table[COL_COUNT] = {
    {COL_PID, "pid", "PID", 7, 0, 0, 0, "process (or thread) id", cmp_pid, fmt_pid, 0},
    {COL_USER, "user", "USER", 8, 1, 0, 0, "effective user", cmp_user, fmt_user, 0},
    {COL_PRI, "pri", "PRI", 3, 0, 1, 0, "kernel scheduling priority", cmp_pri, fmt_pri, 0},
    {COL_NI, "ni", "NI", 3, 0, 1, 0, "nice value", cmp_ni, fmt_ni, 0},
    {COL_VIRT, "virt", "VIRT", 7, 0, 1, 0, "virtual memory size", cmp_virt, fmt_virt, 0},
    {COL_RES, "res", "RES", 6, 0, 1, PROC_NEED_STATM, "resident memory", cmp_res, fmt_res, 0},
    {COL_SHR, "shr", "SHR", 6, 0, 1, PROC_NEED_STATM, "shared resident memory (file and shmem)", cmp_shr, fmt_shr, 0},
    {COL_S, "s", "S", 1, 1, 0, 0, "state: R running, S sleeping, D disk, T stopped, Z zombie", cmp_state, fmt_state, 0},
    {COL_CPU, "cpu", "%CPU", 5, 0, 1, 0, "CPU usage since the last refresh (100 = one core)", cmp_cpu, fmt_cpu, 0},
    {COL_MEM, "mem", "%MEM", 4, 0, 1, PROC_NEED_STATM, "resident memory as a share of RAM", cmp_res, fmt_mem, 0},
    {COL_TIME, "time", "TIME+", 9, 0, 1, 0, "CPU time used, user + system", cmp_time, fmt_time, 0},
    {COL_THR, "thr", "THR", 4, 0, 1, 0, "number of threads", cmp_thr, fmt_thr, 0},
    {COL_GROWTH, "growth", "RES/min", 7, 0, 1, 0, "resident memory growth per minute, last 5 minutes", cmp_growth,
     fmt_growth, 0},
    {COL_RUNTIME, "runtime", "RUNTIME", 7, 1, 1, PROC_NEED_RUNTIME, "go, java, native (diagtop agent), or -; * when an agent listens",
     cmp_runtime, fmt_runtime, 0},
    {COL_DISK_READ, "diskr", "DISK R/s", 8, 0, 1, PROC_NEED_IO,
     "bytes read from storage per second (/proc/PID/io, as iotop)", cmp_disk_read, fmt_disk_read, 1},
    {COL_DISK_WRITE, "diskw", "DISK W/s", 8, 0, 1, PROC_NEED_IO,
     "bytes written to storage per second, counted when dirtied (/proc/PID/io)", cmp_disk_write, fmt_disk_write, 1},
    {COL_NET_READ, "netr", "NET R/s", 8, 0, 1, PROC_NEED_NET,
     "TCP bytes received per second (sock_diag, as ss -ti)", cmp_net_read, fmt_net_read, 1},
    {COL_NET_WRITE, "netw", "NET W/s", 8, 0, 1, PROC_NEED_NET, "TCP bytes sent per second, as the peer acked them",
     cmp_net_write, fmt_net_write, 1},
    {COL_WAIT, "wait", "WAIT%", 5, 0, 1, PROC_NEED_SCHED,
     "runnable but waiting for a CPU, share of the interval (100 = one thread all of it)", cmp_wait, fmt_wait, 1},
    {COL_IO_WAIT, "io", "IO%", 5, 0, 1, 0,
     "blocked on block I/O, share of the interval (needs kernel.task_delayacct=1)",
     cmp_io_wait, fmt_io_wait, 1},
    {COL_CSW, "csw", "CSW/s", 6, 0, 1, PROC_NEED_SCHED, "context switches per second, voluntary and not (schedstat)",
     cmp_csw, fmt_csw, 1},
    {COL_OOM, "oom", "OOM", 4, 0, 1, PROC_NEED_OOM, "the OOM killer's score: the highest is killed first (0-2000)",
     cmp_oom, fmt_oom, 1},
    {COL_UNIT, "unit", "UNIT", 20, 1, 0, PROC_NEED_UNIT, "systemd unit, or container or pod id (the cgroup path)",
     cmp_unit, fmt_unit, 1},
    {COL_COMMAND, "command", "COMMAND", 0, 1, 0, PROC_NEED_CMDLINE, "command line (thread name for threads)",
     cmp_command, fmt_command, 0},
};

const struct column *columns_find(const char *key)
{
    for (int i = 0; i < COL_COUNT; i++)
        if (strcasecmp(key, columns_table[i].key) == 0 || strcasecmp(key, columns_table[i].title) == 0)
            return &columns_table[i];
    return NULL;
}

int columns_parse_list(const char *list, enum column_id *out, int max, char *err, size_t errlen)
{
    int n = 0;
    char key[32];
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof key) {
            snprintf(err, errlen, "bad column list: %.64s", list);
            return -1;
        }
        memcpy(key, p, len);
        key[len] = '\0';
        const struct column *c = columns_find(key);
        if (!c) {
            snprintf(err, errlen, "unknown column '%s'", key);
            return -1;
        }
        int dup = 0;
        for (int i = 0; i < n; i++) dup |= out[i] == c->id;
        if (!dup && n < max) out[n++] = c->id;
        p += len;
        if (*p == ',') p++;
    }
    if (n == 0) {
        snprintf(err, errlen, "no columns given");
        return -1;
    }
    return n;
}

int columns_default(enum column_id *out, int max)
{
    int n = 0;
    for (int i = 0; i < COL_COUNT && n < max; i++)
        if (!columns_table[i].optional) out[n++] = (enum column_id)i;
    return n;
}

void columns_format_command(char *buf, size_t bufsz, const struct proc_row *r, size_t *base_off, size_t *base_len)
{
    char raw[4096];
    size_t n;
    *base_off = 0;
    if (r->is_thread || !r->cmdline || r->is_kernel) {
        const char *fmt = r->is_kernel ? "[%s]" : "%s";
        snprintf(raw, sizeof raw, fmt, r->comm);
        n = strlen(raw);
        text_sanitize_display(buf, bufsz, raw, n);
        *base_off = r->is_kernel ? 1 : 0;
        *base_len = strlen(buf) - (r->is_kernel ? 2 : 0);
        return;
    }
    n = r->cmdline_len < sizeof raw - 1 ? r->cmdline_len : sizeof raw - 1;
    memcpy(raw, r->cmdline, n);
    raw[n] = '\0';
    /* The program is argv[0]; its basename ends at the first NUL (or space, for rewritten titles). */
    size_t argv0 = strcspn(raw, " ");
    if (argv0 > strlen(raw)) argv0 = strlen(raw);
    for (size_t i = 0; i < n; i++)
        if (raw[i] == '\0') raw[i] = ' ';
    text_sanitize_display(buf, bufsz, raw, n);
    size_t slash = 0;
    for (size_t i = 0; i < argv0 && buf[i]; i++)
        if (buf[i] == '/') slash = i + 1;
    *base_off = slash;
    *base_len = argv0 > slash ? argv0 - slash : 0;
}
