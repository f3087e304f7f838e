#include "agent_client.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/peer_io.h"
#include "util/text.h"

#define MAX_SITES 100000
#define MAX_STACKS 65536
#define MAX_THREADS 65536

/* The wait of one exchange: its cancel flag and progress. */
static struct peer_wait wait_of(const struct agent_exchange *x)
{
    double now = clock_monotonic_seconds();
    return (struct peer_wait){.cancel = x->cancel, .takes = x->takes, .progress = x->progress,
                              .progress_arg = x->progress_arg, .t0 = now, .last = now};
}

/* sockaddr_un for path; a path too long for it goes through an O_PATH descriptor of its directory (*dirfd). */
static int address(const char *path, struct sockaddr_un *sa, int *dirfd)
{
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    *dirfd = -1;
    if (strlen(path) < sizeof sa->sun_path) {
        memcpy(sa->sun_path, path, strlen(path) + 1);
        return 0;
    }
    const char *slash = strrchr(path, '/');
    if (!slash || strlen(slash + 1) > 64) return -ENAMETOOLONG;
    char dir[4096];
    size_t dl = (size_t)(slash - path);
    if (dl >= sizeof dir) return -ENAMETOOLONG;
    memcpy(dir, path, dl);
    dir[dl] = '\0';
    *dirfd = open(dl ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (*dirfd < 0) return -errno;
    snprintf(sa->sun_path, sizeof sa->sun_path, "/proc/self/fd/%d/%s", *dirfd, slash + 1);
    return 0;
}

static int connect_agent(const struct agent_exchange *x, double timeout, struct peer_wait *w, char *err,
                         size_t errlen)
{
    struct sockaddr_un sa;
    int dirfd, rc = address(x->path, &sa, &dirfd), fd = -1;
    if (rc == 0 && (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0) rc = -errno;
    if (rc == 0) rc = peer_connect(fd, (struct sockaddr *)&sa, sizeof sa, w->t0 + timeout, w);
    if (dirfd >= 0) close(dirfd);
    if (rc == 0) return fd;
    if (fd >= 0) close(fd);
    if (rc == -ECONNREFUSED) snprintf(err, errlen, "connection to the agent refused: nothing listens there now");
    else if (rc == -ETIMEDOUT) snprintf(err, errlen, "the agent did not accept the connection within %g s", timeout);
    else if (rc == -ECANCELED) snprintf(err, errlen, "cancelled");
    else if (rc == -EACCES) snprintf(err, errlen, "cannot connect to the agent's socket: permission denied (its "
                                     "directory and socket are private to the process's user)");
    else snprintf(err, errlen, "cannot connect to the agent: %s", strerror(-rc));
    return rc;
}

/* The status line: 0 for ok (*body after it), the agent's -errno with its words, or -EPROTO. */
static int status_of(char *data, size_t len, char **body, char *err, size_t errlen)
{
    static const char ok[] = "diagtop-agent 1 ok\n", bad[] = "diagtop-agent 1 error ";
    if (len >= sizeof ok - 1 && !memcmp(data, ok, sizeof ok - 1)) {
        *body = data + sizeof ok - 1;
        return 0;
    }
    if (len > sizeof bad - 1 && !memcmp(data, bad, sizeof bad - 1)) {
        char *p = data + sizeof bad - 1, *end;
        long e = strtol(p, &end, 10);
        if (end == p || e <= 0 || e > 4095) e = EPROTO;
        char *nl = memchr(end, '\n', len - (size_t)(end - data));
        size_t wl = nl ? (size_t)(nl - end) : len - (size_t)(end - data);
        while (wl && *end == ' ') end++, wl--;
        char words[400];
        text_sanitize_display(words, sizeof words, end, wl > 300 ? 300 : wl);
        snprintf(err, errlen, "the agent says: %s", words);
        return -(int)e;
    }
    snprintf(err, errlen, "the reply is not the diagtop agent's protocol (%zu bytes)", len);
    return -EPROTO;
}

int agent_client_exchange(const struct agent_exchange *x, struct agent_reply *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    double timeout = x->timeout > 0 ? x->timeout : 5.0;
    struct peer_wait w = wait_of(x);
    size_t rl = strlen(x->request);
    if (rl == 0 || rl > 254 || memchr(x->request, '\n', rl)) {
        snprintf(err, errlen, "not a request line");
        return -EINVAL;
    }
    int fd = connect_agent(x, timeout, &w, err, errlen);
    if (fd < 0) return fd;
    char line[256];
    memcpy(line, x->request, rl);
    line[rl] = '\n';
    int rc = 0;
    char *data = NULL;
    size_t len = 0;
    ssize_t sent = send(fd, line, rl + 1, MSG_NOSIGNAL); /* 256 bytes always fit a Unix socket's buffer */
    if (sent != (ssize_t)(rl + 1)) {
        rc = sent < 0 ? -errno : -EIO;
        snprintf(err, errlen, "cannot send the request to the agent: %s", strerror(-rc));
        goto out;
    }
    double allowed = x->takes + timeout;
    rc = peer_read_all(fd, clock_monotonic_seconds() + allowed, x->max_reply, &w, &data, &len);
    if (rc == -ECANCELED) snprintf(err, errlen, "cancelled");
    else if (rc == -ETIMEDOUT && len)
        snprintf(err, errlen, "the agent sent %zu bytes but did not finish its reply within %g s", len, allowed);
    else if (rc == -ETIMEDOUT)
        snprintf(err, errlen, "no reply from the agent within %g s (hung, or busy with another client)", allowed);
    else if (rc == -EMSGSIZE)
        snprintf(err, errlen, "the agent's reply exceeds %zu MiB: refused",
                 x->max_reply >> 20 ? x->max_reply >> 20 : 1);
    else if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
    else if (rc < 0) snprintf(err, errlen, "reading from the agent: %s", strerror(-rc));
    if (rc < 0) goto out;
    if (memchr(data, '\0', len)) {
        rc = -EPROTO;
        snprintf(err, errlen, "the agent's reply holds NUL bytes: not its protocol");
        goto out;
    }
    char *body;
    if ((rc = status_of(data, len, &body, err, errlen)) < 0) goto out;
    size_t blen = len - (size_t)(body - data);
    if (!(blen >= 4 && !strcmp(data + len - 4, "end\n") && (blen == 4 || data[len - 5] == '\n'))) {
        rc = -EPROTO;
        snprintf(err, errlen, "the agent's reply is incomplete (no end line after %zu bytes)", len);
        goto out;
    }
    blen -= 4;
    memmove(data, body, blen);
    data[blen] = '\0';
    out->data = data;
    out->len = blen;
    data = NULL;
    out->ms = (clock_monotonic_seconds() - w.t0) * 1000.0;
    out->truncated = strstr(out->data, "\ntruncated 1\n") != NULL || !strncmp(out->data, "truncated 1\n", 12);
out:
    free(data);
    close(fd);
    return rc;
}

void agent_reply_free(struct agent_reply *r)
{
    free(r->data);
    memset(r, 0, sizeof *r);
}

/* ---- parsing ---- */

/* Iterates the lines of a body: fn(line, length). */
static int each_line(const struct agent_reply *r, int (*fn)(void *, const char *, size_t), void *arg)
{
    const char *p = r->data, *end = r->data ? r->data + r->len : NULL;
    while (p && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
        int rc = fn(arg, p, l);
        if (rc) return rc;
        p += l + 1;
    }
    return 0;
}

struct kv_walk {
    int (*fn)(void *, const char *, const char *);
    void *arg;
};

static int kv_line(void *arg, const char *line, size_t l)
{
    struct kv_walk *w = arg;
    char buf[512], *sp;
    if (l >= sizeof buf) return 0;
    memcpy(buf, line, l);
    buf[l] = '\0';
    if (!(sp = strchr(buf, ' '))) return 0;
    *sp = '\0';
    if (!strcmp(buf, "site") || !strcmp(buf, "sample") || !strcmp(buf, "thread")) return 0;
    return w->fn(w->arg, buf, sp + 1);
}

int agent_reply_each(const struct agent_reply *r, int (*fn)(void *arg, const char *key, const char *value), void *arg)
{
    struct kv_walk w = {fn, arg};
    return each_line(r, kv_line, &w);
}

struct find_u64 {
    const char *key;
    unsigned long long v;
    int rc;
};

static int find_one(void *arg, const char *key, const char *value)
{
    struct find_u64 *f = arg;
    if (strcmp(key, f->key)) return 0;
    f->rc = text_parse_u64(value, &f->v) < 0 ? -EINVAL : 0;
    return 1;
}

int agent_reply_u64(const struct agent_reply *r, const char *key, unsigned long long *v)
{
    struct find_u64 f = {key, 0, -ENOENT};
    agent_reply_each(r, find_one, &f);
    if (f.rc == 0) *v = f.v;
    return f.rc;
}

/* A decimal (an estimate, or a rate): digits with at most one '.', no sign, no exponent. */
static int parse_decimal(const char *s, double *out)
{
    int digits = 0, dots = 0;
    for (const char *p = s; *p; p++) {
        if (*p >= '0' && *p <= '9') digits++;
        else if (*p == '.' && !dots) dots++;
        else return -1;
    }
    if (!digits || digits > 30) return -1;
    *out = strtod(s, NULL);
    return 0;
}

/* ---- memstats ---- */

static enum rt_unit unit_of(const char *key, int *is_double, int *is_text, int *is_bool)
{
    static const char *const counts[] = {"free_chunks", "fastbin_chunks", "mmapped_blocks", "mmapped_chunks",
                                         "arenas", "mallocs", "frees", "samples_live", "samples_dropped",
                                         "stacks_dropped"};
    static const char *const doubles[] = {"rate_seconds", "mallocs_per_second", "frees_per_second",
                                          "bytes_per_second"};
    *is_double = *is_text = *is_bool = 0;
    if (!strcmp(key, "allocator")) {
        *is_text = 1;
        return RT_TEXT;
    }
    if (!strcmp(key, "heap_profile")) {
        *is_bool = 1;
        return RT_BOOL;
    }
    if (!strcmp(key, "uptime")) return RT_NANOSECONDS;
    for (size_t i = 0; i < sizeof doubles / sizeof doubles[0]; i++)
        if (!strcmp(key, doubles[i])) {
            *is_double = 1;
            return RT_RATIO;
        }
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (!strcmp(key, counts[i])) return RT_COUNT;
    return RT_BYTES;
}

static int is_agent_key(const char *key)
{
    static const char *const agent[] = {"mallocs", "frees", "allocated_bytes", "uptime", "rate_seconds",
                                        "mallocs_per_second", "frees_per_second", "bytes_per_second",
                                        "heap_profile", "interval", "samples_live", "samples_dropped",
                                        "stacks_dropped", "table_bytes", "table_cap"};
    for (size_t i = 0; i < sizeof agent / sizeof agent[0]; i++)
        if (!strcmp(key, agent[i])) return 1;
    return 0;
}

struct mem_parse {
    struct rt_fields *out;
    int rc;
    char *err;
    size_t errlen;
};

static int mem_field(void *arg, const char *key, const char *value)
{
    struct mem_parse *mp = arg;
    char name[64];
    if (strlen(key) >= sizeof name || !strcmp(key, "rss")) return 0; /* the kernel's section says it already */
    char base[64];
    size_t kl = strlen(key);
    if (kl > 3 && !strcmp(key + kl - 3, "_ns")) kl -= 3; /* the unit says it */
    memcpy(base, key, kl);
    base[kl] = '\0';
    for (size_t i = 0; i <= kl; i++) name[i] = base[i] == '_' ? '-' : base[i];
    key = base;
    const char *section = is_agent_key(key) ? "agent" : "malloc";
    int dbl, txt, bl;
    enum rt_unit u = unit_of(key, &dbl, &txt, &bl);
    unsigned long long v;
    double d;
    int rc;
    if (txt) rc = rt_fields_add_text(mp->out, section, name, value);
    else if (dbl && parse_decimal(value, &d) == 0) rc = rt_fields_add_double(mp->out, section, name, d);
    else if (!dbl && text_parse_u64(value, &v) == 0)
        rc = rt_fields_add_u64(mp->out, section, name, u, bl ? !!v : v);
    else rc = rt_fields_add_text(mp->out, section, name, value); /* kept as the agent wrote it */
    if (rc < 0) {
        mp->rc = rc;
        snprintf(mp->err, mp->errlen, "out of memory");
        return 1;
    }
    return 0;
}

int agent_parse_memstats(const struct agent_reply *r, struct rt_fields *out, char *err, size_t errlen)
{
    struct mem_parse mp = {out, 0, err, errlen};
    agent_reply_each(r, mem_field, &mp);
    if (mp.rc == 0 && out->n == 0) {
        snprintf(err, errlen, "the agent's memstats reply has no fields");
        mp.rc = -EBADMSG;
    }
    return mp.rc;
}

/* ---- rows with program counters ---- */

/* Up to AGENT_MAX_PCS hex numbers separated by single spaces (more are cut at the root end). */
static int parse_pcs(const char *p, const char *end, unsigned long long *pcs, int *n)
{
    *n = 0;
    while (p < end) {
        if (*p != ' ') return -1;
        p++;
        unsigned long long v = 0;
        int digits = 0;
        while (p < end && *p != ' ') {
            int c = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
            if (c < 0 || ++digits > 16) return -1;
            v = v * 16 + (unsigned long long)c;
            p++;
        }
        if (!digits) return -1;
        if (*n < AGENT_MAX_PCS) pcs[(*n)++] = v;
    }
    return 0;
}

/* The next space-separated token of [*p, end) into buf. */
static int token(const char **p, const char *end, char *buf, size_t n)
{
    if (*p >= end || **p != ' ') return -1;
    (*p)++;
    size_t l = 0;
    while (*p < end && **p != ' ') {
        if (l + 1 >= n) return -1;
        buf[l++] = *(*p)++;
    }
    buf[l] = '\0';
    return l ? 0 : -1;
}

struct heap_parse {
    struct agent_heap *h;
    int cap, rc;
    char *err;
    size_t errlen;
};

static int heap_line(void *arg, const char *line, size_t l)
{
    struct heap_parse *hp = arg;
    const char *end = line + l, *p = line + 4;
    if (l < 5 || memcmp(line, "site ", 5)) return 0;
    struct agent_heap *h = hp->h;
    if (h->n >= MAX_SITES) {
        snprintf(hp->err, hp->errlen, "the agent's heap reply has more than %d sites: refused", MAX_SITES);
        return hp->rc = -E2BIG;
    }
    if (h->n == hp->cap) {
        int nc = hp->cap ? hp->cap * 2 : 256;
        struct agent_site *ns = realloc(h->sites, (size_t)nc * sizeof *ns);
        if (!ns) {
            snprintf(hp->err, hp->errlen, "out of memory");
            return hp->rc = -ENOMEM;
        }
        h->sites = ns;
        hp->cap = nc;
    }
    struct agent_site *s = &h->sites[h->n];
    double *vals[4] = {&s->inuse_objects, &s->inuse_bytes, &s->alloc_objects, &s->alloc_bytes};
    char tok[40];
    for (int i = 0; i < 4; i++)
        if (token(&p, end, tok, sizeof tok) < 0 || parse_decimal(tok, vals[i]) < 0) goto bad;
    if (parse_pcs(p, end, s->pcs, &s->npcs) < 0) goto bad;
    h->n++;
    return 0;
bad:
    snprintf(hp->err, hp->errlen, "the agent's heap reply has a malformed site line (row %d)", h->n + 1);
    return hp->rc = -EBADMSG;
}

int agent_parse_heap(const struct agent_reply *r, struct agent_heap *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    unsigned long long t = 0;
    if (agent_reply_u64(r, "time_ns", &t) < 0 || agent_reply_u64(r, "interval", &out->interval) < 0) {
        snprintf(err, errlen, "the agent's heap reply lacks time_ns or interval: not a heap reply");
        return -EBADMSG;
    }
    out->taken_at = (double)t / 1e9;
    agent_reply_u64(r, "samples_live", &out->samples_live);
    agent_reply_u64(r, "samples_total", &out->samples_total);
    agent_reply_u64(r, "samples_dropped", &out->samples_dropped);
    agent_reply_u64(r, "stacks_dropped", &out->stacks_dropped);
    out->truncated = r->truncated;
    struct heap_parse hp = {out, 0, 0, err, errlen};
    each_line(r, heap_line, &hp);
    if (hp.rc < 0) agent_heap_free(out);
    return hp.rc;
}

void agent_heap_free(struct agent_heap *h)
{
    free(h->sites);
    memset(h, 0, sizeof *h);
}

struct prof_parse {
    struct agent_profile *p;
    int cap, tcap, rc;
    char *err;
    size_t errlen;
};

static int prof_line(void *arg, const char *line, size_t l)
{
    struct prof_parse *pp = arg;
    struct agent_profile *pr = pp->p;
    const char *end = line + l, *p;
    char tok[40];
    unsigned long long v;
    int tid;
    if (l > 7 && !memcmp(line, "thread ", 7)) {
        p = line + 6;
        if (token(&p, end, tok, sizeof tok) < 0 || text_parse_pid(tok, &tid) < 0) goto bad;
        if (pr->nthreads >= MAX_THREADS) return 0;
        if (pr->nthreads == pp->tcap) {
            int nc = pp->tcap ? pp->tcap * 2 : 64;
            struct agent_thread_name *nt = realloc(pr->threads, (size_t)nc * sizeof *nt);
            if (!nt) goto oom;
            pr->threads = nt;
            pp->tcap = nc;
        }
        struct agent_thread_name *t = &pr->threads[pr->nthreads++];
        t->tid = tid;
        size_t nl = p < end && *p == ' ' ? (size_t)(end - p - 1) : 0;
        if (nl >= sizeof t->name) nl = sizeof t->name - 1;
        memcpy(t->name, p + (nl ? 1 : 0), nl);
        t->name[nl] = '\0';
        return 0;
    }
    if (l < 7 || memcmp(line, "sample ", 7)) return 0;
    if (pr->n >= MAX_STACKS) {
        snprintf(pp->err, pp->errlen, "the agent's profile has more than %d stacks: refused", MAX_STACKS);
        return pp->rc = -E2BIG;
    }
    if (pr->n == pp->cap) {
        int nc = pp->cap ? pp->cap * 2 : 256;
        struct agent_sample *ns = realloc(pr->stacks, (size_t)nc * sizeof *ns);
        if (!ns) goto oom;
        pr->stacks = ns;
        pp->cap = nc;
    }
    struct agent_sample *s = &pr->stacks[pr->n];
    p = line + 6;
    if (token(&p, end, tok, sizeof tok) < 0 || text_parse_pid(tok, &s->tid) < 0) goto bad;
    if (token(&p, end, tok, sizeof tok) < 0 || text_parse_u64(tok, &v) < 0 || v > (1ull << 40)) goto bad;
    s->count = (long long)v;
    if (parse_pcs(p, end, s->pcs, &s->npcs) < 0) goto bad;
    pr->n++;
    return 0;
bad:
    snprintf(pp->err, pp->errlen, "the agent's profile has a malformed line");
    return pp->rc = -EBADMSG;
oom:
    snprintf(pp->err, pp->errlen, "out of memory");
    return pp->rc = -ENOMEM;
}

int agent_parse_profile(const struct agent_reply *r, struct agent_profile *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    unsigned long long hz = 0, period = 0, v;
    if (agent_reply_u64(r, "hz", &hz) < 0 || hz == 0 || hz > 100000 || agent_reply_u64(r, "period_ns", &period) < 0 ||
        period == 0 || period > 1000000000ull) {
        snprintf(err, errlen, "the agent's profile lacks hz or period_ns: not a profile reply");
        return -EBADMSG;
    }
    out->hz = (int)hz;
    out->period_ns = (long long)period;
    if (agent_reply_u64(r, "lost", &v) == 0 && v < (1ull << 40)) out->lost = (long long)v;
    /* seconds is a decimal */
    const char *s = strstr(r->data, "\nseconds ");
    if (!s && !strncmp(r->data, "seconds ", 8)) s = r->data - 1;
    if (s) {
        char buf[40];
        size_t i = 0;
        for (s += 9; *s && *s != '\n' && i + 1 < sizeof buf; s++) buf[i++] = *s;
        buf[i] = '\0';
        double d;
        if (parse_decimal(buf, &d) == 0 && d < 1e6) out->seconds = d;
    }
    out->truncated = r->truncated;
    struct prof_parse pp = {out, 0, 0, 0, err, errlen};
    each_line(r, prof_line, &pp);
    if (pp.rc < 0) {
        agent_profile_free(out);
        return pp.rc;
    }
    for (int i = 0; i < out->n; i++) out->samples += out->stacks[i].count;
    return 0;
}

void agent_profile_free(struct agent_profile *p)
{
    free(p->threads);
    free(p->stacks);
    memset(p, 0, sizeof *p);
}
