#include "api_processes.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "actions/target/process_control.h"
#include "collect/procinfo.h"
#include "render/history_json.h"
#include "render/json_util.h"
#include "render/procinfo_json.h"
#include "render/snapshot_json.h"
#include "util/clock.h"
#include "util/fileio.h"
#include "api_metrics.h"
#include "api_target.h"

#define FILTER_MAX 256

/* The view options of sort, order, user and filter. Returns 0 or -1 with a 400 in out. */
static int view_options(const struct api_request *rq, struct api_reply *out, struct procview_opts *o)
{
    memset(o, 0, sizeof *o);
    o->sort = COL_CPU;
    const char *sort, *order, *user, *filter;
    if (api_arg_text(rq, out, "sort", 32, &sort) < 0 || api_arg_text(rq, out, "user", 64, &user) < 0 ||
        api_arg_text(rq, out, "filter", FILTER_MAX, &filter) < 0)
        return -1;
    order = api_route_takes(rq->route, "order") ? rq->arg(rq->cookie, "order") : NULL;
    if (sort) {
        const struct column *c = columns_find(sort);
        if (!c) return api_reply_error(out, 400, "sort: not a column: pid user pri ni virt res shr s cpu mem time thr "
                                       "growth runtime command");
        o->sort = c->id;
    }
    if (order) {
        if (strcmp(order, "asc") && strcmp(order, "desc")) return api_reply_error(out, 400, "order: asc or desc");
        int descending = order[0] == 'd';
        o->reverse = descending != columns_table[o->sort].sort_descending;
    }
    if (user) {
        if (users_lookup(user, &o->user) < 0) return api_reply_error(out, 400, "user: no such user");
        o->user_set = 1;
    }
    o->filter = filter && *filter ? filter : NULL;
    return 0;
}

/* GET /api/processes: the process table, as `diagtop -b --json`. */
void api_processes_list(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    struct procview_opts o;
    long limit;
    if (view_options(rq, out, &o) < 0 || api_arg_long(rq, out, "limit", 1, 1000000, 1000000, &limit) < 0) return;
    char err[256];
    if (api_monitor_acquire(&s->mon, &o, err, sizeof err) < 0) {
        api_reply_error(out, 500, "%s", err);
        return;
    }
    struct monitor *m = &s->mon.m;
    size_t n = m->view.n < (size_t)limit ? m->view.n : (size_t)limit;
    /* JSON carries every field, as `diagtop -b --json` does: fill them for the rows sent only. */
    monitor_fill_rows(m, 0, n, PROC_NEED_ALL);
    struct procview shown = m->view;
    shown.n = n;
    char *doc = snapshot_json(m->sys, &m->counts, &shown, &m->ctx, proctable_interval(m->table));
    api_monitor_release(&s->mon);
    api_reply_json(out, 200, doc);
}

/* GET /metrics: Prometheus text (api_metrics). */
void api_processes_metrics(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    struct procview_opts o;
    long top;
    if (view_options(rq, out, &o) < 0 || api_arg_long(rq, out, "top", 0, 100000, 20, &top) < 0) return;
    char err[256];
    if (api_monitor_acquire(&s->mon, &o, err, sizeof err) < 0) {
        api_reply_error(out, 500, "%s", err);
        return;
    }
    /* exact resident memory, as top shows, and the activity counters */
    monitor_fill_rows(&s->mon.m, 0, (size_t)top, PROC_NEED_STATM | PROC_NEED_IO | PROC_NEED_SCHED | PROC_NEED_OOM |
                                                       PROC_NEED_NET);
    char *text = NULL;
    size_t len = 0;
    int rc = api_metrics_render(&s->mon.m, (size_t)top, &text, &len);
    api_monitor_release(&s->mon);
    int armed;
    unsigned long long firings, captures, failed;
    api_triggers_counts(&s->triggers, &armed, &firings, &captures, &failed);
    if (rc == 0) rc = api_metrics_append_triggers(armed, firings, captures, failed, &text, &len);
    if (rc < 0) {
        free(text);
        api_reply_error(out, 500, "out of memory");
        return;
    }
    out->status = 200;
    out->content_type = "text/plain; version=0.0.4; charset=utf-8";
    out->body = text;
    out->len = len;
}

/* GET /healthz: up, how many samples taken, whether read-only. */
void api_processes_healthz(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    (void)rq;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "status", "ok");
    json_add_u64(o, "samples", s->mon.samples);
    cJSON_AddBoolToObject(o, "read_only", s->read_only);
    char *doc = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    api_reply_json(out, 200, doc);
}

/* The sections of the route's process as procinfo_json, as `diagtop info PID --json` does. */
static void info(const struct api_request *rq, struct api_reply *out, unsigned sections, double cpu_sample,
                 int secrets)
{
    struct proc_info pi;
    char err[256];
    int rc = procinfo_collect(rq->route->pid, sections, cpu_sample, &pi, err, sizeof err);
    if (rc < 0) {
        api_reply_error(out, api_status_of_errno(rc), "%s", err);
        return;
    }
    api_reply_json(out, 200, procinfo_json(&pi, secrets));
    procinfo_free(&pi);
}

static int target_check(const struct api_request *rq, struct api_reply *out)
{
    struct procstat ps;
    return api_target_check(rq->route->pid, 0, &ps, out);
}

/* GET /api/processes/{pid}[?section=LIST]: every section but the environment unless asked. */
void api_processes_details(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    (void)s;
    const char *list;
    if (target_check(rq, out) < 0 || api_arg_text(rq, out, "section", 128, &list) < 0) return;
    int m = list ? procinfo_parse_sections(list) : (int)(PI_ALL & ~PI_ENV);
    if (m <= 0) {
        api_reply_error(out, 400, "section: a list of general,memory,modules,fds,threads,env,io");
        return;
    }
    info(rq, out, (unsigned)m, (m & PI_THREADS) ? 0.1 : 0, 0);
}

void api_processes_threads(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    (void)s;
    if (target_check(rq, out) == 0) info(rq, out, PI_THREADS, 0.1, 0);
}

void api_processes_modules(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    (void)s;
    if (target_check(rq, out) == 0) info(rq, out, PI_MODULES, 0, 0);
}

void api_processes_fds(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    (void)s;
    if (target_check(rq, out) == 0) info(rq, out, PI_FDS, 0, 0);
}

/* GET .../environment[?show_secrets=1]: values that look secret are masked unless an admin asks. */
void api_processes_environment(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    (void)s;
    int secrets = 0;
    if (target_check(rq, out) < 0 || api_arg_bool(rq, out, "show_secrets", &secrets) < 0) return;
    if (secrets && api_require_admin(rq, out, "show_secrets") < 0) return;
    info(rq, out, PI_ENV, 0, secrets);
}

/* The start time as /api/processes shows it: boot time + start ticks, ISO 8601 UTC. */
static int start_time_iso(const struct procstat *ps, char *iso, size_t n)
{
    char *text = fileio_read_file(AT_FDCWD, "/proc/stat", 1 << 20, NULL);
    char *p = text ? strstr(text, "\nbtime ") : NULL;
    if (!p) {
        free(text);
        return -1;
    }
    unsigned long long btime = strtoull(p + 7, NULL, 10);
    free(text);
    long hz = sysconf(_SC_CLK_TCK);
    clock_format_iso8601(iso, n, (time_t)(btime + (unsigned long long)((double)ps->starttime / (double)(hz > 0 ? hz : 100))));
    return 0;
}

/* "TERM", "SIGTERM", "15" -> 15; -1 for anything else. */
static int parse_signal(const char *s)
{
    long n;
    if (api_param_long(s, 1, SIGRTMAX, &n) == 0) return (int)n;
    if (!strncmp(s, "SIG", 3)) s += 3;
    for (int sig = 1; sig < NSIG; sig++) {
        const char *abbrev = sigabbrev_np(sig);
        if (abbrev && !strcmp(abbrev, s)) return sig;
    }
    return -1;
}

/* DELETE /api/processes/{pid}: SIGTERM (or ?signal=) to the process, checked through a pidfd to be the one that
 * has this start time (?start_time= as /api/processes shows it, or the one it has now). */
void api_processes_signal(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    (void)s;
    int pid = rq->route->pid;
    const char *name, *start;
    if (api_arg_text(rq, out, "signal", 16, &name) < 0 || api_arg_text(rq, out, "start_time", 32, &start) < 0) return;
    int sig = name ? parse_signal(name) : SIGTERM;
    if (sig < 0) {
        api_reply_error(out, 400, "signal: a signal name (TERM, KILL, INT, HUP, USR1, ...) or number");
        return;
    }
    struct procstat ps;
    if (api_target_check(pid, 1, &ps, out) < 0) return;
    if (start) {
        char iso[32];
        if (start_time_iso(&ps, iso, sizeof iso) < 0) {
            api_reply_error(out, 500, "cannot read the boot time from /proc/stat");
            return;
        }
        if (strcmp(iso, start)) {
            api_reply_error(out, 409, "process %d started at %s, not %s: its PID was reused", pid, iso, start);
            return;
        }
    }
    char err[256];
    int rc = process_signal(pid, ps.starttime, sig, err, sizeof err);
    if (rc < 0) {
        api_reply_error(out, api_status_of_errno(rc), "%s", err);
        return;
    }
    cJSON *o = cJSON_CreateObject();
    json_add_i64(o, "pid", pid);
    cJSON_AddStringToObject(o, "signal", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
    json_add_i64(o, "signal_number", sig);
    cJSON_AddBoolToObject(o, "sent", 1);
    char *doc = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    api_reply_json(out, 200, doc);
}

/* GET /api/processes/{pid}/history[?seconds=N]: the table's history of the process (api_monitor samples when a
 * request comes, so the history holds the moments somebody asked: the explorer's chart polls it). Reading it also
 * reads the process's disk, network and WAIT% rates, so they are in the samples taken while a chart is open. */
void api_processes_history(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    long seconds;
    if (target_check(rq, out) < 0 || api_arg_long(rq, out, "seconds", 1, 86400, 86400, &seconds) < 0) return;
    struct procview_opts o = {.sort = COL_CPU};
    char err[256];
    if (api_monitor_acquire(&s->mon, &o, err, sizeof err) < 0) {
        api_reply_error(out, 500, "%s", err);
        return;
    }
    struct proctable *t = s->mon.m.table;
    struct proc_row *row = proctable_fill_pid(t, rq->route->pid, PROC_NEED_IO | PROC_NEED_SCHED | PROC_NEED_NET);
    struct history_point *p = malloc(HISTORY_SLOTS * sizeof *p);
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    double now = clock_monotonic_seconds();
    size_t n = p && row ? proctable_history(t, rq->route->pid, now - (double)seconds, p, HISTORY_SLOTS) : 0;
    api_monitor_release(&s->mon);
    if (!row) api_reply_error(out, 404, "process %d is not in the table (it ended, or is a thread)", rq->route->pid);
    else api_reply_json(out, 200, history_json(rq->route->pid, p, n, now, (double)wall.tv_sec + wall.tv_nsec / 1e9));
    free(p);
}
