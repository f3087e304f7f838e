/* The gops provider: Go programs that run the gops agent (docs/protocols/gops.md). The agent is found through the
 * target's own environment and its port trusted only while that very process LISTENs on it (runtime_gops_port),
 * checked again before every exchange; each exchange is one command on one connection (gops_client) under
 * provider_lock, and its reply is parsed as untrusted text (gops_parse) or pprof (pprof_read). The agent's CPU
 * profile always takes 30 s (rq->seconds cannot change it); Go has no heap dump. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/runtime.h"
#include "util/fileio.h"
#include "util/netns_socket.h"
#include "gops_client.h"
#include "gops_parse.h"
#include "pprof_read.h"
#include "actions/runtimes/provider.h"
#include "actions/runtimes/heap_site.h"
#include "util/saved_file.h"

#define SMALL_REPLY (1u << 20) /* memstats, stats, version, gc, setgc: a few hundred bytes in practice */
#define BIG_REPLY (64u << 20)  /* goroutine dumps and pprof profiles */
#define CPU_PROFILE_SECONDS 30.0

enum gops_cmd { CMD_STACK = 0x01, CMD_GC = 0x02, CMD_MEMSTATS = 0x03, CMD_VERSION = 0x04, CMD_HEAP = 0x05,
                CMD_CPU = 0x06, CMD_STATS = 0x07 };

/* The uid that owns pid (for the passwd home of the port file's last fallback), or -1. */
static uid_t process_uid(int procfd, int pid)
{
    char *status = fileio_read_proc(procfd, pid, "status", 16384, NULL);
    const char *u = status ? strstr(status, "\nUid:") : NULL;
    uid_t uid = u ? (uid_t)strtoul(u + 5, NULL, 10) : (uid_t)-1;
    free(status);
    return uid;
}

/* The validated address of pid's agent, or -errno with why. Cheap: reads /proc and the port file only. */
static int gops_locate(int pid, struct inet_endpoint *agent, char *why, size_t whylen)
{
    int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (procfd < 0) {
        int e = errno;
        snprintf(why, whylen, "cannot open /proc: %s", strerror(e));
        return -e;
    }
    char exe[64];
    snprintf(exe, sizeof exe, "%d/exe", pid);
    int rc = 0, fd = openat(procfd, exe, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && (errno == ENOENT || errno == ESRCH)) {
        snprintf(why, whylen, "no process %d", pid);
        rc = -ESRCH;
    } else if (fd >= 0) { /* unreadable (another user's): the environment will say so */
        enum runtime_kind k = runtime_classify_elf(fd);
        close(fd);
        if (k != RUNTIME_GO) {
            snprintf(why, whylen, "not a Go program (its executable has no Go build info)");
            rc = -ENOTSUP;
        }
    }
    if (rc == 0) rc = runtime_gops_port(procfd, pid, process_uid(procfd, pid), agent, why, whylen);
    close(procfd);
    return rc;
}

static int gops_probe(int pid, char *why, size_t whylen)
{
    struct inet_endpoint agent;
    return gops_locate(pid, &agent, why, whylen);
}

/* One command, one connection, one reply: the port validated again, one request in flight per target. */
static int exchange(const struct provider_request *rq, const unsigned char *cmd, size_t cmdlen, double takes,
                    size_t max, struct gops_reply *r, char *err, size_t errlen)
{
    struct inet_endpoint agent;
    int rc = gops_locate(rq->pid, &agent, err, errlen);
    if (rc < 0) return rc;
    if ((rc = provider_lock(rq->pid, err, errlen)) < 0) return rc;
    struct gops_exchange x = {
        .agent = agent, .netns_pid = netns_same(rq->pid) == 0 ? rq->pid : 0, .cmd = cmd, .cmdlen = cmdlen,
        .timeout = rq->timeout, .takes = takes, .max_reply = max,
        .cancel = rq->cancel, .progress = rq->progress, .progress_arg = rq->progress_arg,
    };
    rc = gops_client_exchange(&x, r, err, errlen);
    provider_unlock(rq->pid);
    if (rc == 0 && r->len == 0) {
        char at[64];
        sockets_format_endpoint(&agent, at, sizeof at);
        snprintf(err, errlen, "the gops agent on %s closed without a reply (as it does for a command it "
                 "does not know: 0x%02x)", at, cmd[0]);
        gops_reply_free(r);
        rc = -EPROTO;
    }
    return rc;
}

/* exchange() of a one-byte command. */
static int command(const struct provider_request *rq, enum gops_cmd c, double takes, size_t max,
                   struct gops_reply *r, char *err, size_t errlen)
{
    unsigned char b = (unsigned char)c;
    return exchange(rq, &b, 1, takes, max, r, err, errlen);
}

static void set_provider(char *dst, size_t n) { snprintf(dst, n, "%s", gops_provider.name); }

static int gops_stack(const struct provider_request *rq, struct rt_stack *out, char *err, size_t errlen)
{
    struct gops_reply r;
    int rc = command(rq, CMD_STACK, 0, BIG_REPLY, &r, err, errlen);
    if (rc < 0) return rc;
    rc = gops_parse_stack((const char *)r.data, r.len, out, err, errlen);
    set_provider(out->provider, sizeof out->provider);
    out->pid = rq->pid;
    out->ms = r.ms;
    gops_reply_free(&r);
    return rc;
}

/* One text command parsed into fields; what went wrong says which command it was. */
static int fields_from(const struct provider_request *rq, enum gops_cmd c, const char *what,
                       int (*parse)(const char *, size_t, struct rt_fields *, char *, size_t), struct rt_fields *out,
                       char *err, size_t errlen)
{
    struct gops_reply r;
    char why[512];
    int rc = command(rq, c, 0, SMALL_REPLY, &r, why, sizeof why);
    if (rc == 0) rc = parse((const char *)r.data, r.len, out, why, sizeof why);
    gops_reply_free(&r);
    if (rc < 0) snprintf(err, errlen, "%s: %s", what, why);
    return rc;
}

static int gops_memstats(const struct provider_request *rq, struct rt_fields *out, char *err, size_t errlen)
{
    int rc = fields_from(rq, CMD_MEMSTATS, "memstats", gops_parse_memstats, out, err, errlen);
    if (rc == 0) rc = fields_from(rq, CMD_STATS, "stats", gops_parse_stats, out, err, errlen);
    if (rc == 0) rc = fields_from(rq, CMD_VERSION, "version", gops_parse_version, out, err, errlen);
    if (rc < 0) rt_fields_free(out);
    set_provider(out->provider, sizeof out->provider);
    return rc;
}

/* heap-alloc from a memstats request, for a GC's before and after. */
static int heap_alloc(const struct provider_request *rq, long long *bytes, char *err, size_t errlen)
{
    struct rt_fields fs = {0};
    int rc = fields_from(rq, CMD_MEMSTATS, "memstats", gops_parse_memstats, &fs, err, errlen);
    const struct rt_field *f = rc == 0 ? rt_fields_find(&fs, "heap_alloc") : NULL;
    if (rc == 0 && (!f || f->unit != RT_BYTES)) {
        snprintf(err, errlen, "memstats: the reply has no heap-alloc in bytes");
        rc = -EBADMSG;
    }
    if (rc == 0) *bytes = (long long)f->u;
    rt_fields_free(&fs);
    return rc;
}

static int gops_gc(const struct provider_request *rq, struct rt_gc *out, char *err, size_t errlen)
{
    set_provider(out->provider, sizeof out->provider);
    out->heap_before = out->heap_after = -1;
    struct gops_reply r;
    int rc;
    if (rq->set_gc_percent) {
        unsigned char req[16];
        size_t n = gops_encode_setgc(rq->gc_percent, req);
        if ((rc = exchange(rq, req, n, 0, SMALL_REPLY, &r, err, errlen)) < 0) return rc;
        rc = gops_parse_setgc((const char *)r.data, r.len, &out->message, err, errlen);
        out->ms = r.ms;
        gops_reply_free(&r);
        return rc;
    }
    if ((rc = heap_alloc(rq, &out->heap_before, err, errlen)) < 0) return rc;
    if ((rc = command(rq, CMD_GC, 0, SMALL_REPLY, &r, err, errlen)) < 0) return rc;
    out->ms = r.ms;
    if (r.len != 2 || memcmp(r.data, "ok", 2) != 0) {
        snprintf(err, errlen, "the reply to gc is not \"ok\" (%zu bytes): not a gops agent?", r.len);
        rc = -EBADMSG;
    }
    gops_reply_free(&r);
    if (rc == 0) rc = heap_alloc(rq, &out->heap_after, err, errlen);
    if (rc == 0 && !(out->message = strdup("ok"))) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
    }
    return rc;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Rows named by heap_site's rule, as the native agent's are (Go's profile has left the runtime's allocator out
 * already: this is for the user's drop_frames). */
static int name_sites(const struct provider_request *rq, struct rt_heap *h, char *err, size_t errlen)
{
    struct heap_drop drop;
    int rc = heap_drop_init(&drop, rq->drop_frames, err, errlen);
    for (int i = 0; rc == 0 && i < h->n; i++) {
        struct rt_heap_row *row = &h->rows[i];
        if (row->nstack < 2) continue;
        struct heap_site_frame f[64];
        int n = row->nstack < 64 ? row->nstack : 64;
        for (int k = 0; k < n; k++) f[k] = (struct heap_site_frame){row->stack[k].function, NULL, 0};
        const char *pick = row->stack[heap_site_pick(&drop, f, n)].function;
        char *name = strdup(pick ? pick : "?");
        if (!name) rc = -ENOMEM;
        else {
            free(row->name);
            row->name = name;
        }
    }
    if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
    heap_drop_free(&drop);
    return rc;
}

static int gops_heap(const struct provider_request *rq, struct rt_heap *out, char *err, size_t errlen)
{
    struct gops_reply r;
    int rc = command(rq, CMD_HEAP, 0, BIG_REPLY, &r, err, errlen);
    if (rc < 0) return rc;
    double taken = wall_now();
    char why[512];
    if ((rc = pprof_read_heap(r.data, r.len, out, why, sizeof why)) < 0)
        snprintf(err, errlen, "the agent's heap profile: %s", why);
    /* Only a profile that decodes is kept: garbage is not evidence. */
    if (rc == 0 && rq->save_dir)
        rc = saved_file_write(rq->pid, rq->save_dir, "heap", ".pb.gz", r.data, r.len, &out->saved_path, err,
                              errlen);
    gops_reply_free(&r);
    if (rc == 0) rc = name_sites(rq, out, err, errlen);
    if (rc < 0) {
        rt_heap_free(out);
        return rc;
    }
    set_provider(out->provider, sizeof out->provider);
    snprintf(out->kind, sizeof out->kind, "heap profile");
    out->pid = rq->pid;
    out->taken_at = taken;
    return 0;
}

static int gops_profile(const struct provider_request *rq, struct rt_profile *out, char *err, size_t errlen)
{
    struct gops_reply r;
    int rc = command(rq, CMD_CPU, CPU_PROFILE_SECONDS, BIG_REPLY, &r, err, errlen);
    if (rc == -ETIMEDOUT) {
        size_t l = strlen(err);
        snprintf(err + l, errlen - l, "; an agent whose program runs its own CPU profile never replies");
    }
    if (rc < 0) return rc;
    if (rq->progress) rq->progress(rq->progress_arg, 1.0);
    char why[512];
    if ((rc = pprof_read_profile(r.data, r.len, out, why, sizeof why)) < 0)
        snprintf(err, errlen, "the agent's CPU profile: %s", why);
    if (rc == 0)
        rc = saved_file_write(rq->pid, rq->save_dir, "cpu", ".pb.gz", r.data, r.len, &out->saved_path, err, errlen);
    if (rc == 0 && out->seconds <= 0) out->seconds = r.ms / 1000.0;
    gops_reply_free(&r);
    if (rc < 0) {
        rt_profile_free(out);
        return rc;
    }
    set_provider(out->provider, sizeof out->provider);
    snprintf(out->format, sizeof out->format, "pprof");
    return 0;
}

const struct provider gops_provider = {
    .name = "gops",
    .speaks = "Go",
    .probe = gops_probe,
    .stack = gops_stack,
    .memstats = gops_memstats,
    .gc = gops_gc,
    .heap = gops_heap,
    .profile = gops_profile,
    .heap_dump = NULL, /* Go has none */
};
