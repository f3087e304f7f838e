/* The agent provider: native programs that load libdiagtop-agent.so (include/diagtop-agent.h). The socket is found
 * through the target's own environment and trusted only while that very process holds it listening
 * (runtime_agent_socket), checked again before every exchange; each exchange is one request on one connection
 * (agent_client) under provider_lock. The agent sends raw program counters; they are named here by diagtop's
 * symbolizer over the process's modules (/proc/PID/maps), once per distinct pc of a reply. Heap snapshots and CPU
 * profiles are saved as pprof (agent_pprof) in the dump directory. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/runtime.h"
#include "util/fileio.h"
#include "util/text.h"
#include "agent_client.h"
#include "agent_pprof.h"
#include "actions/profile/cpu_report.h"
#include "actions/stack/modules.h"
#include "actions/runtimes/provider.h"
#include "actions/runtimes/heap_site.h"
#include "util/saved_file.h"
#include "actions/stack/symbolize.h"

#define SMALL_REPLY (1u << 20)
#define BIG_REPLY (64u << 20)
#define MAX_INLINED 16

/* ---- finding and asking the agent ---- */

static uid_t process_uid(int procfd, int pid)
{
    char *status = fileio_read_proc(procfd, pid, "status", 16384, NULL);
    const char *u = status ? strstr(status, "\nUid:") : NULL;
    uid_t uid = (uid_t)-1;
    if (u) { /* the effective uid (second field): the agent's directory is named after it */
        char *end;
        strtoul(u + 5, &end, 10);
        uid = (uid_t)strtoul(end, NULL, 10);
    }
    free(status);
    return uid;
}

static int locate(int pid, char *path, size_t pathsz, char *why, size_t whylen)
{
    int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (procfd < 0) {
        int e = errno;
        snprintf(why, whylen, "cannot open /proc: %s", strerror(e));
        return -e;
    }
    int rc = runtime_agent_socket(procfd, pid, process_uid(procfd, pid), path, pathsz, why, whylen);
    close(procfd);
    return rc;
}

static int agent_probe(int pid, char *why, size_t whylen)
{
    char path[4400];
    return locate(pid, path, sizeof path, why, whylen);
}

static int exchange(const struct provider_request *rq, const char *request, double takes, size_t max,
                    struct agent_reply *r, char *err, size_t errlen)
{
    char path[4400];
    int rc = locate(rq->pid, path, sizeof path, err, errlen);
    if (rc < 0) return rc;
    if ((rc = provider_lock(rq->pid, err, errlen)) < 0) return rc;
    struct agent_exchange x = {
        .path = path, .request = request, .timeout = rq->timeout, .takes = takes, .max_reply = max,
        .cancel = rq->cancel, .progress = rq->progress, .progress_arg = rq->progress_arg,
    };
    char why[512];
    rc = agent_client_exchange(&x, r, why, sizeof why);
    provider_unlock(rq->pid);
    if (rc < 0) snprintf(err, errlen, "%s: %s", request, why);
    return rc;
}

static void set_provider(char *dst, size_t n) { snprintf(dst, n, "%s", agent_provider.name); }

/* ---- naming program counters: each distinct (pc, return address) once per reply ---- */

struct pc_name {
    unsigned long long pc;
    int ra;
    int first, n;   /* its frames in names.f */
    int report;     /* its first frame in a cpu_report, -1 until added */
};

struct names {
    struct modules *m;
    struct symbolizer *sy;
    struct pc_name *e;
    int ne, ecap;
    struct stack_frame *f;
    int nf, fcap;
    int *slots; /* entry + 1 */
    int nslots;
    struct {
        char module[256];
        int alloc;
    } libs[16];     /* alloc_library's answers */
    int nlibs;
};

static void names_open(struct names *nm, int pid)
{
    memset(nm, 0, sizeof *nm);
    char err[256];
    /* Without the modules (the process just exited), frames are named by their addresses. */
    if ((nm->m = modules_new(pid, err, sizeof err))) nm->sy = symbolizer_new(nm->m);
}

static void names_close(struct names *nm)
{
    for (int i = 0; i < nm->nf; i++) stack_frame_clear(&nm->f[i]);
    free(nm->f);
    free(nm->e);
    free(nm->slots);
    if (nm->sy) symbolizer_free(nm->sy);
    if (nm->m) modules_free(nm->m);
    memset(nm, 0, sizeof *nm);
}

static unsigned slot_of(unsigned long long pc, int ra, int nslots)
{
    return (unsigned)(((pc << 1 | (unsigned)ra) * 0x9E3779B97F4A7C15ull) >> 32) & (unsigned)(nslots - 1);
}

static int names_grow(struct names *nm)
{
    int ns = nm->nslots ? nm->nslots * 2 : 1024;
    int *slots = calloc((size_t)ns, sizeof *slots);
    if (!slots) return -ENOMEM;
    for (int i = 0; i < nm->ne; i++) {
        unsigned s = slot_of(nm->e[i].pc, nm->e[i].ra, ns);
        while (slots[s]) s = (s + 1) & (unsigned)(ns - 1);
        slots[s] = i + 1;
    }
    free(nm->slots);
    nm->slots = slots;
    nm->nslots = ns;
    return 0;
}

/* The names of pc, or NULL when out of memory. */
static struct pc_name *names_of(struct names *nm, unsigned long long pc, int ra)
{
    if ((nm->ne + 1) * 2 > nm->nslots && names_grow(nm) < 0) return NULL;
    unsigned s = slot_of(pc, ra, nm->nslots);
    for (; nm->slots[s]; s = (s + 1) & (unsigned)(nm->nslots - 1)) {
        struct pc_name *e = &nm->e[nm->slots[s] - 1];
        if (e->pc == pc && e->ra == ra) return e;
    }
    if (nm->ne == nm->ecap) {
        int c = nm->ecap ? nm->ecap * 2 : 256;
        struct pc_name *ne = realloc(nm->e, (size_t)c * sizeof *ne);
        if (!ne) return NULL;
        nm->e = ne;
        nm->ecap = c;
    }
    if (nm->nf + MAX_INLINED > nm->fcap) {
        int c = nm->fcap ? nm->fcap * 2 : 1024;
        struct stack_frame *nf = realloc(nm->f, (size_t)c * sizeof *nf);
        if (!nf) return NULL;
        nm->f = nf;
        nm->fcap = c;
    }
    int n = nm->sy ? symbolizer_lookup(nm->sy, pc, ra, 1, nm->f + nm->nf, MAX_INLINED) : 0;
    if (n == 0) nm->f[nm->nf + n++] = (struct stack_frame){.pc = pc};
    struct pc_name *e = &nm->e[nm->ne];
    *e = (struct pc_name){pc, ra, nm->nf, n, -1};
    nm->nf += n;
    nm->slots[s] = ++nm->ne;
    return e;
}


/* ---- memstats, trim ---- */

static int agent_memstats(const struct provider_request *rq, struct rt_fields *out, char *err, size_t errlen)
{
    struct agent_reply r;
    int rc = exchange(rq, "memstats", 0, SMALL_REPLY, &r, err, errlen);
    if (rc < 0) return rc;
    rc = agent_parse_memstats(&r, out, err, errlen);
    agent_reply_free(&r);
    if (rc < 0) rt_fields_free(out);
    set_provider(out->provider, sizeof out->provider);
    return rc;
}

static long long field(const struct agent_reply *r, const char *key)
{
    unsigned long long v;
    return agent_reply_u64(r, key, &v) == 0 && v < (1ull << 62) ? (long long)v : -1;
}

/* G for a native program: malloc_trim(0), which gives the heap's free pages back to the OS. The heap in use does
 * not change; RSS does, and the message says by how much. */
static int agent_gc(const struct provider_request *rq, struct rt_gc *out, char *err, size_t errlen)
{
    set_provider(out->provider, sizeof out->provider);
    out->heap_before = out->heap_after = -1;
    if (rq->set_gc_percent) {
        snprintf(err, errlen, "a native program has no GC target to set (--percent is for Go)");
        return -EINVAL;
    }
    struct agent_reply r;
    int rc = exchange(rq, "trim", 0, SMALL_REPLY, &r, err, errlen);
    if (rc < 0) return rc;
    out->ms = r.ms;
    long long rss0 = field(&r, "rss_before"), rss1 = field(&r, "rss_after");
    long long free0 = field(&r, "free_before"), free1 = field(&r, "free_after");
    out->heap_before = field(&r, "in_use_before");
    out->heap_after = field(&r, "in_use_after");
    char a[32], b[32], c[32], d[32], delta[32], msg[400];
    if (rss0 < 0 || rss1 < 0) {
        char alloc[64] = "";
        const char *s = strstr(r.data, "allocator ");
        if (s) text_sanitize_display(alloc, sizeof alloc, s + 10, strcspn(s + 10, "\n"));
        snprintf(err, errlen, "the program's allocator (%s) is not glibc's: malloc_trim does not apply", alloc);
        agent_reply_free(&r);
        return -ENOTSUP;
    }
    text_format_bytes(a, sizeof a, rss0);
    text_format_bytes(b, sizeof b, rss1);
    text_format_bytes(c, sizeof c, free0 < 0 ? 0 : free0);
    text_format_bytes(d, sizeof d, free1 < 0 ? 0 : free1);
    text_format_bytes(delta, sizeof delta, rss0 > rss1 ? rss0 - rss1 : 0);
    snprintf(msg, sizeof msg, "malloc_trim(0) %s: RSS %s -> %s (%s returned to the OS); free in the heap %s -> %s",
             field(&r, "released") == 1 ? "released memory" : "found nothing to release", a, b, delta, c, d);
    agent_reply_free(&r);
    if (!(out->message = strdup(msg))) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

/* ---- heap ---- */

/* Whether a module is an allocator library (heap_site.h), asked of its symbol table once per module and reply. */
static int alloc_library(struct names *nm, const struct stack_frame *f)
{
    if (!f->module || !nm->sy) return 0;
    for (int i = 0; i < nm->nlibs; i++)
        if (strcmp(nm->libs[i].module, f->module) == 0) return nm->libs[i].alloc;
    int alloc = symbolizer_library_exports(nm->sy, f->pc, heap_site_allocator_entries);
    if (nm->nlibs < (int)(sizeof nm->libs / sizeof nm->libs[0])) {
        snprintf(nm->libs[nm->nlibs].module, sizeof nm->libs[0].module, "%s", f->module);
        nm->libs[nm->nlibs++].alloc = alloc;
    }
    return alloc;
}

static long long est(double v) { return v <= 0 ? 0 : v >= 9e18 ? (long long)9e18 : (long long)(v + 0.5); }

/* One row per site: the site's frames named, inlined calls included. */
static int site_row(struct names *nm, const struct heap_drop *drop, const struct agent_site *s,
                    struct rt_heap_row *row)
{
    memset(row, 0, sizeof *row);
    row->count = est(s->inuse_objects);
    row->bytes = est(s->inuse_bytes);
    row->alloc_count = est(s->alloc_objects);
    row->alloc_bytes = est(s->alloc_bytes);
    if (s->npcs == 0) return (row->name = strdup("(stack not kept: the agent's stack table is full)")) ? 0 : -ENOMEM;
    struct pc_name *per[AGENT_MAX_PCS];
    int total = 0;
    for (int i = 0; i < s->npcs; i++) {
        if (!(per[i] = names_of(nm, s->pcs[i], 1))) return -ENOMEM;
        total += per[i]->n;
    }
    if (!(row->stack = calloc((size_t)total, sizeof *row->stack))) return -ENOMEM;
    for (int i = 0; i < s->npcs; i++)
        for (int k = 0; k < per[i]->n; k++) {
            const struct stack_frame *f = &nm->f[per[i]->first + k];
            struct rt_frame *rf = &row->stack[row->nstack++];
            rf->function = rt_frame_label(f->function, f->module, f->offset, f->pc);
            rf->file = f->file ? strdup(f->file) : NULL;
            rf->line = f->line;
            if (!rf->function || (f->file && !rf->file)) return -ENOMEM;
        }
    struct heap_site_frame hf[AGENT_MAX_PCS * MAX_INLINED];
    int nh = 0;
    for (int i = 0; i < s->npcs; i++)
        for (int k = 0; k < per[i]->n && nh < (int)(sizeof hf / sizeof hf[0]); k++) {
            const struct stack_frame *f = &nm->f[per[i]->first + k];
            hf[nh] = (struct heap_site_frame){f->function, f->module, nh == 0 && alloc_library(nm, f)};
            nh++;
        }
    int named = heap_site_pick(drop, hf, nh);
    return (row->name = strdup(row->stack[named].function)) ? 0 : -ENOMEM;
}

/* The identity rt_heap_changes uses: the name, each frame's function and line. */
static char *row_key(const struct rt_heap_row *r)
{
    size_t len = strlen(r->name) + 2;
    for (int i = 0; i < r->nstack; i++) len += strlen(r->stack[i].function) + 16;
    char *k = malloc(len);
    if (!k) return NULL;
    size_t off = (size_t)snprintf(k, len, "%s", r->name);
    for (int i = 0; i < r->nstack && off < len; i++)
        off += (size_t)snprintf(k + off, len - off, "\n%s:%d", r->stack[i].function, r->stack[i].line);
    return k;
}

struct keyed_row {
    char *key;
    int index;
};

static int by_key(const void *a, const void *b)
{
    const struct keyed_row *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : x->index - y->index;
}

static void row_free(struct rt_heap_row *r)
{
    free(r->name);
    rt_frames_free(r->stack, r->nstack);
    memset(r, 0, sizeof *r);
}

/* Sites whose pcs differ but whose names are the same (two pcs on one line) become one row. */
static int merge_rows(struct rt_heap *h)
{
    int n0 = h->n, rc = 0;
    if (n0 < 2) return 0;
    struct keyed_row *k = calloc((size_t)n0, sizeof *k);
    if (!k) return -ENOMEM;
    for (int i = 0; i < n0; i++) {
        k[i].index = i;
        if (!(k[i].key = row_key(&h->rows[i]))) rc = -ENOMEM;
    }
    if (rc == 0) {
        qsort(k, (size_t)n0, sizeof *k, by_key);
        for (int i = 1, keep = 0; i < n0; i++) {
            if (strcmp(k[i].key, k[keep].key)) {
                keep = i;
                continue;
            }
            struct rt_heap_row *into = &h->rows[k[keep].index], *from = &h->rows[k[i].index];
            into->count += from->count;
            into->bytes += from->bytes;
            into->alloc_count += from->alloc_count;
            into->alloc_bytes += from->alloc_bytes;
            row_free(from);
        }
        int n = 0;
        for (int i = 0; i < n0; i++)
            if (h->rows[i].name) h->rows[n++] = h->rows[i];
        h->n = n;
    }
    for (int i = 0; i < n0; i++) free(k[i].key);
    free(k);
    return rc;
}

/* The heap snapshot as pprof: alloc_objects, alloc_space, inuse_objects, inuse_space (the default), in bytes of
 * space sampled every `interval` on average. */
static int heap_pprof(struct names *nm, int pid, const struct agent_heap *ah, unsigned char **out, size_t *len,
                      char *err, size_t errlen)
{
    static const char *const types[][2] = {
        {"alloc_objects", "count"}, {"alloc_space", "bytes"}, {"inuse_objects", "count"}, {"inuse_space", "bytes"}};
    struct agent_pprof *p = agent_pprof_new(types, 4, "space", "bytes", (long long)ah->interval, 0);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    char comment[128];
    snprintf(comment, sizeof comment, "heap profile of process %d by libdiagtop-agent (%llu samples live, %llu dropped)",
             pid, ah->samples_live, ah->samples_dropped);
    int rc = agent_pprof_comment(p, comment);
    for (int i = 0; rc == 0 && i < ah->n; i++) {
        const struct agent_site *s = &ah->sites[i];
        unsigned long long locs[AGENT_MAX_PCS];
        for (int k = 0; rc == 0 && k < s->npcs; k++) {
            struct pc_name *e = names_of(nm, s->pcs[k], 1);
            if (!e || !(locs[k] = agent_pprof_location(p, s->pcs[k], 1, nm->f + e->first, e->n))) rc = -ENOMEM;
        }
        long long v[4] = {est(s->alloc_objects), est(s->alloc_bytes), est(s->inuse_objects), est(s->inuse_bytes)};
        if (rc == 0) rc = agent_pprof_sample(p, locs, s->npcs, v, NULL, 0);
    }
    if (rc < 0) {
        agent_pprof_free(p);
        snprintf(err, errlen, "out of memory");
        return rc;
    }
    return agent_pprof_finish(p, out, len, err, errlen);
}

static int agent_heap(const struct provider_request *rq, struct rt_heap *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct agent_reply r;
    int rc = exchange(rq, "heap", 0, BIG_REPLY, &r, err, errlen);
    if (rc < 0) return rc;
    struct agent_heap ah;
    rc = agent_parse_heap(&r, &ah, err, errlen);
    agent_reply_free(&r);
    if (rc < 0) return rc;
    struct heap_drop drop;
    if ((rc = heap_drop_init(&drop, rq->drop_frames, err, errlen)) < 0) {
        agent_heap_free(&ah);
        return rc;
    }
    struct names nm;
    names_open(&nm, rq->pid);
    out->rows = calloc((size_t)(ah.n ? ah.n : 1), sizeof *out->rows);
    if (!out->rows) rc = -ENOMEM;
    for (int i = 0; rc == 0 && i < ah.n; i++) {
        rc = site_row(&nm, &drop, &ah.sites[i], &out->rows[out->n]);
        out->n++;
    }
    heap_drop_free(&drop);
    if (rc == 0) rc = merge_rows(out);
    if (rc < 0) snprintf(err, errlen, "out of memory");
    if (rc == 0 && rq->save_dir) {
        unsigned char *pb = NULL;
        size_t len = 0;
        rc = heap_pprof(&nm, rq->pid, &ah, &pb, &len, err, errlen);
        if (rc == 0) rc = saved_file_write(rq->pid, rq->save_dir, "heap", ".pb.gz", pb, len, &out->saved_path, err,
                                           errlen);
        free(pb);
    }
    names_close(&nm);
    if (rc == 0 && ah.truncated)
        fprintf(stderr, "diagtop: the agent of %d left rows out of its heap reply (over 32 MiB)\n", rq->pid);
    double taken_at = ah.taken_at;
    agent_heap_free(&ah);
    if (rc < 0) {
        rt_heap_free(out);
        return rc;
    }
    rt_heap_finish(out);
    set_provider(out->provider, sizeof out->provider);
    snprintf(out->kind, sizeof out->kind, "heap profile");
    out->pid = rq->pid;
    out->taken_at = taken_at;
    return 0;
}

/* ---- CPU profile ---- */

static int fetch_profile(const struct provider_request *rq, double seconds, int hz, struct agent_profile *ap,
                         char *err, size_t errlen)
{
    char req[64];
    snprintf(req, sizeof req, "profile %.3f %d", seconds, hz);
    struct agent_reply r;
    int rc = exchange(rq, req, seconds, BIG_REPLY, &r, err, errlen);
    if (rc < 0) return rc;
    if (rq->progress) rq->progress(rq->progress_arg, 1.0);
    rc = agent_parse_profile(&r, ap, err, errlen);
    agent_reply_free(&r);
    return rc;
}

/* The frames of one pc into the report (once per pc): its first report frame, or -1 when out of memory. */
static int report_frames(struct names *nm, struct cpu_report *r, int *cap, unsigned long long pc, int ra, int *n)
{
    struct pc_name *e = names_of(nm, pc, ra);
    if (!e) return -1;
    *n = e->n;
    if (e->report >= 0) return e->report;
    if (r->nframes + e->n > *cap) {
        int c = *cap ? *cap * 2 : 256;
        while (c < r->nframes + e->n) c *= 2;
        struct cpu_frame *f = realloc(r->frames, (size_t)c * sizeof *f);
        if (!f) return -1;
        r->frames = f;
        *cap = c;
    }
    e->report = r->nframes;
    for (int i = 0; i < e->n; i++) {
        const struct stack_frame *sf = &nm->f[e->first + i];
        r->frames[r->nframes++] = (struct cpu_frame){
            pc, sf->inlined, sf->function ? strdup(sf->function) : NULL, sf->offset,
            sf->module ? strdup(sf->module) : NULL, sf->file ? strdup(sf->file) : NULL, sf->line};
    }
    return e->report;
}

static int build_report(struct names *nm, int pid, const struct agent_profile *ap, struct cpu_report *r)
{
    memset(r, 0, sizeof *r);
    r->pid = pid;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    if (fileio_read_at(AT_FDCWD, path, r->comm, sizeof r->comm) > 0) r->comm[strcspn(r->comm, "\n")] = '\0';
    snprintf(r->method, sizeof r->method, "agent");
    r->hz = ap->hz;
    r->seconds = ap->seconds;
    r->samples = ap->samples;
    r->lost = ap->lost;
    r->period_ns = ap->period_ns;
    r->target_cost_percent = -1;
    r->stacks = calloc((size_t)(ap->n ? ap->n : 1), sizeof *r->stacks);
    r->threads = calloc((size_t)(ap->nthreads ? ap->nthreads : 1), sizeof *r->threads);
    int cap = 0, rc = r->stacks && r->threads ? 0 : -ENOMEM;
    for (int i = 0; rc == 0 && i < ap->nthreads; i++) {
        r->threads[i].tid = ap->threads[i].tid;
        snprintf(r->threads[i].name, sizeof r->threads[i].name, "%s", ap->threads[i].name);
        for (int k = 0; k < ap->n; k++)
            if (ap->stacks[k].tid == ap->threads[i].tid) r->threads[i].samples += ap->stacks[k].count;
        r->nthreads++;
    }
    for (int i = 0; rc == 0 && i < ap->n; i++) {
        const struct agent_sample *s = &ap->stacks[i];
        struct cpu_stack *cs = &r->stacks[r->nstacks];
        int first[AGENT_MAX_PCS], n[AGENT_MAX_PCS], total = 0;
        for (int k = 0; rc == 0 && k < s->npcs; k++) {
            if ((first[k] = report_frames(nm, r, &cap, s->pcs[k], k > 0, &n[k])) < 0) rc = -ENOMEM;
            else total += n[k];
        }
        if (rc < 0 || !(cs->frames = malloc((size_t)(total ? total : 1) * sizeof *cs->frames))) {
            rc = -ENOMEM;
            break;
        }
        for (int k = 0; k < s->npcs; k++)
            for (int j = 0; j < n[k]; j++) cs->frames[cs->nframes++] = first[k] + j;
        cs->truncated = s->npcs >= AGENT_MAX_PCS;
        cs->tid = s->tid;
        cs->samples = s->count;
        cs->cpu_ns = s->count * ap->period_ns;
        r->nstacks++;
    }
    if (rc < 0) cpu_report_free(r);
    return rc;
}

static int agent_profile_report(const struct provider_request *rq, int hz, struct cpu_report *out, char *err,
                                size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct agent_profile ap;
    int rc = fetch_profile(rq, rq->seconds > 0 ? rq->seconds : 10, hz > 0 ? hz : 100, &ap, err, errlen);
    if (rc < 0) return rc;
    struct names nm;
    names_open(&nm, rq->pid);
    rc = build_report(&nm, rq->pid, &ap, out);
    if (rc < 0) snprintf(err, errlen, "out of memory");
    names_close(&nm);
    agent_profile_free(&ap);
    return rc;
}

static int cpu_pprof(struct names *nm, int pid, const struct agent_profile *ap, unsigned char **out, size_t *len,
                     char *err, size_t errlen)
{
    static const char *const types[][2] = {{"samples", "count"}, {"cpu", "nanoseconds"}};
    struct agent_pprof *p = agent_pprof_new(types, 2, "cpu", "nanoseconds", ap->period_ns,
                                            (long long)(ap->seconds * 1e9));
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    char comment[128];
    snprintf(comment, sizeof comment, "CPU profile of process %d by libdiagtop-agent at %d Hz, %lld samples lost", pid,
             ap->hz, ap->lost);
    int rc = agent_pprof_comment(p, comment);
    for (int i = 0; rc == 0 && i < ap->n; i++) {
        const struct agent_sample *s = &ap->stacks[i];
        unsigned long long locs[AGENT_MAX_PCS];
        for (int k = 0; rc == 0 && k < s->npcs; k++) {
            struct pc_name *e = names_of(nm, s->pcs[k], k > 0);
            if (!e || !(locs[k] = agent_pprof_location(p, s->pcs[k], k > 0, nm->f + e->first, e->n))) rc = -ENOMEM;
        }
        long long v[2] = {s->count, s->count * ap->period_ns};
        if (rc == 0) rc = agent_pprof_sample(p, locs, s->npcs, v, "thread_id", s->tid);
    }
    if (rc < 0) {
        agent_pprof_free(p);
        snprintf(err, errlen, "out of memory");
        return rc;
    }
    return agent_pprof_finish(p, out, len, err, errlen);
}

static int agent_profile(const struct provider_request *rq, struct rt_profile *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct agent_profile ap;
    int rc = fetch_profile(rq, rq->seconds > 0 ? rq->seconds : 30, 100, &ap, err, errlen);
    if (rc < 0) return rc;
    struct names nm;
    names_open(&nm, rq->pid);
    struct cpu_report rep;
    if ((rc = build_report(&nm, rq->pid, &ap, &rep)) == 0) {
        rc = rt_profile_from_report(&rep, 0, out);
        cpu_report_free(&rep);
    }
    if (rc < 0) snprintf(err, errlen, "out of memory");
    if (rc == 0) {
        unsigned char *pb = NULL;
        size_t len = 0;
        rc = cpu_pprof(&nm, rq->pid, &ap, &pb, &len, err, errlen);
        if (rc == 0) rc = saved_file_write(rq->pid, rq->save_dir, "cpu", ".pb.gz", pb, len, &out->saved_path, err,
                                           errlen);
        free(pb);
    }
    names_close(&nm);
    out->seconds = ap.seconds;
    agent_profile_free(&ap);
    if (rc < 0) {
        rt_profile_free(out);
        return rc;
    }
    set_provider(out->provider, sizeof out->provider);
    snprintf(out->format, sizeof out->format, "pprof");
    snprintf(out->unit, sizeof out->unit, "nanoseconds");
    return 0;
}

const struct provider agent_provider = {
    .name = "agent",
    .speaks = "native",
    .probe = agent_probe,
    .memstats = agent_memstats,
    .gc = agent_gc,
    .heap = agent_heap,
    .profile = agent_profile,
    .profile_report = agent_profile_report,
};
