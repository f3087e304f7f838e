#include "snapshot_json.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"
#include "json_util.h"

static void add_cpu_usage(cJSON *obj, const struct cpu_usage *u)
{
    json_add_fixed(obj, "user_percent", u->user, 1);
    json_add_fixed(obj, "system_percent", u->system, 1);
    json_add_fixed(obj, "iowait_percent", u->iowait, 1);
    json_add_fixed(obj, "steal_percent", u->steal, 1);
    json_add_fixed(obj, "idle_percent", u->idle, 1);
}

static cJSON *system_json(const struct systotals *st, const struct task_counts *tc)
{
    cJSON *sys = cJSON_CreateObject();
    json_add_fixed(sys, "uptime_seconds", st->uptime_seconds, 2);
    cJSON *load = cJSON_AddArrayToObject(sys, "load_average");
    for (int i = 0; i < 3; i++) cJSON_AddItemToArray(load, cJSON_CreateNumber(st->load[i]));
    cJSON *tasks = cJSON_AddObjectToObject(sys, "tasks");
    json_add_i64(tasks, "total", tc->total);
    json_add_i64(tasks, "running", tc->running);
    json_add_i64(tasks, "sleeping", tc->sleeping);
    json_add_i64(tasks, "stopped", tc->stopped);
    json_add_i64(tasks, "zombie", tc->zombie);
    cJSON *cpu = cJSON_AddObjectToObject(sys, "cpu");
    add_cpu_usage(cpu, &st->total);
    cJSON *per = cJSON_AddArrayToObject(cpu, "per_cpu");
    for (int i = 0; i < st->cur.ncpu; i++) {
        cJSON *c = cJSON_CreateObject();
        add_cpu_usage(c, &st->per_cpu[i]);
        cJSON_AddItemToArray(per, c);
    }
    cJSON *mem = cJSON_AddObjectToObject(sys, "memory");
    json_add_u64(mem, "total_bytes", st->mem.total);
    json_add_u64(mem, "free_bytes", st->mem.free);
    json_add_u64(mem, "available_bytes", st->mem.available);
    json_add_u64(mem, "used_bytes", st->mem.used);
    json_add_u64(mem, "buffers_bytes", st->mem.buffers);
    json_add_u64(mem, "cached_bytes", st->mem.cached);
    json_add_u64(mem, "swap_total_bytes", st->mem.swap_total);
    json_add_u64(mem, "swap_free_bytes", st->mem.swap_free);
    json_add_u64(mem, "swap_used_bytes", st->mem.swap_used);
    cJSON *psi = cJSON_AddObjectToObject(sys, "pressure"); /* null per resource on a kernel without PSI */
    for (int r = 0; r < PRESSURE_COUNT; r++) {
        const struct pressure *p = &st->pressure[r];
        const char *name = systotals_pressure_name((enum pressure_resource)r);
        if (!p->known) {
            cJSON_AddNullToObject(psi, name);
            continue;
        }
        cJSON *o = cJSON_AddObjectToObject(psi, name);
        static const char *const some[3] = {"some_avg10", "some_avg60", "some_avg300"};
        static const char *const full[3] = {"full_avg10", "full_avg60", "full_avg300"};
        for (int k = 0; k < 3; k++) json_add_fixed(o, some[k], p->some[k], 2);
        for (int k = 0; k < 3; k++) json_add_fixed(o, full[k], p->full[k], 2);
    }
    return sys;
}

/* The activity counters and their rates; null where unreadable or (rates) before a second sample. */
static void add_activity(cJSON *p, const struct proc_row *r)
{
    cJSON *disk = cJSON_AddObjectToObject(p, "disk");
    json_add_u64_or_null(disk, "read_bytes", r->io_known, r->disk_read_bytes);
    json_add_u64_or_null(disk, "write_bytes", r->io_known, r->disk_write_bytes);
    json_add_fixed_or_null(disk, "read_bytes_per_sec", r->io_rates_known, r->disk_read_per_sec, 0);
    json_add_fixed_or_null(disk, "write_bytes_per_sec", r->io_rates_known, r->disk_write_per_sec, 0);
    cJSON *net = cJSON_AddObjectToObject(p, "network"); /* TCP, counted since diagtop first sampled it */
    json_add_u64_or_null(net, "received_bytes", r->net_known, r->net_received_bytes);
    json_add_u64_or_null(net, "sent_bytes", r->net_known, r->net_sent_bytes);
    json_add_fixed_or_null(net, "received_bytes_per_sec", r->net_rates_known, r->net_received_per_sec, 0);
    json_add_fixed_or_null(net, "sent_bytes_per_sec", r->net_rates_known, r->net_sent_per_sec, 0);
    cJSON *sched = cJSON_AddObjectToObject(p, "scheduler");
    json_add_fixed_or_null(sched, "wait_seconds", r->sched_known, (double)r->wait_ns / 1e9, 6);
    json_add_u64_or_null(sched, "switches", r->sched_known, r->switches);
    json_add_fixed_or_null(sched, "wait_percent", r->sched_rates_known, r->wait_percent, 1);
    json_add_fixed_or_null(sched, "switches_per_sec", r->sched_rates_known, r->switches_per_sec, 0);
    json_add_fixed_or_null(sched, "io_wait_percent", r->io_wait_known, r->io_wait_percent, 1);
    json_add_u64_or_null(p, "oom_score", r->oom_score >= 0, (unsigned long long)r->oom_score);
    if (r->unit) json_add_bytes(p, "unit", r->unit, strlen(r->unit));
    else cJSON_AddNullToObject(p, "unit");
}

static cJSON *process_json(const struct proc_row *r, const struct systotals *st, const struct column_ctx *ctx)
{
    cJSON *p = cJSON_CreateObject();
    double hz = (double)(ctx->hertz ? ctx->hertz : 100);
    json_add_i64(p, "pid", r->pid);
    json_add_i64(p, "tgid", r->tgid);
    json_add_i64(p, "ppid", r->ppid);
    cJSON_AddBoolToObject(p, "thread", r->is_thread);
    cJSON_AddBoolToObject(p, "kernel_thread", r->is_kernel);
    if (r->uid_known) {
        json_add_string_or_null(p, "user", users_name(ctx->users, r->uid));
        json_add_u64(p, "uid", r->uid);
    } else {
        cJSON_AddNullToObject(p, "user");
        cJSON_AddNullToObject(p, "uid");
    }
    char state[2] = {r->state, 0};
    json_add_bytes(p, "state", state, 1);
    json_add_fixed(p, "cpu_percent", r->cpu_percent, 1);
    json_add_fixed(p, "mem_percent", r->mem_percent, 2);
    json_add_u64(p, "rss_bytes", r->rss_bytes);
    json_add_u64(p, "vsize_bytes", r->vsize_bytes);
    if (r->shared_bytes >= 0) json_add_u64(p, "shared_bytes", (unsigned long long)r->shared_bytes);
    else cJSON_AddNullToObject(p, "shared_bytes");
    if (r->growth_known && !r->is_kernel) json_add_fixed(p, "rss_growth_bytes_per_min", r->growth_bytes_per_min, 0);
    else cJSON_AddNullToObject(p, "rss_growth_bytes_per_min");
    json_add_i64(p, "threads", r->nlwp);
    add_activity(p, r);
    json_add_i64(p, "nice", r->nice);
    json_add_i64(p, "priority", r->priority);
    char iso[32];
    clock_format_iso8601(iso, sizeof iso, (time_t)(st->cur.btime + (unsigned long long)((double)r->start_ticks / hz)));
    cJSON_AddStringToObject(p, "start_time", iso);
    json_add_fixed(p, "user_cpu_seconds", (double)r->utime / hz, 2);
    json_add_fixed(p, "system_cpu_seconds", (double)r->stime / hz, 2);
    json_add_bytes(p, "name", r->comm, strlen(r->comm));
    if (r->cmdline) {
        /* The line joined by spaces, and the exact arguments. */
        char *line = malloc(r->cmdline_len + 1);
        cJSON *argv = cJSON_CreateArray();
        if (line) {
            for (size_t i = 0; i < r->cmdline_len; i++) line[i] = r->cmdline[i] ? r->cmdline[i] : ' ';
            json_add_bytes(p, "cmdline", line, r->cmdline_len);
            free(line);
        }
        for (size_t i = 0; i < r->cmdline_len; i += strlen(r->cmdline + i) + 1) {
            cJSON *holder = cJSON_CreateObject();
            json_add_bytes(holder, "a", r->cmdline + i, strlen(r->cmdline + i));
            cJSON_AddItemToArray(argv, cJSON_DetachItemFromObject(holder, "a"));
            cJSON_Delete(holder);
        }
        cJSON_AddItemToObject(p, "argv", argv);
    } else {
        cJSON_AddNullToObject(p, "cmdline");
        cJSON_AddNullToObject(p, "argv");
    }
    json_add_string_or_null(p, "exe", r->exe);
    cJSON_AddBoolToObject(p, "exe_deleted", r->exe_deleted);
    json_add_string_or_null(p, "runtime", runtime_name(r->runtime));
    cJSON_AddBoolToObject(p, "agent", r->agent);
    return p;
}

char *snapshot_json(const struct systotals *st, const struct task_counts *tc, const struct procview *v,
                    const struct column_ctx *ctx, double interval)
{
    cJSON *doc = cJSON_CreateObject();
    if (!doc) return NULL;
    char iso[32];
    time_t now = time(NULL);
    clock_format_iso8601(iso, sizeof iso, now);
    cJSON_AddStringToObject(doc, "time", iso);
    json_add_i64(doc, "timestamp", (long long)now);
    json_add_fixed(doc, "interval_seconds", interval, 3);
    cJSON_AddItemToObject(doc, "system", system_json(st, tc));
    cJSON *procs = cJSON_AddArrayToObject(doc, "processes");
    for (size_t i = 0; i < v->n; i++) cJSON_AddItemToArray(procs, process_json(v->rows[i].row, st, ctx));
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    return text;
}
