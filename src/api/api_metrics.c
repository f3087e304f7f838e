#include "api_metrics.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/text.h"

void api_metrics_label(char *buf, size_t bufsz, const char *s, size_t n)
{
    char clean[256];
    text_sanitize_display(clean, sizeof clean, s, n);
    size_t o = 0;
    for (const char *p = clean; *p && o + 3 < bufsz; p++) {
        if (*p == '\\' || *p == '"') buf[o++] = '\\';
        buf[o++] = *p;
    }
    buf[o] = '\0';
}

/* Open descriptors of pid (entries of /proc/PID/fd), or -1 when they cannot be listed. */
static long count_fds(int pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", pid);
    DIR *d = opendir(path);
    if (!d) return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void cpu_modes(FILE *f, const char *name, const struct cpu_usage *u)
{
    fprintf(f, "%s{mode=\"user\"} %.1f\n%s{mode=\"system\"} %.1f\n%s{mode=\"iowait\"} %.1f\n"
            "%s{mode=\"steal\"} %.1f\n%s{mode=\"idle\"} %.1f\n",
            name, u->user, name, u->system, name, u->iowait, name, u->steal, name, u->idle);
}

static void system_metrics(FILE *f, const struct monitor *m)
{
    const struct systotals *st = m->sys;
    double hz = (double)(st->hertz > 0 ? st->hertz : 100);
    family(f, "diagtop_system_cpu_percent", "gauge",
           "CPU use of the whole machine over the last interval, percent (system includes irq and softirq).");
    cpu_modes(f, "diagtop_system_cpu_percent", &st->total);
    family(f, "diagtop_system_cpu_seconds_total", "counter", "CPU time of all cores since boot, by mode.");
    const struct cpu_ticks *t = &st->cur.total;
    fprintf(f, "diagtop_system_cpu_seconds_total{mode=\"user\"} %.2f\n", (double)(t->user + t->nice) / hz);
    fprintf(f, "diagtop_system_cpu_seconds_total{mode=\"system\"} %.2f\n",
            (double)(t->system + t->irq + t->softirq) / hz);
    fprintf(f, "diagtop_system_cpu_seconds_total{mode=\"iowait\"} %.2f\n", (double)t->iowait / hz);
    fprintf(f, "diagtop_system_cpu_seconds_total{mode=\"steal\"} %.2f\n", (double)t->steal / hz);
    fprintf(f, "diagtop_system_cpu_seconds_total{mode=\"idle\"} %.2f\n", (double)t->idle / hz);
    family(f, "diagtop_system_cpus", "gauge", "Online CPUs counted in /proc/stat.");
    fprintf(f, "diagtop_system_cpus %d\n", st->cur.ncpu);
    static const struct {
        const char *name, *help;
        size_t off;
    } mem[] = {
        {"total", "Physical memory.", offsetof(struct mem_totals, total)},
        {"free", "Unused memory.", offsetof(struct mem_totals, free)},
        {"available", "Memory available for new work without swapping (MemAvailable).",
         offsetof(struct mem_totals, available)},
        {"used", "total - available.", offsetof(struct mem_totals, used)},
        {"buffers", "Block device buffers.", offsetof(struct mem_totals, buffers)},
        {"cached", "Page cache and reclaimable slab.", offsetof(struct mem_totals, cached)},
        {"swap_total", "Swap space.", offsetof(struct mem_totals, swap_total)},
        {"swap_free", "Unused swap.", offsetof(struct mem_totals, swap_free)},
        {"swap_used", "Used swap.", offsetof(struct mem_totals, swap_used)},
    };
    for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "diagtop_system_memory_%s_bytes", mem[i].name);
        family(f, name, "gauge", mem[i].help);
        fprintf(f, "%s %llu\n", name, *(const unsigned long long *)((const char *)&st->mem + mem[i].off));
    }
    family(f, "diagtop_system_load_average", "gauge", "Load average over 1, 5 and 15 minutes.");
    static const char *const periods[] = {"1m", "5m", "15m"};
    for (int i = 0; i < 3; i++) fprintf(f, "diagtop_system_load_average{period=\"%s\"} %g\n", periods[i], st->load[i]);
    family(f, "diagtop_system_pressure_stalled_seconds_total", "counter",
           "Time some (or all: full) non-idle tasks were stalled on a resource (PSI; absent without it).");
    for (int r = 0; r < PRESSURE_COUNT; r++) {
        const struct pressure *p = &st->pressure[r];
        const char *name = systotals_pressure_name((enum pressure_resource)r);
        if (!p->known) continue;
        fprintf(f, "diagtop_system_pressure_stalled_seconds_total{resource=\"%s\",kind=\"some\"} %.6f\n", name,
                (double)p->some_total_us / 1e6);
        if (r != PRESSURE_CPU) /* system-wide full CPU pressure means nothing */
            fprintf(f, "diagtop_system_pressure_stalled_seconds_total{resource=\"%s\",kind=\"full\"} %.6f\n", name,
                    (double)p->full_total_us / 1e6);
    }
    family(f, "diagtop_system_uptime_seconds", "gauge", "Seconds since boot.");
    fprintf(f, "diagtop_system_uptime_seconds %.2f\n", st->uptime_seconds);
    family(f, "diagtop_system_boot_time_seconds", "gauge", "Boot time, seconds since the epoch.");
    fprintf(f, "diagtop_system_boot_time_seconds %llu\n", st->cur.btime);
    family(f, "diagtop_system_tasks", "gauge", "Processes by state (threads not counted).");
    const struct task_counts *c = &m->counts;
    fprintf(f, "diagtop_system_tasks{state=\"total\"} %d\ndiagtop_system_tasks{state=\"running\"} %d\n"
            "diagtop_system_tasks{state=\"sleeping\"} %d\ndiagtop_system_tasks{state=\"stopped\"} %d\n"
            "diagtop_system_tasks{state=\"zombie\"} %d\n",
            c->total, c->running, c->sleeping, c->stopped, c->zombie);
}

int api_metrics_append_triggers(int armed, unsigned long long firings, unsigned long long captures,
                                unsigned long long failed, char **out, size_t *len)
{
    char *more = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&more, &n);
    if (!f) return -ENOMEM;
    family(f, "diagtop_triggers_armed", "gauge", "Triggers (POST /api/triggers) watching now.");
    fprintf(f, "diagtop_triggers_armed %d\n", armed);
    family(f, "diagtop_trigger_firings_total", "counter", "Times a trigger's condition held and it fired.");
    fprintf(f, "diagtop_trigger_firings_total %llu\n", firings);
    family(f, "diagtop_trigger_captures_total", "counter", "Captures (dumps, stacks, profiles, heaps) triggers took.");
    fprintf(f, "diagtop_trigger_captures_total %llu\n", captures);
    family(f, "diagtop_trigger_capture_failures_total", "counter", "Captures of triggers that failed.");
    fprintf(f, "diagtop_trigger_capture_failures_total %llu\n", failed);
    char *joined = fclose(f) == 0 && more ? realloc(*out, *len + n + 1) : NULL;
    if (!joined) {
        free(more);
        return -ENOMEM;
    }
    memcpy(joined + *len, more, n + 1);
    free(more);
    *out = joined;
    *len += n;
    return 0;
}

/* The activity counters of a row, each a value or absent (unreadable, another network namespace). */
#define ROW_VALUE(fn, expr, known)                                                                               \
    static int fn(const struct proc_row *r, double *v)                                                         \
    {                                                                                                          \
        *v = (double)(expr);                                                                                   \
        return known;                                                                                          \
    }
ROW_VALUE(row_disk_read, r->disk_read_bytes, r->io_known)
ROW_VALUE(row_disk_written, r->disk_write_bytes, r->io_known)
ROW_VALUE(row_net_received, r->net_received_bytes, r->net_known)
ROW_VALUE(row_net_sent, r->net_sent_bytes, r->net_known)
ROW_VALUE(row_wait, r->wait_ns / 1e9, r->sched_known)
ROW_VALUE(row_switches, r->switches, r->sched_known)
ROW_VALUE(row_oom, r->oom_score, r->oom_score >= 0)
ROW_VALUE(row_io_delay, r->io_delay_seconds, r->io_delay_known) /* not a 0 meaning "none" while accounting is off */

static void activity_metrics(FILE *f, const struct monitor *m, size_t nrows, const char *labels)
{
    static const struct {
        const char *name, *type, *help;
        int (*value)(const struct proc_row *r, double *v);
    } families[] = {
        {"diagtop_process_disk_read_bytes_total", "counter", "Bytes read from storage (absent when unreadable).",
         row_disk_read},
        {"diagtop_process_disk_written_bytes_total", "counter", "Bytes written to storage, counted when dirtied.",
         row_disk_written},
        {"diagtop_process_network_received_bytes_total", "counter",
         "TCP bytes received, counted since diagtop first sampled the process.", row_net_received},
        {"diagtop_process_network_sent_bytes_total", "counter",
         "TCP bytes sent and acked, counted since diagtop first sampled the process.", row_net_sent},
        {"diagtop_process_cpu_wait_seconds_total", "counter",
         "Time the live threads spent runnable, waiting for a CPU.", row_wait},
        {"diagtop_process_context_switches_total", "counter", "Times the live threads were put on a CPU.",
         row_switches},
        {"diagtop_process_io_delay_seconds_total", "counter",
         "Time the threads spent blocked on block I/O (delay accounting: absent while kernel.task_delayacct is 0).",
         row_io_delay},
        {"diagtop_process_oom_score", "gauge", "The OOM killer's score, 0 to 2000: the highest goes first.", row_oom},
    };
    for (size_t k = 0; k < sizeof families / sizeof families[0]; k++) {
        family(f, families[k].name, families[k].type, families[k].help);
        for (size_t i = 0; i < nrows; i++) {
            double v;
            /* %.15g: integers exact to 10^15, seconds without float noise */
            if (families[k].value(m->view.rows[i].row, &v))
                fprintf(f, "%s{%s} %.15g\n", families[k].name, labels + i * 320, v);
        }
    }
}

int api_metrics_render(const struct monitor *m, size_t nrows, char **out, size_t *len)
{
    if (nrows > m->view.n) nrows = m->view.n;
    char *labels = NULL;
    long *fds = NULL;
    if (nrows) {
        labels = malloc(nrows * 320);
        fds = malloc(nrows * sizeof *fds);
        if (!labels || !fds) {
            free(labels);
            free(fds);
            return -ENOMEM;
        }
    }
    for (size_t i = 0; i < nrows; i++) {
        const struct proc_row *r = m->view.rows[i].row;
        char comm[256];
        api_metrics_label(comm, sizeof comm, r->comm, strlen(r->comm));
        snprintf(labels + i * 320, 320, "pid=\"%d\",comm=\"%s\"", r->pid, comm);
        fds[i] = count_fds(r->pid);
    }
    FILE *f = open_memstream(out, len);
    if (!f) {
        free(labels);
        free(fds);
        return -ENOMEM;
    }
    system_metrics(f, m);
    double hz = (double)(m->ctx.hertz > 0 ? m->ctx.hertz : 100);
    family(f, "diagtop_process_cpu_seconds_total", "counter", "CPU time the process used, by mode.");
    for (size_t i = 0; i < nrows; i++) {
        const struct proc_row *r = m->view.rows[i].row;
        fprintf(f, "diagtop_process_cpu_seconds_total{%s,mode=\"user\"} %.2f\n", labels + i * 320,
                (double)r->utime / hz);
        fprintf(f, "diagtop_process_cpu_seconds_total{%s,mode=\"system\"} %.2f\n", labels + i * 320,
                (double)r->stime / hz);
    }
    family(f, "diagtop_process_cpu_percent", "gauge", "CPU over the last interval, 100 = one core.");
    for (size_t i = 0; i < nrows; i++)
        fprintf(f, "diagtop_process_cpu_percent{%s} %.1f\n", labels + i * 320, m->view.rows[i].row->cpu_percent);
    family(f, "diagtop_process_resident_memory_bytes", "gauge", "Resident memory (RSS).");
    for (size_t i = 0; i < nrows; i++)
        fprintf(f, "diagtop_process_resident_memory_bytes{%s} %llu\n", labels + i * 320,
                m->view.rows[i].row->rss_bytes);
    family(f, "diagtop_process_virtual_memory_bytes", "gauge", "Virtual memory size.");
    for (size_t i = 0; i < nrows; i++)
        fprintf(f, "diagtop_process_virtual_memory_bytes{%s} %llu\n", labels + i * 320,
                m->view.rows[i].row->vsize_bytes);
    family(f, "diagtop_process_threads", "gauge", "Threads of the process.");
    for (size_t i = 0; i < nrows; i++)
        fprintf(f, "diagtop_process_threads{%s} %ld\n", labels + i * 320, m->view.rows[i].row->nlwp);
    family(f, "diagtop_process_open_fds", "gauge", "Open file descriptors (absent when they cannot be listed).");
    for (size_t i = 0; i < nrows; i++)
        if (fds[i] >= 0) fprintf(f, "diagtop_process_open_fds{%s} %ld\n", labels + i * 320, fds[i]);
    activity_metrics(f, m, nrows, labels);
    family(f, "diagtop_process_start_time_seconds", "gauge", "Start time of the process, seconds since the epoch.");
    for (size_t i = 0; i < nrows; i++)
        fprintf(f, "diagtop_process_start_time_seconds{%s} %llu\n", labels + i * 320,
                m->sys->cur.btime + (unsigned long long)((double)m->view.rows[i].row->start_ticks / hz));
    family(f, "diagtop_processes_exported", "gauge", "How many processes this scrape describes.");
    fprintf(f, "diagtop_processes_exported %zu\n", nrows);
    free(labels);
    free(fds);
    if (ferror(f)) {
        fclose(f);
        free(*out);
        *out = NULL;
        return -ENOMEM;
    }
    fclose(f);
    return 0;
}
