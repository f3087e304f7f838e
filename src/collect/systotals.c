#include "systotals.h"

#include <errno.h>
#include <fcntl.h>
#include <libproc2/meminfo.h>
#include <libproc2/misc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fileio.h"

static int parse_cpu_line(const char *line, struct cpu_ticks *t)
{
    unsigned long long v[8] = {0};
    const char *p = strchr(line, ' ');
    if (!p) return -1;
    int n = sscanf(p, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                   &v[7]);
    if (n < 4) return -1;
    *t = (struct cpu_ticks){v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
    return 0;
}

int systotals_parse_stat(const char *text, struct procstat_sys *out)
{
    memset(out, 0, sizeof *out);
    int have_total = 0;
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, "cpu ", 4) == 0) {
            have_total = parse_cpu_line(line, &out->total) == 0;
        } else if (strncmp(line, "cpu", 3) == 0 && line[3] >= '0' && line[3] <= '9') {
            int idx = atoi(line + 3);
            if (idx >= 0 && idx < SYSTOTALS_MAX_CPUS && parse_cpu_line(line, &out->cpu[idx]) == 0 &&
                idx + 1 > out->ncpu)
                out->ncpu = idx + 1;
        } else if (strncmp(line, "btime ", 6) == 0) {
            out->btime = strtoull(line + 6, NULL, 10);
        }
    }
    return have_total ? 0 : -1;
}

struct cpu_usage systotals_usage(const struct cpu_ticks *a, const struct cpu_ticks *b)
{
    /* Counters can step back (CPU hot-unplug): clamp each delta at zero. */
#define D(f) (b->f > a->f ? (double)(b->f - a->f) : 0.0)
    double user = D(user) + D(nice), sys = D(system) + D(irq) + D(softirq), io = D(iowait), steal = D(steal),
           idle = D(idle);
#undef D
    double sum = user + sys + io + steal + idle;
    struct cpu_usage u = {0, 0, 0, 0, 100.0};
    if (sum <= 0) return u;
    u.user = 100.0 * user / sum;
    u.system = 100.0 * sys / sum;
    u.iowait = 100.0 * io / sum;
    u.steal = 100.0 * steal / sum;
    u.idle = 100.0 * idle / sum;
    return u;
}

struct systotals *systotals_new(void)
{
    struct systotals *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    st->hertz = procps_hertz_get();
    st->page_size = sysconf(_SC_PAGESIZE);
    st->per_cpu = calloc(SYSTOTALS_MAX_CPUS, sizeof *st->per_cpu);
    if (!st->per_cpu) {
        free(st);
        return NULL;
    }
    return st;
}

static void read_memory(struct mem_totals *m)
{
    struct meminfo_info *info = NULL;
    if (procps_meminfo_new(&info) < 0) return;
#define KIB(item) ((unsigned long long)MEMINFO_GET(info, item, ul_int) * 1024ULL)
    m->total = KIB(MEMINFO_MEM_TOTAL);
    m->free = KIB(MEMINFO_MEM_FREE);
    m->available = KIB(MEMINFO_MEM_AVAILABLE);
    m->used = KIB(MEMINFO_MEM_USED);
    m->buffers = KIB(MEMINFO_MEM_BUFFERS);
    m->cached = KIB(MEMINFO_MEM_CACHED_ALL);
    m->swap_total = KIB(MEMINFO_SWAP_TOTAL);
    m->swap_free = KIB(MEMINFO_SWAP_FREE);
#undef KIB
    m->swap_used = m->swap_total > m->swap_free ? m->swap_total - m->swap_free : 0;
    procps_meminfo_unref(&info);
}

int systotals_parse_pressure(const char *text, struct pressure *out)
{
    memset(out, 0, sizeof *out);
    int lines = 0;
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        double v[3];
        unsigned long long total;
        int full = strncmp(l, "full ", 5) == 0;
        if (!full && strncmp(l, "some ", 5) != 0) continue;
        if (sscanf(l + 5, "avg10=%lf avg60=%lf avg300=%lf total=%llu", &v[0], &v[1], &v[2], &total) != 4)
            return -1;
        memcpy(full ? out->full : out->some, v, sizeof v);
        *(full ? &out->full_total_us : &out->some_total_us) = total;
        lines++;
    }
    out->known = lines > 0;
    return lines > 0 ? 0 : -1;
}

const char *systotals_pressure_name(enum pressure_resource r)
{
    static const char *const names[PRESSURE_COUNT] = {"cpu", "io", "memory"};
    return (unsigned)r < PRESSURE_COUNT ? names[r] : "?";
}

/* Pressure of every resource; a file that cannot be read leaves that one unknown. */
static void read_pressure(struct systotals *st)
{
    for (int r = 0; r < PRESSURE_COUNT; r++) {
        char path[64], buf[256];
        snprintf(path, sizeof path, "/proc/pressure/%s", systotals_pressure_name((enum pressure_resource)r));
        if (fileio_read_at(AT_FDCWD, path, buf, sizeof buf) <= 0 || systotals_parse_pressure(buf, &st->pressure[r]) < 0)
            memset(&st->pressure[r], 0, sizeof st->pressure[r]);
    }
}

int systotals_refresh(struct systotals *st, char *err, size_t errlen)
{
    char *buf = st->stat_text;
    ssize_t n = fileio_read_at(AT_FDCWD, "/proc/stat", buf, SYSTOTALS_STAT_TEXT_MAX);
    if (n < 0) {
        snprintf(err, errlen, "cannot read /proc/stat: %s", strerror((int)-n));
        return (int)n;
    }
    st->prev = st->cur;
    if (systotals_parse_stat(buf, &st->cur) < 0) {
        snprintf(err, errlen, "/proc/stat has no cpu line");
        return -EINVAL;
    }
    const struct procstat_sys *base = st->have_prev ? &st->prev : NULL;
    struct cpu_ticks zero = {0};
    st->total = systotals_usage(base ? &base->total : &zero, &st->cur.total);
    for (int i = 0; i < st->cur.ncpu; i++)
        st->per_cpu[i] = systotals_usage(base && i < base->ncpu ? &base->cpu[i] : &zero, &st->cur.cpu[i]);
    st->have_prev = 1;

    double idle;
    procps_uptime(&st->uptime_seconds, &idle);
    procps_loadavg(&st->load[0], &st->load[1], &st->load[2]);
    read_memory(&st->mem);
    read_pressure(st);
    return 0;
}

void systotals_free(struct systotals *st)
{
    if (!st) return;
    free(st->per_cpu);
    free(st);
}
