#include "api_actions.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actions/capture/capture.h"
#include "actions/runtimes/provider.h"
#include "collect/procinfo.h"
#include "render/cpu_json.h"
#include "render/heap_view.h"
#include "render/json_util.h"
#include "render/pprof_write.h"
#include "render/procinfo_json.h"
#include "render/rt_json.h"
#include "render/stack_json.h"
#include "util/text.h"
#include "api_target.h"

#define PROFILE_SECONDS_MAX 300

/* An action failed: the renderer's error document with the status its errno stands for. */
static void failed(struct api_reply *out, int rc, char *doc, const char *err)
{
    if (doc) api_reply_json(out, api_status_of_errno(rc), doc);
    else api_reply_error(out, api_status_of_errno(rc), "%s", err);
}

static void request_for(const struct api_state *s, int pid, double timeout, struct provider_request *rq)
{
    provider_request_default(rq, pid);
    rq->timeout = timeout > 0 ? timeout : s->agent_timeout;
    rq->cancel = &s->cancel;
    rq->drop_frames = s->drop_frames[0] ? s->drop_frames : NULL;
}

/* GET .../stack: the runtime's view (goroutines, Java threads) when it answers, else every OS thread through
 * ptrace, as `diagtop stack PID --json`. */
static void stack(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    int pid = rq->route->pid, native, no_stop, source = 1;
    long tid;
    double timeout;
    if (api_arg_bool(rq, out, "native", &native) < 0 || api_arg_bool(rq, out, "no_stop", &no_stop) < 0 ||
        api_arg_long(rq, out, "tid", 0, TEXT_PID_MAX, 0, &tid) < 0 ||
        api_arg_seconds(rq, out, "timeout", 60, 0, &timeout) < 0)
        return;
    if (rq->arg(rq->cookie, "source") && api_arg_bool(rq, out, "source", &source) < 0) return;
    struct capture_stack_options o;
    capture_stack_options_default(&o);
    o.from = native ? CAPTURE_NATIVE : CAPTURE_AUTO; /* a runtime that cannot answer: the OS threads, as the CLI */
    o.stack.tid = (int)tid;
    o.stack.no_stop = no_stop;
    o.stack.source = source;
    o.timeout = timeout > 0 ? timeout : s->agent_timeout;
    o.cancel = &s->cancel;
    struct capture_stack r;
    char err[512];
    int rc = capture_stack(pid, &o, &r, err, sizeof err);
    if (rc < 0) {
        failed(out, rc, stack_json_error(pid, err), err);
        return;
    }
    api_reply_json(out, 200, r.runtime ? rt_json_stack(&r.rt) : stack_json(&r.native, source));
    capture_stack_free(&r);
}

/* GET .../memstats: the kernel's accounting and, when the runtime answers, its own (`diagtop memstats --json`). */
static void memstats(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    int pid = rq->route->pid, native;
    double timeout;
    if (api_arg_bool(rq, out, "native", &native) < 0 || api_arg_seconds(rq, out, "timeout", 60, 0, &timeout) < 0)
        return;
    struct proc_info pi;
    char err[512] = "";
    int rc = procinfo_collect(pid, PI_MEMORY, 0, &pi, err, sizeof err);
    if (rc < 0) {
        failed(out, rc, rt_json_error(pid, NULL, err), err);
        return;
    }
    const struct provider *p = native ? NULL : provider_runtime_of(pid);
    struct rt_fields fs = {0};
    int have = 0;
    if (p && p->memstats && p->probe(pid, err, sizeof err) == 0) {
        struct provider_request prq;
        request_for(s, pid, timeout, &prq);
        have = p->memstats(&prq, &fs, err, sizeof err) == 0;
    }
    char *doc = procinfo_json(&pi, 0), *merged = NULL;
    if (doc && p) {
        char *rt = have ? rt_json_fields(pid, &fs) : rt_json_error(pid, p->name, err);
        merged = rt ? json_merge(doc, "runtime", rt) : NULL;
        free(rt);
        if (merged) {
            free(doc);
            doc = merged;
        }
    }
    api_reply_json(out, 200, doc);
    rt_fields_free(&fs);
    procinfo_free(&pi);
}

/* GET .../heap[?diff=ID]: the heap by class or allocation site (`diagtop heap --json`), kept under a snapshot id
 * so that a later request can diff against it. */
static void heap(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    int pid = rq->route->pid, live;
    const char *diff;
    double timeout;
    if (api_arg_bool(rq, out, "live", &live) < 0 || api_arg_text(rq, out, "diff", API_ID_LEN, &diff) < 0 ||
        api_arg_seconds(rq, out, "timeout", 120, 0, &timeout) < 0)
        return;
    if (live && api_require_admin(rq, out, "live (a full GC first)") < 0) return;
    if (diff && !api_id_valid(diff)) {
        api_reply_error(out, 400, "diff: not a snapshot id");
        return;
    }
    struct rt_heap old = {0};
    char err[512];
    if (diff) {
        char *text = api_store_get(&s->heaps, diff, pid);
        if (!text) {
            api_reply_error(out, 404, "diff: no heap snapshot %s of process %d (the server keeps the last %d)", diff,
                            pid, API_STORE_MAX);
            return;
        }
        int rc = rt_json_read_heap(text, &old, err, sizeof err);
        free(text);
        if (rc < 0) {
            api_reply_error(out, 500, "diff: %s", err);
            return;
        }
    }
    const struct provider *p = provider_choose(pid, OP_HEAP, 0, err, sizeof err);
    if (!p) {
        rt_heap_free(&old);
        api_reply_error(out, 501, "%s", err);
        return;
    }
    struct provider_request prq;
    request_for(s, pid, timeout, &prq);
    prq.live = live;
    struct rt_heap cur = {0};
    int rc = p->heap(&prq, &cur, err, sizeof err);
    if (rc < 0) {
        rt_heap_free(&old);
        failed(out, rc, rt_json_error(pid, p->name, err), err);
        return;
    }
    struct heap_view v;
    if (heap_view_build(&v, &cur, diff ? &old : NULL, NULL) < 0) {
        api_reply_error(out, 500, "out of memory");
    } else {
        char *doc = rt_json_heap(&v), *merged = NULL;
        char id[API_ID_LEN + 1], quoted[API_ID_LEN + 3];
        if (doc && api_store_put(&s->heaps, pid, doc, id) == 0) {
            snprintf(quoted, sizeof quoted, "\"%s\"", id);
            merged = json_merge(doc, "snapshot_id", quoted);
        }
        if (merged) {
            free(doc);
            doc = merged;
        }
        api_reply_json(out, 200, doc);
        heap_view_free(&v);
    }
    rt_heap_free(&cur);
    rt_heap_free(&old);
}

/* POST .../gc[?percent=N]. */
static void gc(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    int pid = rq->route->pid;
    long percent;
    double timeout;
    if (api_arg_long(rq, out, "percent", -1, 100000, -2, &percent) < 0 ||
        api_arg_seconds(rq, out, "timeout", 120, 0, &timeout) < 0)
        return;
    char err[512];
    const struct provider *p = provider_choose(pid, OP_GC, 0, err, sizeof err);
    if (!p) {
        api_reply_error(out, 501, "%s", err);
        return;
    }
    struct provider_request prq;
    request_for(s, pid, timeout, &prq);
    if (percent != -2) {
        prq.set_gc_percent = 1;
        prq.gc_percent = (int)percent;
    }
    struct rt_gc g = {0};
    int rc = p->gc(&prq, &g, err, sizeof err);
    if (rc < 0) failed(out, rc, rt_json_error(pid, p->name, err), err);
    else api_reply_json(out, 200, rt_json_gc(pid, &g));
    rt_gc_free(&g);
}

/* A file a runtime saved for us, sent and then removed (the descriptor keeps it readable). */
static void send_saved(struct api_reply *out, const char *path, const char *kind, int pid, const char *suffix)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        if (fd >= 0) close(fd);
        api_reply_error(out, 500, "cannot read the saved profile: %s", strerror(errno));
        return;
    }
    unlink(path);
    out->status = 200;
    out->content_type = "application/octet-stream";
    out->fd = fd;
    out->offset = 0;
    out->length = (uint64_t)st.st_size;
    snprintf(out->disposition, sizeof out->disposition, "attachment; filename=\"%s.%d%s\"", kind, pid, suffix);
}

/* POST .../profile?seconds=N: a CPU profile to download, gzipped pprof (or ?format=json). diagtop's sampler for
 * native processes (or ?native=1), else the runtime's profiler (Go's gops agent: pprof; a JVM: JFR). */
static void profile(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    int pid = rq->route->pid, native;
    long hz;
    double seconds, timeout;
    const char *format, *method;
    if (api_arg_seconds(rq, out, "seconds", PROFILE_SECONDS_MAX, 10, &seconds) < 0 ||
        api_arg_long(rq, out, "hz", 1, 10000, 100, &hz) < 0 || api_arg_bool(rq, out, "native", &native) < 0 ||
        api_arg_text(rq, out, "format", 8, &format) < 0 || api_arg_text(rq, out, "method", 8, &method) < 0 ||
        api_arg_seconds(rq, out, "timeout", 120, 0, &timeout) < 0)
        return;
    int json = format && !strcmp(format, "json");
    if (format && !json && strcmp(format, "pprof")) {
        api_reply_error(out, 400, "format: pprof or json");
        return;
    }
    if (method && strcmp(method, "perf") && strcmp(method, "ptrace")) {
        api_reply_error(out, 400, "method: perf or ptrace");
        return;
    }
    struct capture_profile_options o;
    capture_profile_options_default(&o);
    o.from = native ? CAPTURE_NATIVE : CAPTURE_AUTO;
    o.seconds = seconds;
    o.hz = (int)hz;
    if (method) o.method = method[1] == 'e' ? CPU_METHOD_PERF : CPU_METHOD_PTRACE;
    o.timeout = timeout > 0 ? timeout : s->agent_timeout;
    o.save_dir = s->dump_dir;
    o.cancel = &s->cancel;
    struct capture_profile r;
    char err[512];
    int rc = capture_profile(pid, &o, &r, err, sizeof err);
    if (rc < 0) {
        if (!r.by) api_reply_error(out, 501, "%s", err);
        else failed(out, rc, rt_json_error(pid, r.by, err), err);
    } else if (!r.is_report) {
        if (json || !r.rt.saved_path) api_reply_json(out, 200, rt_json_profile(pid, &r.rt));
        else send_saved(out, r.rt.saved_path, "cpu", pid, !strcmp(r.rt.format, "jfr") ? ".jfr" : ".pb.gz");
    } else if (json) {
        api_reply_json(out, 200, cpu_json(&r.report, NULL));
    } else {
        unsigned char *bytes = NULL;
        size_t len = 0;
        if (pprof_write_cpu(&r.report, &bytes, &len, err, sizeof err) < 0) {
            api_reply_error(out, 500, "%s", err);
        } else {
            out->status = 200;
            out->content_type = "application/octet-stream";
            out->body = (char *)bytes;
            out->len = len;
            snprintf(out->disposition, sizeof out->disposition, "attachment; filename=\"cpu.%d.pb.gz\"", pid);
        }
    }
    capture_profile_free(&r);
}

/* POST .../dump: 202 and the dump resource, which the worker fills. */
static void dump(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    int pid = rq->route->pid, full;
    const char *filter, *mode_text;
    if (api_arg_bool(rq, out, "full", &full) < 0 || api_arg_text(rq, out, "filter", 8, &filter) < 0 ||
        api_arg_text(rq, out, "mode", 16, &mode_text) < 0)
        return;
    enum dump_mode mode = DUMP_MODE_AUTO;
    if (mode_text && !strcmp(mode_text, "snapshot")) mode = DUMP_MODE_SNAPSHOT;
    else if (mode_text && !strcmp(mode_text, "stop")) mode = DUMP_MODE_STOP;
    else if (mode_text && strcmp(mode_text, "auto")) {
        api_reply_error(out, 400, "mode: auto, snapshot or stop");
        return;
    }
    unsigned mask = 0;
    if (filter) {
        char *end;
        unsigned long v = strtoul(filter, &end, 16);
        if (!*filter || *end || v > 0x1FF || filter[0] == '-' || filter[0] == '+' || filter[0] == ' ') {
            api_reply_error(out, 400, "filter: a coredump_filter mask (hex, up to 1ff)");
            return;
        }
        mask = (unsigned)v;
    }
    char id[API_ID_LEN + 1], err[512];
    int st = api_dumps_start(&s->dumps, pid, full, filter != NULL, mask, mode, id, err, sizeof err);
    if (st) {
        api_reply_error(out, st, "%s", err);
        out->retry_after = st == 503 ? 5 : st == 409 ? 1 : 0;
        return;
    }
    enum api_dump_state state;
    api_reply_json(out, 202, api_dumps_status(&s->dumps, id, &state));
    snprintf(out->location, sizeof out->location, "/api/dumps/%s", id);
}

/* Runs act on the route's process, held busy with what meanwhile. */
static void run_busy(struct api_state *s, const struct api_request *rq, struct api_reply *out, const char *what,
                     api_handler *act)
{
    int pid = rq->route->pid;
    struct procstat ps;
    if (api_target_check(pid, 1, &ps, out) < 0) return;
    char err[256];
    int st = api_busy_take(&s->busy, pid, what, err, sizeof err);
    if (st) {
        api_reply_error(out, st, "%s", err);
        out->retry_after = st == 503 ? 5 : 1;
        return;
    }
    act(s, rq, out);
    api_busy_release(&s->busy, pid);
}

void api_actions_stack(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    run_busy(s, rq, out, "stack capture", stack);
}

void api_actions_memstats(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    run_busy(s, rq, out, "memstats request", memstats);
}

void api_actions_heap(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    run_busy(s, rq, out, "heap summary", heap);
}

void api_actions_gc(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    run_busy(s, rq, out, "GC", gc);
}

void api_actions_profile(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    run_busy(s, rq, out, "CPU profile", profile);
}

void api_actions_dump(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    struct procstat ps;
    if (api_target_check(rq->route->pid, 1, &ps, out) < 0) return;
    dump(s, rq, out); /* the dump's worker holds the process busy itself */
}
