#include "pprof_write.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/protobuf.h"
#include "util/text.h"
#include "cpu_top.h"

/* profile.proto field numbers */
enum {
    P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_MAPPING = 3, P_LOCATION = 4, P_FUNCTION = 5, P_STRING_TABLE = 6,
    P_DURATION_NANOS = 10, P_PERIOD_TYPE = 11, P_PERIOD = 12, P_COMMENT = 13, P_DEFAULT_SAMPLE_TYPE = 14,
    VT_TYPE = 1, VT_UNIT = 2,
    S_LOCATION_ID = 1, S_VALUE = 2, S_LABEL = 3,
    L_KEY = 1, L_STR = 2, L_NUM = 3,
    M_ID = 1, M_FILENAME = 5, M_HAS_FUNCTIONS = 7, M_HAS_FILENAMES = 8, M_HAS_LINE_NUMBERS = 9, M_HAS_INLINE = 10,
    LOC_ID = 1, LOC_MAPPING_ID = 2, LOC_ADDRESS = 3, LOC_LINE = 4,
    LINE_FUNCTION_ID = 1, LINE_LINE = 2,
    F_ID = 1, F_NAME = 2, F_SYSTEM_NAME = 3, F_FILENAME = 4,
};

/* ---- a growing byte buffer that remembers running out of memory (checked once at the end) ---- */

struct buf {
    unsigned char *p;
    size_t n, cap;
    int oom;
};

static void buf_raw(struct buf *b, const void *data, size_t n)
{
    if (b->oom) return;
    if (b->n + n > b->cap || !b->p) { /* never NULL once used: empty keys compare with memcmp */
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n) cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, data, n);
    b->n += n;
}

static void buf_varint(struct buf *b, uint64_t v)
{
    unsigned char t[PB_VARINT_MAX];
    buf_raw(b, t, pb_put_varint(t, v));
}

static void buf_tag(struct buf *b, uint32_t field, enum pb_wire wire)
{
    unsigned char t[PB_VARINT_MAX];
    buf_raw(b, t, pb_put_tag(t, field, wire));
}

/* A varint field; zero is the default and left out. int64 fields take the two's complement. */
static void put_uint(struct buf *b, uint32_t field, uint64_t v)
{
    if (!v) return;
    buf_tag(b, field, PB_VARINT);
    buf_varint(b, v);
}

static void put_bytes(struct buf *b, uint32_t field, const void *data, size_t n)
{
    buf_tag(b, field, PB_LEN);
    buf_varint(b, n);
    buf_raw(b, data, n);
}

static void put_msg(struct buf *b, uint32_t field, const struct buf *m)
{
    if (m->oom) b->oom = 1;
    put_bytes(b, field, m->p, m->n);
}

/* ---- interning: byte strings to dense indices (strings; encoded Function, Location and Mapping bodies) ---- */

struct intern {
    struct buf keys;
    size_t *off, *len; /* per entry, into keys */
    size_t n, cap;
    long *slot; /* open addressing: entry index or -1 */
    size_t nslot;
};

static uint64_t bytes_hash(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

static void intern_free(struct intern *t)
{
    free(t->keys.p);
    free(t->off);
    free(t->len);
    free(t->slot);
}

static const unsigned char *intern_key(const struct intern *t, size_t i) { return t->keys.p + t->off[i]; }

static int intern_rehash(struct intern *t)
{
    size_t nslot = t->nslot ? t->nslot * 2 : 1024;
    long *slot = malloc(nslot * sizeof *slot);
    if (!slot) return -ENOMEM;
    memset(slot, 0xff, nslot * sizeof *slot);
    for (size_t i = 0; i < t->n; i++) {
        size_t h = (size_t)bytes_hash(intern_key(t, i), t->len[i]) & (nslot - 1);
        while (slot[h] >= 0) h = (h + 1) & (nslot - 1);
        slot[h] = (long)i;
    }
    free(t->slot);
    t->slot = slot;
    t->nslot = nslot;
    return 0;
}

/* The index of key (added when new), or -ENOMEM. */
static long intern_add(struct intern *t, const void *key, size_t n)
{
    if (2 * (t->n + 1) > t->nslot && intern_rehash(t) < 0) return -ENOMEM;
    size_t h = (size_t)bytes_hash(key, n) & (t->nslot - 1);
    for (; t->slot[h] >= 0; h = (h + 1) & (t->nslot - 1)) {
        size_t i = (size_t)t->slot[h];
        if (t->len[i] == n && memcmp(intern_key(t, i), key, n) == 0) return (long)i;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        size_t *off = realloc(t->off, cap * sizeof *off);
        if (!off) return -ENOMEM;
        t->off = off;
        size_t *len = realloc(t->len, cap * sizeof *len);
        if (!len) return -ENOMEM;
        t->len = len;
        t->cap = cap;
    }
    size_t at = t->keys.n;
    buf_raw(&t->keys, key, n);
    if (t->keys.oom) return -ENOMEM;
    t->off[t->n] = at;
    t->len[t->n] = n;
    t->slot[h] = (long)t->n;
    return (long)t->n++;
}

/* ---- the profile ---- */

struct writer {
    const struct cpu_report *r;
    struct cpu_top_index x;
    struct intern strings, functions, locations, mappings;
    unsigned char *mapping_flags; /* per mapping: has file names, has inlined frames */
    /* per report frame, 0 until known: its Function id, Mapping id + 1, and the Location of the frame alone
     * (no inlined calls at its pc) as the innermost frame and as a caller */
    uint64_t *fn_cache, *map_cache, *loc_cache[2];
    struct buf samples, msg, sub, pk;
    int oom;
};

/* The string's index; untrusted bytes are sanitized first. On out of memory the writer fails at the end. */
static uint64_t str_id(struct writer *w, const char *s, size_t n, int untrusted)
{
    long id;
    if (untrusted) {
        char *clean = malloc(n + 1);
        if (!clean) {
            w->oom = 1;
            return 0;
        }
        size_t m = text_sanitize_display(clean, n + 1, s, n);
        id = intern_add(&w->strings, clean, m);
        free(clean);
    } else id = intern_add(&w->strings, s, n);
    if (id < 0) w->oom = 1;
    return id < 0 ? 0 : (uint64_t)id;
}

static uint64_t cstr_id(struct writer *w, const char *s) { return str_id(w, s, strlen(s), 0); }

static uint64_t mapping_id(struct writer *w, int frame)
{
    const struct cpu_frame *f = &w->r->frames[frame];
    if (!f->module) return 0;
    if (w->map_cache[frame]) return w->map_cache[frame] - 1;
    struct buf *m = &w->sub;
    m->n = 0;
    put_uint(m, M_FILENAME, str_id(w, f->module, strlen(f->module), 1));
    size_t before = w->mappings.n;
    long id = m->oom ? -ENOMEM : intern_add(&w->mappings, m->p, m->n);
    if (id < 0) {
        w->oom = 1;
        return 0;
    }
    if (w->mappings.n > before) { /* a new module: its flags start clear */
        unsigned char *fl = realloc(w->mapping_flags, w->mappings.n);
        if (!fl) {
            w->oom = 1;
            return 0;
        }
        fl[id] = 0;
        w->mapping_flags = fl;
    }
    w->map_cache[frame] = (uint64_t)id + 2;
    return (uint64_t)id + 1;
}

static uint64_t function_id(struct writer *w, int frame)
{
    if (w->fn_cache[frame]) return w->fn_cache[frame];
    const struct cpu_frame *f = &w->r->frames[frame];
    const struct cpu_fn *fn = &w->x.fns[w->x.of_frame[frame]];
    struct buf *m = &w->sub;
    m->n = 0;
    uint64_t name = cstr_id(w, fn->shown); /* already sanitized */
    put_uint(m, F_NAME, name);
    put_uint(m, F_SYSTEM_NAME, name);
    if (f->file) put_uint(m, F_FILENAME, str_id(w, f->file, strlen(f->file), 1));
    long id = m->oom ? -ENOMEM : intern_add(&w->functions, m->p, m->n);
    if (id < 0) w->oom = 1;
    return id < 0 ? 0 : (w->fn_cache[frame] = (uint64_t)id + 1);
}

/* The Location of frames[k..j] of a stack (an inlined chain ending in the frame it was inlined into, all at one
 * pc). pprof wants return address - 1 for callers so that the address lies inside the call instruction. */
static uint64_t location_id(struct writer *w, const int *frames, int k, int j)
{
    uint64_t *cached = k == j ? &w->loc_cache[k > 0][frames[k]] : NULL;
    if (cached && *cached) return *cached;
    const struct cpu_frame *outer = &w->r->frames[frames[j]];
    uint64_t map = mapping_id(w, frames[j]), address = k == 0 ? outer->pc : outer->pc - 1;
    struct buf *m = &w->msg, *line = &w->pk;
    m->n = 0;
    for (int i = k; i <= j; i++) {
        const struct cpu_frame *f = &w->r->frames[frames[i]];
        uint64_t fid = function_id(w, frames[i]);
        line->n = 0;
        put_uint(line, LINE_FUNCTION_ID, fid);
        if (f->file && f->line > 0) put_uint(line, LINE_LINE, (uint64_t)f->line);
        put_msg(m, LOC_LINE, line);
        if (map && !w->oom && f->file) w->mapping_flags[map - 1] |= 1;
        if (map && !w->oom && f->inlined) w->mapping_flags[map - 1] |= 2;
    }
    /* mapping and address after the lines: the key is the whole body, whatever the order */
    put_uint(m, LOC_MAPPING_ID, map);
    put_uint(m, LOC_ADDRESS, address);
    long id = m->oom ? -ENOMEM : intern_add(&w->locations, m->p, m->n);
    if (id < 0) w->oom = 1;
    if (id >= 0 && cached) *cached = (uint64_t)id + 1;
    return id < 0 ? 0 : (uint64_t)id + 1;
}

static const struct cpu_thread *thread_of(const struct cpu_report *r, int tid)
{
    for (int i = 0; i < r->nthreads; i++)
        if (r->threads[i].tid == tid) return &r->threads[i];
    return NULL;
}

static void label(struct writer *w, struct buf *sample, const char *key, const char *str, size_t n, long long num)
{
    struct buf *l = &w->sub;
    l->n = 0;
    put_uint(l, L_KEY, cstr_id(w, key));
    if (str) put_uint(l, L_STR, str_id(w, str, n, 1));
    else put_uint(l, L_NUM, (uint64_t)num);
    put_msg(sample, S_LABEL, l);
}

static int sample_write(struct writer *w, const struct cpu_stack *s, int *valid)
{
    const struct cpu_report *r = w->r;
    int n = 0;
    for (int k = 0; k < s->nframes; k++)
        if (s->frames[k] >= 0 && s->frames[k] < r->nframes) valid[n++] = s->frames[k];
    /* locations first: they use the scratch buffers the sample is then built in */
    uint64_t *locs = malloc((n ? (size_t)n : 1) * sizeof *locs);
    if (!locs) return -ENOMEM;
    int nlocs = 0;
    for (int k = 0; k < n;) {
        int j = k;
        while (r->frames[valid[j]].inlined && j + 1 < n && r->frames[valid[j + 1]].pc == r->frames[valid[k]].pc) j++;
        locs[nlocs++] = location_id(w, valid, k, j);
        k = j + 1;
    }
    struct buf *m = &w->msg, *pk = &w->pk;
    m->n = pk->n = 0;
    for (int i = 0; i < nlocs; i++) buf_varint(pk, locs[i]);
    put_msg(m, S_LOCATION_ID, pk);
    pk->n = 0;
    buf_varint(pk, (uint64_t)s->samples);
    buf_varint(pk, (uint64_t)cpu_top_stack_ns(r, s));
    put_msg(m, S_VALUE, pk);
    label(w, m, "thread_id", NULL, 0, s->tid);
    const struct cpu_thread *t = thread_of(r, s->tid);
    if (t) label(w, m, "thread_name", t->name, strnlen(t->name, sizeof t->name), 0);
    put_msg(&w->samples, P_SAMPLE, m);
    free(locs);
    return 0;
}

static void value_type(struct writer *w, struct buf *out, uint32_t field, const char *type, const char *unit)
{
    struct buf *m = &w->sub;
    m->n = 0;
    put_uint(m, VT_TYPE, cstr_id(w, type));
    put_uint(m, VT_UNIT, cstr_id(w, unit));
    put_msg(out, field, m);
}

static void comment(struct writer *w, struct buf *out, const char *text)
{
    uint64_t id = str_id(w, text, strlen(text), 1);
    buf_tag(out, P_COMMENT, PB_VARINT); /* a repeated int64 left unpacked: each one is a field of its own */
    buf_varint(out, id);
}

/* Each interned body as a message with its id (index + 1) first. */
static void emit_with_ids(struct buf *out, uint32_t field, uint32_t id_field, const struct intern *t,
                          const unsigned char *flags, struct buf *scratch)
{
    for (size_t i = 0; i < t->n; i++) {
        scratch->n = 0;
        put_uint(scratch, id_field, i + 1);
        buf_raw(scratch, intern_key(t, i), t->len[i]);
        if (flags) { /* mappings */
            put_uint(scratch, M_HAS_FUNCTIONS, 1);
            put_uint(scratch, M_HAS_FILENAMES, flags[i] & 1);
            put_uint(scratch, M_HAS_LINE_NUMBERS, flags[i] & 1);
            put_uint(scratch, M_HAS_INLINE, (flags[i] >> 1) & 1);
        }
        put_msg(out, field, scratch);
    }
}

static int profile_encode(struct writer *w, struct buf *out)
{
    const struct cpu_report *r = w->r;
    cstr_id(w, ""); /* string_table[0] */
    value_type(w, out, P_SAMPLE_TYPE, "samples", "count");
    value_type(w, out, P_SAMPLE_TYPE, "cpu", "nanoseconds");
    int maxframes = 1;
    for (int i = 0; i < r->nstacks; i++)
        if (r->stacks[i].nframes > maxframes) maxframes = r->stacks[i].nframes;
    int *valid = malloc((size_t)maxframes * sizeof *valid);
    if (!valid) return -ENOMEM;
    for (int i = 0; i < r->nstacks && !w->oom; i++)
        if (r->stacks[i].samples > 0 && sample_write(w, &r->stacks[i], valid) < 0) w->oom = 1;
    free(valid);
    char text[512];
    snprintf(text, sizeof text, "diagtop CPU profile of PID %d (%s)", r->pid, r->comm);
    comment(w, out, text);
    snprintf(text, sizeof text, "method: %s%s%s", r->method, r->method_why[0] ? ": " : "", r->method_why);
    comment(w, out, text);
    snprintf(text, sizeof text, "lost samples: %lld", r->lost);
    comment(w, out, text);
    if (r->target_cost_percent >= 0) {
        snprintf(text, sizeof text, "target slowed by %.2f%%", r->target_cost_percent);
        comment(w, out, text);
    }
    value_type(w, out, P_PERIOD_TYPE, "cpu", "nanoseconds");
    put_uint(out, P_PERIOD, (uint64_t)r->period_ns);
    put_uint(out, P_DURATION_NANOS, r->seconds > 0 ? (uint64_t)(r->seconds * 1e9 + 0.5) : 0);
    put_uint(out, P_DEFAULT_SAMPLE_TYPE, cstr_id(w, "cpu"));
    if (w->samples.oom) w->oom = 1;
    buf_raw(out, w->samples.p, w->samples.n);
    emit_with_ids(out, P_MAPPING, M_ID, &w->mappings, w->mapping_flags, &w->msg);
    emit_with_ids(out, P_LOCATION, LOC_ID, &w->locations, NULL, &w->msg);
    emit_with_ids(out, P_FUNCTION, F_ID, &w->functions, NULL, &w->msg);
    for (size_t i = 0; i < w->strings.n; i++)
        put_bytes(out, P_STRING_TABLE, intern_key(&w->strings, i), w->strings.len[i]);
    return w->oom || out->oom || w->msg.oom || w->sub.oom || w->pk.oom ? -ENOMEM : 0;
}

static int gzip(const unsigned char *in, size_t n, unsigned char **out, size_t *len, char *err, size_t errlen)
{
    if (n > UINT_MAX / 2) {
        snprintf(err, errlen, "profile too large to compress (%zu bytes)", n);
        return -EFBIG;
    }
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        snprintf(err, errlen, "zlib: deflateInit2 failed");
        return -EIO;
    }
    size_t cap = deflateBound(&z, (uLong)n);
    *out = malloc(cap);
    if (!*out) {
        deflateEnd(&z);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    z.next_in = (unsigned char *)in;
    z.avail_in = (uInt)n;
    z.next_out = *out;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH); /* deflateBound's room: one call finishes */
    *len = z.total_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(*out);
        *out = NULL;
        snprintf(err, errlen, "zlib: deflate failed (%d)", rc);
        return -EIO;
    }
    return 0;
}

int pprof_write_cpu(const struct cpu_report *r, unsigned char **out, size_t *len, char *err, size_t errlen)
{
    *out = NULL;
    *len = 0;
    struct writer w;
    memset(&w, 0, sizeof w);
    w.r = r;
    struct buf profile = {0};
    size_t nf = r->nframes > 0 ? (size_t)r->nframes : 1;
    w.fn_cache = calloc(nf, sizeof *w.fn_cache);
    w.map_cache = calloc(nf, sizeof *w.map_cache);
    w.loc_cache[0] = calloc(nf, sizeof *w.loc_cache[0]);
    w.loc_cache[1] = calloc(nf, sizeof *w.loc_cache[1]);
    int rc = w.fn_cache && w.map_cache && w.loc_cache[0] && w.loc_cache[1] ? cpu_top_index_build(r, &w.x) : -ENOMEM;
    if (rc == 0) rc = profile_encode(&w, &profile);
    if (rc == 0) rc = gzip(profile.p, profile.n, out, len, err, errlen);
    else snprintf(err, errlen, "out of memory");
    free(profile.p);
    cpu_top_index_free(&w.x);
    intern_free(&w.strings);
    intern_free(&w.functions);
    intern_free(&w.locations);
    intern_free(&w.mappings);
    free(w.mapping_flags);
    free(w.fn_cache);
    free(w.map_cache);
    free(w.loc_cache[0]);
    free(w.loc_cache[1]);
    free(w.samples.p);
    free(w.msg.p);
    free(w.sub.p);
    free(w.pk.p);
    return rc;
}
