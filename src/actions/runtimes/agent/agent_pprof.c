#include "agent_pprof.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/protobuf.h"
#include "util/text.h"
#include "actions/stack/symbolize.h"

struct buf {
    unsigned char *p;
    size_t n, cap;
    int oom;
};

static void put(struct buf *b, const void *data, size_t n)
{
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t c = b->cap ? b->cap * 2 : 4096;
        while (c < b->n + n) c *= 2;
        unsigned char *np = realloc(b->p, c);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = c;
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
}

static void put_varint(struct buf *b, uint64_t v)
{
    unsigned char t[PB_VARINT_MAX];
    put(b, t, pb_put_varint(t, v));
}

static void put_uint(struct buf *b, uint32_t field, uint64_t v)
{
    if (!v) return; /* zero fields are omitted */
    unsigned char t[PB_VARINT_MAX];
    put(b, t, pb_put_tag(t, field, PB_VARINT));
    put_varint(b, v);
}

static void put_len(struct buf *b, uint32_t field, const void *data, size_t n)
{
    unsigned char t[PB_VARINT_MAX];
    put(b, t, pb_put_tag(t, field, PB_LEN));
    put_varint(b, n);
    put(b, data, n);
}

static void put_msg(struct buf *b, uint32_t field, struct buf *m)
{
    put_len(b, field, m->p, m->n);
    b->oom |= m->oom;
    m->n = 0;
}

/* uint64 key -> id (1-based), open addressing. */
struct map {
    uint64_t *keys;
    uint32_t *vals;
    size_t cap, n;
};

static uint64_t mix(uint64_t k) { return (k ^ (k >> 31)) * 0x9E3779B97F4A7C15ull; }

static uint32_t map_get(const struct map *m, uint64_t key)
{
    if (!m->cap) return 0;
    for (size_t i = mix(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->vals[i]) return 0;
        if (m->keys[i] == key) return m->vals[i];
    }
}

static int map_put(struct map *m, uint64_t key, uint32_t val)
{
    if ((m->n + 1) * 2 > m->cap) {
        struct map nm = {0};
        nm.cap = m->cap ? m->cap * 2 : 256;
        nm.keys = calloc(nm.cap, sizeof *nm.keys);
        nm.vals = calloc(nm.cap, sizeof *nm.vals);
        if (!nm.keys || !nm.vals) {
            free(nm.keys);
            free(nm.vals);
            return -ENOMEM;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->vals[i]) map_put(&nm, m->keys[i], m->vals[i]);
        free(m->keys);
        free(m->vals);
        *m = nm;
    }
    size_t i = mix(key) & (m->cap - 1);
    while (m->vals[i]) i = (i + 1) & (m->cap - 1);
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
    return 0;
}

struct agent_pprof {
    char **strings;
    size_t nstrings, scap;
    struct map string_ids; /* hash of the text -> index + 1 (collisions checked by content) */
    struct map functions;  /* name << 32 | file -> id */
    struct map mappings;   /* module string -> id */
    struct map locations;  /* pc << 1 | return_address -> id */
    struct buf funcs, maps, locs, samples, comments;
    uint32_t nfunctions, nmappings, nlocations;
    long long types[16][2];
    int ntypes;
    long long period_type[2], period, duration_ns;
    int oom;
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* The index of s (sanitized) in the string table. */
static long long intern(struct agent_pprof *p, const char *s)
{
    if (!s || !*s) return 0;
    char clean[1024];
    text_sanitize_display(clean, sizeof clean, s, strlen(s));
    uint64_t h = hash_str(clean);
    for (;; h++) { /* two strings of one hash: the next key */
        uint32_t v = map_get(&p->string_ids, h);
        if (!v) break;
        if (!strcmp(p->strings[v - 1], clean)) return v - 1;
    }
    if (p->nstrings == p->scap) {
        size_t c = p->scap ? p->scap * 2 : 256;
        char **ns = realloc(p->strings, c * sizeof *ns);
        if (!ns) goto oom;
        p->strings = ns;
        p->scap = c;
    }
    if (!(p->strings[p->nstrings] = strdup(clean))) goto oom;
    if (map_put(&p->string_ids, h, (uint32_t)p->nstrings + 1) < 0) goto oom;
    return (long long)p->nstrings++;
oom:
    p->oom = 1;
    return 0;
}

struct agent_pprof *agent_pprof_new(const char *const (*types)[2], int ntypes, const char *period_type,
                                    const char *period_unit, long long period, long long duration_ns)
{
    struct agent_pprof *p = calloc(1, sizeof *p);
    if (!p || ntypes > 16) {
        free(p);
        return NULL;
    }
    if (!(p->strings = calloc(256, sizeof *p->strings)) || !(p->strings[0] = strdup(""))) {
        agent_pprof_free(p);
        return NULL;
    }
    p->scap = 256;
    p->nstrings = 1; /* string_table[0] is "" */
    for (int i = 0; i < ntypes; i++) {
        p->types[i][0] = intern(p, types[i][0]);
        p->types[i][1] = intern(p, types[i][1]);
    }
    p->ntypes = ntypes;
    p->period_type[0] = intern(p, period_type);
    p->period_type[1] = intern(p, period_unit);
    p->period = period;
    p->duration_ns = duration_ns;
    return p;
}

static uint32_t function_id(struct agent_pprof *p, const char *name, const char *file)
{
    long long n = intern(p, name), f = intern(p, file);
    uint64_t key = (uint64_t)n << 32 | (uint64_t)f;
    uint32_t id = map_get(&p->functions, key);
    if (id) return id;
    id = ++p->nfunctions;
    if (map_put(&p->functions, key, id) < 0) p->oom = 1;
    struct buf m = {0};
    put_uint(&m, 1, id);
    put_uint(&m, 2, (uint64_t)n);
    put_uint(&m, 3, (uint64_t)n);
    put_uint(&m, 4, (uint64_t)f);
    put_msg(&p->funcs, 5, &m);
    free(m.p);
    return id;
}

static uint32_t mapping_id(struct agent_pprof *p, const char *module)
{
    if (!module) return 0;
    long long s = intern(p, module);
    uint32_t id = map_get(&p->mappings, (uint64_t)s);
    if (id) return id;
    id = ++p->nmappings;
    if (map_put(&p->mappings, (uint64_t)s, id) < 0) p->oom = 1;
    struct buf m = {0};
    put_uint(&m, 1, id);
    put_uint(&m, 5, (uint64_t)s);
    put_uint(&m, 7, 1); /* has_functions */
    put_msg(&p->maps, 3, &m);
    free(m.p);
    return id;
}

unsigned long long agent_pprof_location(struct agent_pprof *p, unsigned long long pc, int return_address,
                                        const struct stack_frame *frames, int n)
{
    uint64_t key = pc << 1 | (uint64_t)(return_address != 0);
    uint32_t id = map_get(&p->locations, key);
    if (id) return id;
    id = ++p->nlocations;
    if (map_put(&p->locations, key, id) < 0) p->oom = 1;
    struct buf m = {0}, line = {0};
    put_uint(&m, 1, id);
    put_uint(&m, 2, mapping_id(p, n > 0 ? frames[n - 1].module : NULL));
    put_uint(&m, 3, return_address && pc ? pc - 1 : pc);
    for (int i = 0; i < n; i++) {
        char name[512];
        const struct stack_frame *f = &frames[i];
        if (f->function) snprintf(name, sizeof name, "%s", f->function);
        else if (f->module) snprintf(name, sizeof name, "%s+0x%llx", f->module, f->offset);
        else snprintf(name, sizeof name, "0x%llx", pc);
        put_uint(&line, 1, function_id(p, name, f->file));
        put_uint(&line, 2, f->line > 0 ? (uint64_t)f->line : 0);
        put_msg(&m, 4, &line);
    }
    if (n == 0) {
        char name[32];
        snprintf(name, sizeof name, "0x%llx", pc);
        put_uint(&line, 1, function_id(p, name, NULL));
        put_msg(&m, 4, &line);
    }
    put_msg(&p->locs, 4, &m);
    free(m.p);
    free(line.p);
    return p->oom ? 0 : id;
}

int agent_pprof_sample(struct agent_pprof *p, const unsigned long long *locs, int nlocs, const long long *values,
                       const char *label, long long label_num)
{
    struct buf m = {0}, packed = {0};
    for (int i = 0; i < nlocs; i++) put_varint(&packed, locs[i]);
    if (packed.n) put_len(&m, 1, packed.p, packed.n);
    packed.n = 0;
    for (int i = 0; i < p->ntypes; i++) put_varint(&packed, (uint64_t)(values[i] > 0 ? values[i] : 0));
    put_len(&m, 2, packed.p, packed.n);
    if (label) {
        struct buf l = {0};
        put_uint(&l, 1, (uint64_t)intern(p, label));
        put_uint(&l, 3, (uint64_t)label_num);
        put_msg(&m, 3, &l);
        free(l.p);
    }
    m.oom |= packed.oom;
    put_msg(&p->samples, 2, &m);
    free(m.p);
    free(packed.p);
    return p->oom || p->samples.oom ? -ENOMEM : 0;
}

int agent_pprof_comment(struct agent_pprof *p, const char *text)
{
    put_uint(&p->comments, 13, (uint64_t)intern(p, text));
    return p->oom ? -ENOMEM : 0;
}

static int gzip(const unsigned char *in, size_t n, unsigned char **out, size_t *len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -EIO;
    size_t cap = deflateBound(&z, n) + 64;
    unsigned char *o = malloc(cap);
    if (!o) {
        deflateEnd(&z);
        return -ENOMEM;
    }
    z.next_in = (unsigned char *)in;
    z.avail_in = (uInt)n;
    z.next_out = o;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    *len = cap - z.avail_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(o);
        return -EIO;
    }
    *out = o;
    return 0;
}

int agent_pprof_finish(struct agent_pprof *p, unsigned char **out, size_t *len, char *err, size_t errlen)
{
    *out = NULL;
    *len = 0;
    struct buf doc = {0}, m = {0};
    for (int i = 0; i < p->ntypes; i++) {
        put_uint(&m, 1, (uint64_t)p->types[i][0]);
        put_uint(&m, 2, (uint64_t)p->types[i][1]);
        put_msg(&doc, 1, &m);
    }
    put(&doc, p->samples.p, p->samples.n);
    put(&doc, p->maps.p, p->maps.n);
    put(&doc, p->locs.p, p->locs.n);
    put(&doc, p->funcs.p, p->funcs.n);
    for (size_t i = 0; i < p->nstrings; i++) put_len(&doc, 6, p->strings[i], strlen(p->strings[i]));
    put_uint(&doc, 10, (uint64_t)(p->duration_ns > 0 ? p->duration_ns : 0));
    put_uint(&m, 1, (uint64_t)p->period_type[0]);
    put_uint(&m, 2, (uint64_t)p->period_type[1]);
    put_msg(&doc, 11, &m);
    put_uint(&doc, 12, (uint64_t)(p->period > 0 ? p->period : 0));
    put(&doc, p->comments.p, p->comments.n);
    if (p->ntypes) put_uint(&doc, 14, (uint64_t)p->types[p->ntypes - 1][0]);
    int oom = doc.oom || m.oom || p->oom || p->samples.oom || p->maps.oom || p->locs.oom || p->funcs.oom;
    int rc = oom ? -ENOMEM : gzip(doc.p, doc.n, out, len);
    if (rc < 0) snprintf(err, errlen, rc == -ENOMEM ? "out of memory" : "zlib could not compress the profile");
    free(doc.p);
    free(m.p);
    agent_pprof_free(p);
    return rc;
}

void agent_pprof_free(struct agent_pprof *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->nstrings; i++) free(p->strings[i]);
    free(p->strings);
    struct map *maps[] = {&p->string_ids, &p->functions, &p->mappings, &p->locations};
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++) {
        free(maps[i]->keys);
        free(maps[i]->vals);
    }
    struct buf *bufs[] = {&p->funcs, &p->maps, &p->locs, &p->samples, &p->comments};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]->p);
    free(p);
}
