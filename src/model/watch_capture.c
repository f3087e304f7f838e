#include "watch_capture.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actions/capture/capture.h"
#include "actions/dump/dump.h"
#include "actions/runtimes/provider.h"
#include "render/heap_view.h"
#include "render/pprof_write.h"
#include "render/rt_json.h"
#include "render/rt_text.h"
#include "render/stack_text.h"
#include "render/text_lines.h"
#include "util/clock.h"
#include "util/saved_file.h"
#include "util/text.h"

static void fail(struct watch_event *ev, enum watch_event_kind kind, const char *fmt, const char *why)
{
    ev->kind = kind;
    snprintf(ev->msg, sizeof ev->msg, fmt, why);
}

/* Free bytes for an unprivileged writer in dir, or -1 when it cannot be said. */
static long long free_bytes(const char *dir)
{
    struct statvfs v;
    return statvfs(dir, &v) < 0 ? -1 : (long long)v.f_bavail * (long long)v.f_frsize;
}

/* The disk guard: whether `need` more bytes fit the free space and the watch's --max-disk. Returns 0, or -1 with
 * the reason in ev (SKIPPED). */
static int guard_disk(const struct watch_config *c, unsigned long long need, unsigned long long written,
                      struct watch_event *ev)
{
    char a[32], b[32];
    long long avail = free_bytes(c->dir);
    text_format_bytes(a, sizeof a, (long long)need);
    if (avail >= 0 && (unsigned long long)avail < need) {
        text_format_bytes(b, sizeof b, avail);
        ev->kind = WATCH_EV_SKIPPED;
        snprintf(ev->msg, sizeof ev->msg, "not taken: about %s needed, %s free in %s", a, b, c->dir);
        return -1;
    }
    if (c->max_disk && written + need > c->max_disk) {
        text_format_bytes(b, sizeof b, (long long)(c->max_disk - (written < c->max_disk ? written : c->max_disk)));
        ev->kind = WATCH_EV_SKIPPED;
        snprintf(ev->msg, sizeof ev->msg, "not taken: about %s needed, %s left of --max-disk", a, b);
        return -1;
    }
    return 0;
}

/* The first free name of base + suffix (base-2 + suffix, ... when taken within the same second). */
static int free_name(const char *base, const char *suffix, char *path, size_t n)
{
    for (int i = 1; i <= 100; i++) {
        if (i == 1) snprintf(path, n, "%s%s", base, suffix);
        else snprintf(path, n, "%s-%d%s", base, i, suffix);
        if (access(path, F_OK) < 0 && errno == ENOENT) return 0;
    }
    return -1;
}

static void take_dump(const struct watch_config *c, const struct watch_firing *f, unsigned long long *written,
                      struct watch_event *ev)
{
    struct dump_options o;
    dump_options_default(&o);
    o.cancel = c->cancel;
    /* Stopped at the signal already: the core from that stop, the signal's thread first; with a snapshot, where it
     * is safe, the other threads run on once the copy exists. */
    if (f->held) {
        o.held = &f->held->s;
        o.first_tid = f->held->hit_tid;
        o.siginfo = f->held->hit_sig ? &f->held->hit_info : NULL;
    }
    char err[512];
    unsigned long long est = 0;
    if (dump_estimate(f->pid, &o, &est, err, sizeof err) < 0) return fail(ev, WATCH_EV_FAILED, "%s", err);
    if (guard_disk(c, est, *written, ev) < 0) return;
    if (free_name(f->base, ".core", ev->file, sizeof ev->file) < 0)
        return fail(ev, WATCH_EV_FAILED, "no free name for %s.core", f->base);
    o.path = ev->file;
    struct dump_result *r = calloc(1, sizeof *r);
    if (!r) return fail(ev, WATCH_EV_FAILED, "%s", "out of memory");
    if (dump_write(f->pid, &o, r, err, sizeof err) < 0) {
        ev->file[0] = '\0';
        free(r);
        return fail(ev, WATCH_EV_FAILED, "%s", err);
    }
    snprintf(ev->file, sizeof ev->file, "%s", r->path);
    ev->kind = WATCH_EV_CAPTURE;
    ev->bytes = r->allocated_bytes;
    ev->pause_ms = r->mode == DUMP_MODE_SNAPSHOT ? r->pause_longest_ms : r->stopped_ms;
    if (f->held && r->mode != DUMP_MODE_SNAPSHOT) /* still held: so far, from the signal's stop */
        ev->pause_ms = (clock_monotonic_seconds() - f->held->s.stop_begin) * 1000.0;
    *written += r->allocated_bytes;
    if (r->mode == DUMP_MODE_SNAPSHOT || !r->mode_reason[0])
        snprintf(ev->msg, sizeof ev->msg, "%s, %d threads", r->mode == DUMP_MODE_SNAPSHOT ? "snapshot" : "stop-and-copy",
                 r->threads);
    else snprintf(ev->msg, sizeof ev->msg, "stop-and-copy (%.300s), %d threads", r->mode_reason, r->threads);
    free(r);
}

/* bytes saved as base + suffix, with the guard. */
static void save(const struct watch_config *c, const struct watch_firing *f, const char *suffix, const void *bytes,
                 size_t len, unsigned long long *written, struct watch_event *ev)
{
    if (guard_disk(c, len, *written, ev) < 0) return;
    char *path = NULL, err[512];
    if (saved_file_write_named(f->pid, c->dir, f->base, suffix, bytes, len, &path, err, sizeof err) < 0)
        return fail(ev, WATCH_EV_FAILED, "%s", err);
    snprintf(ev->file, sizeof ev->file, "%s", path);
    free(path);
    ev->kind = WATCH_EV_CAPTURE;
    ev->bytes = len;
    *written += len;
}

/* Lines joined into one malloc'd text. */
static char *join_lines(const struct text_lines *tl, size_t *len)
{
    char *buf = NULL;
    FILE *m = open_memstream(&buf, len);
    if (!m) return NULL;
    int bad = text_lines_write(tl, m) < 0;
    if (fclose(m) != 0 || bad) {
        free(buf);
        return NULL;
    }
    return buf;
}

static void take_stack(const struct watch_config *c, const struct watch_firing *f, unsigned long long *written,
                       struct watch_event *ev)
{
    struct capture_stack_options o;
    capture_stack_options_default(&o);
    o.cancel = c->cancel;
    struct capture_stack r;
    char err[512];
    if (capture_stack(f->pid, &o, &r, err, sizeof err) < 0) return fail(ev, WATCH_EV_FAILED, "%s", err);
    struct text_lines tl = {0};
    struct stack_text_opts to = {1, o.stack.source};
    int rc = r.runtime ? rt_text_stack(&r.rt, 1, &tl) : stack_text_render(&r.native, &to, &tl);
    size_t len = 0;
    char *text = rc < 0 ? NULL : join_lines(&tl, &len);
    if (!r.runtime) ev->pause_ms = r.native.stopped_ms;
    snprintf(ev->msg, sizeof ev->msg, "by %s", r.by ? r.by : "native");
    text_lines_free(&tl);
    capture_stack_free(&r);
    if (!text) return fail(ev, WATCH_EV_FAILED, "%s", "out of memory");
    save(c, f, ".stack.txt", text, len, written, ev);
    free(text);
}

static void take_profile(const struct watch_config *c, const struct watch_action *a, const struct watch_firing *f,
                         unsigned long long *written, struct watch_event *ev)
{
    struct capture_profile_options o;
    capture_profile_options_default(&o);
    o.want_report = 1;
    o.seconds = a->seconds;
    o.save_dir = c->dir;
    o.cancel = c->cancel;
    struct capture_profile r;
    char err[512];
    if (capture_profile(f->pid, &o, &r, err, sizeof err) < 0) return fail(ev, WATCH_EV_FAILED, "%s", err);
    snprintf(ev->msg, sizeof ev->msg, "by %s", r.by ? r.by : "native");
    if (r.is_report) {
        unsigned char *bytes = NULL;
        size_t len = 0;
        if (pprof_write_cpu(&r.report, &bytes, &len, err, sizeof err) < 0) fail(ev, WATCH_EV_FAILED, "%s", err);
        else save(c, f, ".pb.gz", bytes, len, written, ev);
        free(bytes);
    } else if (r.rt.saved_path) { /* the runtime's profiler saved its own file (Go's pprof, a JVM's .jfr) */
        struct stat st;
        snprintf(ev->file, sizeof ev->file, "%s", r.rt.saved_path);
        ev->kind = WATCH_EV_CAPTURE;
        ev->bytes = stat(ev->file, &st) == 0 ? (unsigned long long)st.st_size : 0;
        *written += ev->bytes;
    } else {
        fail(ev, WATCH_EV_FAILED, "%s: the profile saved no file", r.by ? r.by : "runtime");
    }
    capture_profile_free(&r);
}

/* The runtime's heap summary (a JVM's class histogram, Go's or the agent's heap profile by allocation site) as the
 * JSON `diagtop heap --json` writes, so that a later `diagtop heap PID --diff FILE` shows what grew since. */
static void take_heap(const struct watch_config *c, const struct watch_firing *f, unsigned long long *written,
                      struct watch_event *ev)
{
    char err[512];
    const struct provider *p = provider_choose(f->pid, OP_HEAP, 0, err, sizeof err);
    if (!p) return fail(ev, WATCH_EV_FAILED, "no heap summary: %s", err);
    struct provider_request rq;
    provider_request_default(&rq, f->pid);
    rq.cancel = c->cancel;
    struct rt_heap h = {0};
    if (p->heap(&rq, &h, err, sizeof err) < 0) return fail(ev, WATCH_EV_FAILED, "%s", err);
    snprintf(ev->msg, sizeof ev->msg, "by %s, %d rows", p->name, h.n);
    struct heap_view v;
    char *doc = heap_view_build(&v, &h, NULL, NULL) < 0 ? NULL : rt_json_heap(&v);
    if (doc) save(c, f, ".heap.json", doc, strlen(doc), written, ev);
    else fail(ev, WATCH_EV_FAILED, "%s", "out of memory");
    free(doc);
    heap_view_free(&v);
    rt_heap_free(&h);
}

/* The command through /bin/sh, its output on diagtop's stderr (stdout may be the JSON log), with the firing in
 * its environment. Waits for it; a cancel sends it SIGTERM. */
static void take_exec(const struct watch_config *c, const struct watch_action *a, const struct watch_firing *f,
                      struct watch_event *ev)
{
    char pid[16];
    snprintf(pid, sizeof pid, "%d", f->pid);
    pid_t child = fork();
    if (child < 0) return fail(ev, WATCH_EV_FAILED, "cannot start the command: %s", strerror(errno));
    if (child == 0) {
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0) dup2(null, STDIN_FILENO);
        dup2(STDERR_FILENO, STDOUT_FILENO);
        setenv("DIAGTOP_PID", pid, 1);
        setenv("DIAGTOP_TRIGGER", f->trigger, 1);
        setenv("DIAGTOP_VALUE", f->value, 1);
        setenv("DIAGTOP_FILE", f->last_file, 1);
        setenv("DIAGTOP_DIR", c->dir, 1);
        execl("/bin/sh", "sh", "-c", a->cmd, (char *)NULL);
        _exit(127);
    }
    int status = 0, termed = 0;
    while (waitpid(child, &status, WNOHANG) == 0) {
        if (c->cancel && *c->cancel && !termed) {
            kill(child, SIGTERM);
            termed = 1;
        }
        clock_sleep(0.02, NULL);
    }
    ev->kind = WATCH_EV_CAPTURE;
    if (WIFEXITED(status)) snprintf(ev->msg, sizeof ev->msg, "exit status %d", WEXITSTATUS(status));
    else snprintf(ev->msg, sizeof ev->msg, "killed by signal %d", WTERMSIG(status));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ev->kind = WATCH_EV_FAILED;
}

/* Whether an action before a (of the same list) is a dump. */
static int earlier_dump(const struct watch_config *c, const struct watch_action *a)
{
    for (int i = 0; i < c->nactions && &c->actions[i] != a; i++)
        if (c->actions[i].kind == WATCH_DO_DUMP) return 1;
    return 0;
}

void watch_capture_take(const struct watch_config *c, const struct watch_action *a, const struct watch_firing *f,
                        unsigned long long *written, struct watch_event *ev)
{
    double start = clock_monotonic_seconds();
    ev->action = a;
    ev->pause_ms = -1;
    if (f->held && (a->kind == WATCH_DO_STACK || a->kind == WATCH_DO_PROFILE || a->kind == WATCH_DO_HEAP)) {
        ev->kind = WATCH_EV_SKIPPED;
        snprintf(ev->msg, sizeof ev->msg, "not taken: the process is held at its %s (the core has every stack)",
                 f->held->hit_sig ? "signal" : "exit");
        return;
    }
    if (f->held && a->kind == WATCH_DO_DUMP && earlier_dump(c, a)) { /* its snapshot let the other threads go */
        ev->kind = WATCH_EV_SKIPPED;
        snprintf(ev->msg, sizeof ev->msg, "not taken: one core per signal or exit");
        return;
    }
    switch (a->kind) {
    case WATCH_DO_DUMP: take_dump(c, f, written, ev); break;
    case WATCH_DO_STACK: take_stack(c, f, written, ev); break;
    case WATCH_DO_PROFILE: take_profile(c, a, f, written, ev); break;
    case WATCH_DO_HEAP: take_heap(c, f, written, ev); break;
    case WATCH_DO_EXEC: take_exec(c, a, f, ev); break;
    }
    ev->took_ms = (clock_monotonic_seconds() - start) * 1000.0;
}
