#include "pprof_read.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/grow.h"
#include "util/protobuf.h"

/* Caps: generous for real profiles (a big Go server's heap profile has some 10^4 samples of <= 64 frames), far
 * below what would let hostile bytes exhaust memory. */
#define MAX_STRINGS (2u << 20)
#define MAX_TYPES 64u
#define MAX_FUNCS (1u << 20)
#define MAX_LOCS (2u << 20)
#define MAX_LINES (4u << 20)
#define MAX_SAMPLES (2u << 20)
#define MAX_POOL (16u << 20) /* location ids and values over all samples */
#define MAX_DEPTH 512u       /* locations per sample */
#define MAX_INLINE 64u       /* lines per location */
#define MAX_FRAMES 4096u     /* frames per stack, inlined ones included */
#define MAX_NAME 4096u       /* bytes of a name or file kept */

/* Fields of profile.proto. */
enum {
    PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_LOCATION = 4, PROFILE_FUNCTION = 5,
    PROFILE_STRING_TABLE = 6, PROFILE_DURATION_NANOS = 10, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
    VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
    SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2,
    LOCATION_ID = 1, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
    LINE_FUNCTION_ID = 1, LINE_LINE = 2,
    FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_FILENAME = 4,
};

struct span {
    const char *p;
    size_t len;
};

struct vtype {
    int64_t type, unit;
};

struct func {
    uint64_t id;
    int64_t name, file;
};

struct line {
    uint64_t func_id;
    int64_t line;
};

struct loc {
    uint64_t id, address;
    size_t line0;
    uint32_t nlines;
};

struct sample {
    size_t loc0, val0;
    uint32_t nloc, nval;
};

struct prof {
    unsigned char *buf; /* the gunzipped bytes, which strings point into */
    struct span *str;
    struct vtype *types;
    struct func *funcs;
    struct loc *locs;
    struct line *lines;
    struct sample *samples;
    uint64_t *locids;
    int64_t *vals;
    size_t nstr, ntypes, nfuncs, nlocs, nlines, nsamples, nlocids, nvals;
    size_t capstr, captypes, capfuncs, caplocs, caplines, capsamples, caplocids, capvals;
    int64_t duration_nanos, default_type;
};

static void prof_free(struct prof *p)
{
    free(p->buf);
    free(p->str);
    free(p->types);
    free(p->funcs);
    free(p->locs);
    free(p->lines);
    free(p->samples);
    free(p->locids);
    free(p->vals);
}

/* ---- gunzip ---- */

static int oom(char *err, size_t errlen)
{
    snprintf(err, errlen, "out of memory");
    return -ENOMEM;
}

int pprof_gunzip(const void *data, size_t len, size_t max, unsigned char **out, size_t *outlen, char *err,
                 size_t errlen)
{
    *out = NULL;
    *outlen = 0;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return oom(err, errlen); /* 16: gzip framing only */
    size_t cap = len < max / 4 ? len * 4 : max;
    if (cap < 4096) cap = max < 4096 ? max : 4096;
    unsigned char *buf = malloc(cap + 1);
    int rc = 0;
    size_t n = 0;
    if (!buf) {
        rc = oom(err, errlen);
        goto out;
    }
    z.next_in = (unsigned char *)(uintptr_t)data;
    for (;;) {
        /* zlib counts in uInt: feed and take at most 1 GiB at a time */
        size_t in_left = len - (size_t)(z.next_in - (const unsigned char *)data), room = cap - n;
        z.avail_in = (uInt)(in_left > (1u << 30) ? (1u << 30) : in_left);
        z.next_out = buf + n;
        z.avail_out = (uInt)(room > (1u << 30) ? (1u << 30) : room);
        uInt before = z.avail_out;
        int zr = inflate(&z, Z_NO_FLUSH);
        n += before - z.avail_out;
        if (zr == Z_STREAM_END) break; /* one member, as Go writes it: anything after is ignored */
        if (zr == Z_MEM_ERROR) {
            rc = oom(err, errlen);
            goto out;
        }
        if (zr != Z_OK && zr != Z_BUF_ERROR) {
            rc = -EBADMSG;
            snprintf(err, errlen, "not valid gzip data: %s", z.msg ? z.msg : "corrupt stream");
            goto out;
        }
        if (z.avail_out > 0 && len == (size_t)(z.next_in - (const unsigned char *)data)) {
            rc = -EBADMSG;
            snprintf(err, errlen, "truncated gzip data (%zu bytes gave %zu before the end)", len, n);
            goto out;
        }
        if (n == cap) {
            if (cap >= max) {
                rc = -EFBIG;
                snprintf(err, errlen, "more than %zu MiB once gunzipped: refused", max >> 20);
                goto out;
            }
            size_t ncap = cap > max / 2 ? max : cap * 2;
            unsigned char *nb = realloc(buf, ncap + 1);
            if (!nb) {
                rc = oom(err, errlen);
                goto out;
            }
            buf = nb;
            cap = ncap;
        }
    }
    buf[n] = '\0';
    *out = buf;
    *outlen = n;
    buf = NULL;
out:
    inflateEnd(&z);
    free(buf);
    return rc;
}

/* ---- decoding ---- */

/* A reason for bytes that do not decode; every caller returns -EBADMSG after it. */
static int malformed(char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "not a valid pprof profile: malformed %s", what);
    return -EBADMSG;
}

static int too_many(char *err, size_t errlen, const char *what, size_t cap)
{
    snprintf(err, errlen, "pprof profile refused: more than %zu %s", cap, what);
    return -E2BIG;
}

static int decode_valuetype(const struct pb_field *m, struct vtype *t)
{
    struct pb_reader r;
    struct pb_field f;
    int rc;
    pb_reader_init(&r, m->data, m->len);
    t->type = t->unit = 0;
    while ((rc = pb_next(&r, &f)) > 0) {
        if (f.wire != PB_VARINT) continue;
        if (f.number == VALUETYPE_TYPE) t->type = (int64_t)f.u;
        else if (f.number == VALUETYPE_UNIT) t->unit = (int64_t)f.u;
    }
    return rc;
}

struct sample_fill {
    struct prof *p;
    struct sample *s;
    int values; /* 1: appending values, 0: location ids */
    int full;   /* the pool cap was hit */
};

static int add_sample_elem(void *arg, uint64_t v)
{
    struct sample_fill *sf = arg;
    struct prof *p = sf->p;
    if (sf->values) {
        if (sf->s->nval >= MAX_TYPES) return 0; /* more values than any profile has types: ignored */
        if (p->nvals >= MAX_POOL) return sf->full = 1;
        if (GROW(p->vals, p->capvals, p->nvals, 1024) < 0) return -ENOMEM;
        p->vals[p->nvals++] = (int64_t)v;
        sf->s->nval++;
    } else {
        if (sf->s->nloc >= MAX_DEPTH) return 0; /* leaf first: the root end is cut */
        if (p->nlocids >= MAX_POOL) return sf->full = 1;
        if (GROW(p->locids, p->caplocids, p->nlocids, 1024) < 0) return -ENOMEM;
        p->locids[p->nlocids++] = v;
        sf->s->nloc++;
    }
    return 0;
}

static int decode_sample(struct prof *p, const struct pb_field *m, char *err, size_t errlen)
{
    if (p->nsamples >= MAX_SAMPLES) return too_many(err, errlen, "samples", MAX_SAMPLES);
    if (GROW(p->samples, p->capsamples, p->nsamples, 256) < 0) return oom(err, errlen);
    struct sample *s = &p->samples[p->nsamples];
    *s = (struct sample){.loc0 = p->nlocids, .val0 = p->nvals};
    /* Repeated fields may come unpacked and interleaved, but ids and values go to separate pools, so each
     * sample's run in either pool stays contiguous. */
    struct sample_fill sf = {.p = p, .s = s};
    struct pb_reader r;
    struct pb_field f;
    int rc;
    pb_reader_init(&r, m->data, m->len);
    while ((rc = pb_next(&r, &f)) > 0) {
        if (f.number != SAMPLE_LOCATION_ID && f.number != SAMPLE_VALUE) continue; /* labels */
        sf.values = f.number == SAMPLE_VALUE;
        int e = pb_each_varint(&f, add_sample_elem, &sf);
        if (e == -ENOMEM) return oom(err, errlen);
        if (sf.full) return too_many(err, errlen, "location ids and values in all samples", MAX_POOL);
        if (e == -EBADMSG) return malformed(err, errlen, "sample");
        /* -EPROTO: a wire type these fields never have: skipped */
    }
    if (rc < 0) return malformed(err, errlen, "sample");
    p->nsamples++;
    return 0;
}

static int decode_line(struct prof *p, const struct pb_field *m, struct loc *l, char *err, size_t errlen)
{
    if (l->nlines >= MAX_INLINE) return 0;
    if (p->nlines >= MAX_LINES) return too_many(err, errlen, "lines", MAX_LINES);
    struct line ln = {0, 0};
    struct pb_reader r;
    struct pb_field f;
    int rc;
    pb_reader_init(&r, m->data, m->len);
    while ((rc = pb_next(&r, &f)) > 0) {
        if (f.wire != PB_VARINT) continue;
        if (f.number == LINE_FUNCTION_ID) ln.func_id = f.u;
        else if (f.number == LINE_LINE) ln.line = (int64_t)f.u;
    }
    if (rc < 0) return malformed(err, errlen, "line");
    if (GROW(p->lines, p->caplines, p->nlines, 256) < 0) return oom(err, errlen);
    p->lines[p->nlines++] = ln;
    l->nlines++;
    return 0;
}

static int decode_location(struct prof *p, const struct pb_field *m, char *err, size_t errlen)
{
    if (p->nlocs >= MAX_LOCS) return too_many(err, errlen, "locations", MAX_LOCS);
    struct loc l = {.line0 = p->nlines};
    struct pb_reader r;
    struct pb_field f;
    int rc;
    pb_reader_init(&r, m->data, m->len);
    while ((rc = pb_next(&r, &f)) > 0) {
        if (f.number == LOCATION_LINE && f.wire == PB_LEN) {
            int e = decode_line(p, &f, &l, err, errlen);
            if (e < 0) return e;
        } else if (f.wire == PB_VARINT) {
            if (f.number == LOCATION_ID) l.id = f.u;
            else if (f.number == LOCATION_ADDRESS) l.address = f.u;
        }
    }
    if (rc < 0) return malformed(err, errlen, "location");
    if (GROW(p->locs, p->caplocs, p->nlocs, 256) < 0) return oom(err, errlen);
    p->locs[p->nlocs++] = l;
    return 0;
}

static int decode_function(struct prof *p, const struct pb_field *m, char *err, size_t errlen)
{
    if (p->nfuncs >= MAX_FUNCS) return too_many(err, errlen, "functions", MAX_FUNCS);
    struct func fn = {0, 0, 0};
    struct pb_reader r;
    struct pb_field f;
    int rc;
    pb_reader_init(&r, m->data, m->len);
    while ((rc = pb_next(&r, &f)) > 0) {
        if (f.wire != PB_VARINT) continue;
        if (f.number == FUNCTION_ID) fn.id = f.u;
        else if (f.number == FUNCTION_NAME) fn.name = (int64_t)f.u;
        else if (f.number == FUNCTION_FILENAME) fn.file = (int64_t)f.u;
    }
    if (rc < 0) return malformed(err, errlen, "function");
    if (GROW(p->funcs, p->capfuncs, p->nfuncs, 256) < 0) return oom(err, errlen);
    p->funcs[p->nfuncs++] = fn;
    return 0;
}

static int by_func_id(const void *a, const void *b)
{
    uint64_t x = ((const struct func *)a)->id, y = ((const struct func *)b)->id;
    return x < y ? -1 : x > y;
}

static int by_loc_id(const void *a, const void *b)
{
    uint64_t x = ((const struct loc *)a)->id, y = ((const struct loc *)b)->id;
    return x < y ? -1 : x > y;
}

/* Gunzips (when gzipped) and decodes the whole message. */
static int prof_decode(struct prof *p, const void *data, size_t len, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    const unsigned char *bytes = data;
    size_t n = len;
    if (len >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) {
        int rc = pprof_gunzip(data, len, PPROF_MAX_BYTES, &p->buf, &n, err, errlen);
        if (rc < 0) return rc;
        bytes = p->buf;
    } else if (len > PPROF_MAX_BYTES) {
        snprintf(err, errlen, "pprof profile refused: more than %u MiB", PPROF_MAX_BYTES >> 20);
        return -EFBIG;
    }
    if (n == 0) {
        snprintf(err, errlen, "not a pprof profile: no bytes");
        return -EBADMSG;
    }
    struct pb_reader r;
    struct pb_field f;
    int rc;
    pb_reader_init(&r, bytes, n);
    while ((rc = pb_next(&r, &f)) > 0) {
        int e = 0;
        if (f.wire == PB_LEN) {
            switch (f.number) {
            case PROFILE_SAMPLE_TYPE:
                if (p->ntypes >= MAX_TYPES) return too_many(err, errlen, "sample types", MAX_TYPES);
                if (GROW(p->types, p->captypes, p->ntypes, 8) < 0) return oom(err, errlen);
                if (decode_valuetype(&f, &p->types[p->ntypes]) < 0) return malformed(err, errlen, "sample type");
                p->ntypes++;
                break;
            case PROFILE_SAMPLE: e = decode_sample(p, &f, err, errlen); break;
            case PROFILE_LOCATION: e = decode_location(p, &f, err, errlen); break;
            case PROFILE_FUNCTION: e = decode_function(p, &f, err, errlen); break;
            case PROFILE_STRING_TABLE:
                if (p->nstr >= MAX_STRINGS) return too_many(err, errlen, "strings", MAX_STRINGS);
                if (GROW(p->str, p->capstr, p->nstr, 256) < 0) return oom(err, errlen);
                p->str[p->nstr++] = (struct span){(const char *)f.data, f.len};
                break;
            default: break; /* mappings, comments: not needed */
            }
        } else if (f.wire == PB_VARINT) {
            if (f.number == PROFILE_DURATION_NANOS) p->duration_nanos = (int64_t)f.u;
            else if (f.number == PROFILE_DEFAULT_SAMPLE_TYPE) p->default_type = (int64_t)f.u;
        }
        if (e < 0) return e;
    }
    if (rc < 0) return malformed(err, errlen, "message (it is not protobuf)");
    if (p->ntypes == 0 || p->nstr == 0) {
        snprintf(err, errlen, "not a pprof profile: no %s", p->ntypes == 0 ? "sample types" : "string table");
        return -EBADMSG;
    }
    /* Ids are looked up by binary search; id 0 is never valid (lookups of it fail). */
    if (p->nfuncs) qsort(p->funcs, p->nfuncs, sizeof *p->funcs, by_func_id);
    if (p->nlocs) qsort(p->locs, p->nlocs, sizeof *p->locs, by_loc_id);
    return 0;
}

/* String i of the table, or NULL for an index outside it. */
static const struct span *str_at(const struct prof *p, int64_t i)
{
    return i >= 0 && (uint64_t)i < p->nstr ? &p->str[i] : NULL;
}

static int span_is(const struct span *s, const char *text)
{
    return s && s->len == strlen(text) && memcmp(s->p, text, s->len) == 0;
}

static int span_eq(const struct span *a, const struct span *b)
{
    return a && b && a->len == b->len && memcmp(a->p, b->p, a->len) == 0;
}

static const struct func *func_find(const struct prof *p, uint64_t id)
{
    struct func key = {.id = id};
    return id && p->nfuncs ? bsearch(&key, p->funcs, p->nfuncs, sizeof *p->funcs, by_func_id) : NULL;
}

static const struct loc *loc_find(const struct prof *p, uint64_t id)
{
    struct loc key = {.id = id};
    return id && p->nlocs ? bsearch(&key, p->locs, p->nlocs, sizeof *p->locs, by_loc_id) : NULL;
}

/* The sample type named type (and unit, when not NULL), or -1. */
static int type_index(const struct prof *p, const char *type, const char *unit)
{
    for (size_t i = 0; i < p->ntypes; i++)
        if (span_is(str_at(p, p->types[i].type), type) && (!unit || span_is(str_at(p, p->types[i].unit), unit)))
            return (int)i;
    return -1;
}

static int64_t sample_value(const struct prof *p, const struct sample *s, int t)
{
    return t >= 0 && (uint32_t)t < s->nval ? p->vals[s->val0 + (size_t)t] : 0;
}

/* Sums of hostile values saturate instead of overflowing. */
static long long add_sat(long long a, long long b)
{
    long long r;
    if (!__builtin_add_overflow(a, b, &r)) return r;
    return b > 0 ? LLONG_MAX : LLONG_MIN;
}

/* A heap row's value, bounded so that rt_heap_finish's totals over MAX_SAMPLES rows cannot overflow: 2 TiB (or
 * 2^41 objects) per site is beyond any real heap. */
static long long heap_bound(long long v)
{
    const long long cap = 1LL << 41;
    return v > cap ? cap : v < -cap ? -cap : v;
}

/* One frame of a stack: a line of a location (function, line) or, for a location without a usable line, the
 * location alone (named by its address). */
struct frameref {
    const struct func *fn;
    const struct loc *loc;
    int64_t line;
};

/* The frames of sample s, innermost first (inlined calls before their caller, as profile.proto orders lines).
 * Returns how many were written (at most max). */
static size_t sample_frames(const struct prof *p, const struct sample *s, struct frameref *out, size_t max)
{
    size_t n = 0;
    for (uint32_t i = 0; i < s->nloc && n < max; i++) {
        const struct loc *l = loc_find(p, p->locids[s->loc0 + i]);
        if (!l) continue;
        size_t before = n;
        for (uint32_t j = 0; j < l->nlines && n < max; j++) {
            const struct line *ln = &p->lines[l->line0 + j];
            const struct func *fn = func_find(p, ln->func_id);
            const struct span *name = fn ? str_at(p, fn->name) : NULL;
            if (!name || name->len == 0) continue;
            out[n++] = (struct frameref){fn, l, ln->line};
        }
        if (n == before && n < max) out[n++] = (struct frameref){NULL, l, 0};
    }
    return n;
}

/* A frame's name and file as malloc'd strings (file NULL when the profile has none). */
static int frame_strings(const struct prof *p, const struct frameref *fr, char **name, char **file)
{
    *name = *file = NULL;
    if (fr->fn) {
        const struct span *s = str_at(p, fr->fn->name), *f = str_at(p, fr->fn->file);
        *name = strndup(s->p, s->len < MAX_NAME ? s->len : MAX_NAME);
        if (f && f->len) *file = strndup(f->p, f->len < MAX_NAME ? f->len : MAX_NAME);
        if (!*name || (f && f->len && !*file)) goto fail;
    } else if (asprintf(name, "0x%" PRIx64, fr->loc->address) < 0) {
        *name = NULL;
        goto fail;
    }
    return 0;
fail:
    free(*name);
    free(*file);
    *name = *file = NULL;
    return -ENOMEM;
}

/* ---- CPU profile: functions by flat and cum ---- */

/* Rows keyed by function name and file, in an open-addressing table (functions of the same name under several
 * ids, or locations of the same address, become one row). */
struct frow {
    const char *name, *file; /* into the profile's bytes; name NULL: the row of a location without function */
    size_t namelen, filelen;
    char addr[24];           /* then its address, as the name */
    long long flat, cum;
    size_t stamp;            /* 1 + the last sample that counted it in cum */
};

struct rowmap {
    struct frow *rows;
    size_t n, cap;
    int *slots; /* row index, -1 empty */
    size_t nslots;
};

static const char *frow_name(const struct frow *w) { return w->name ? w->name : w->addr; }

static uint64_t row_hash(const char *name, size_t namelen, const char *file, size_t filelen)
{
    uint64_t h = 14695981039346656037ULL; /* FNV-1a */
    for (size_t i = 0; i < namelen; i++) h = (h ^ (unsigned char)name[i]) * 1099511628211ULL;
    h = (h ^ 0xFF) * 1099511628211ULL;
    for (size_t i = 0; i < filelen; i++) h = (h ^ (unsigned char)file[i]) * 1099511628211ULL;
    return h;
}

static int rowmap_rehash(struct rowmap *m, size_t nslots)
{
    int *slots = malloc(nslots * sizeof *slots);
    if (!slots) return -ENOMEM;
    for (size_t i = 0; i < nslots; i++) slots[i] = -1;
    for (size_t r = 0; r < m->n; r++) {
        const struct frow *w = &m->rows[r];
        size_t i = (size_t)row_hash(frow_name(w), w->namelen, w->file, w->filelen) & (nslots - 1);
        while (slots[i] >= 0) i = (i + 1) & (nslots - 1);
        slots[i] = (int)r;
    }
    free(m->slots);
    m->slots = slots;
    m->nslots = nslots;
    return 0;
}

/* The row of (name, file), or with name NULL of the address; created when new. -1 on out of memory. */
static int rowmap_get(struct rowmap *m, const char *name, size_t namelen, const char *file, size_t filelen,
                      uint64_t address)
{
    if ((m->n + 1) * 2 > m->nslots && rowmap_rehash(m, m->nslots ? m->nslots * 2 : 1024) < 0) return -1;
    char addr[24] = "";
    const char *key = name;
    if (!name) {
        namelen = (size_t)snprintf(addr, sizeof addr, "0x%" PRIx64, address);
        key = addr;
    }
    size_t i = (size_t)row_hash(key, namelen, file, filelen) & (m->nslots - 1);
    for (; m->slots[i] >= 0; i = (i + 1) & (m->nslots - 1)) {
        const struct frow *w = &m->rows[m->slots[i]];
        if (w->namelen == namelen && w->filelen == filelen && memcmp(frow_name(w), key, namelen) == 0 &&
            (filelen == 0 || memcmp(w->file, file, filelen) == 0))
            return m->slots[i];
    }
    if (GROW(m->rows, m->cap, m->n, 256) < 0) return -1;
    struct frow *w = &m->rows[m->n];
    *w = (struct frow){.name = name, .namelen = namelen, .file = file, .filelen = filelen};
    memcpy(w->addr, addr, sizeof addr);
    m->slots[i] = (int)m->n;
    return (int)m->n++;
}

static int by_flat(const void *a, const void *b)
{
    const struct rt_profile_row *x = a, *y = b;
    if (x->flat != y->flat) return x->flat > y->flat ? -1 : 1;
    if (x->cum != y->cum) return x->cum > y->cum ? -1 : 1;
    return strcmp(x->function, y->function);
}

static int row_of_frame(struct rowmap *m, const struct prof *p, const struct frameref *fr)
{
    if (!fr->fn) return rowmap_get(m, NULL, 0, "", 0, fr->loc->address);
    const struct span *s = str_at(p, fr->fn->name), *f = str_at(p, fr->fn->file);
    return rowmap_get(m, s->p, s->len, f ? f->p : "", f ? f->len : 0, 0);
}

int pprof_read_profile(const void *data, size_t len, struct rt_profile *out, char *err, size_t errlen)
{
    struct prof p;
    int rc = prof_decode(&p, data, len, err, errlen);
    struct rowmap m = {0};
    struct frameref *frames = NULL;
    if (rc < 0) goto out;
    int t = type_index(&p, "cpu", NULL);
    if (t < 0 && p.default_type) {
        const struct span *d = str_at(&p, p.default_type);
        for (size_t i = 0; d && t < 0 && i < p.ntypes; i++)
            if (span_eq(str_at(&p, p.types[i].type), d)) t = (int)i;
    }
    if (t < 0) t = (int)p.ntypes - 1;
    const struct span *unit = str_at(&p, p.types[t].unit);
    snprintf(out->unit, sizeof out->unit, "%.*s", unit ? (int)(unit->len < 31 ? unit->len : 31) : 0,
             unit ? unit->p : "");
    out->seconds = p.duration_nanos > 0 ? (double)p.duration_nanos / 1e9 : 0;
    out->total = 0;

    if (!(frames = malloc(MAX_FRAMES * sizeof *frames))) {
        rc = oom(err, errlen);
        goto out;
    }
    for (size_t i = 0; i < p.nsamples; i++) {
        long long v = sample_value(&p, &p.samples[i], t);
        out->total = add_sat(out->total, v);
        size_t nf = sample_frames(&p, &p.samples[i], frames, MAX_FRAMES);
        for (size_t j = 0; j < nf; j++) {
            int r = row_of_frame(&m, &p, &frames[j]);
            if (r < 0) {
                rc = oom(err, errlen);
                goto out;
            }
            if (j == 0) m.rows[r].flat = add_sat(m.rows[r].flat, v);
            if (m.rows[r].stamp != i + 1) { /* a recursive function counts once per sample */
                m.rows[r].stamp = i + 1;
                m.rows[r].cum = add_sat(m.rows[r].cum, v);
            }
        }
    }
    if (m.n && !(out->rows = calloc(m.n, sizeof *out->rows))) {
        rc = oom(err, errlen);
        goto out;
    }
    for (size_t r = 0; r < m.n; r++) {
        struct rt_profile_row *o = &out->rows[out->n];
        const struct frow *w = &m.rows[r];
        o->function = strndup(frow_name(w), w->namelen < MAX_NAME ? w->namelen : MAX_NAME);
        o->file = w->filelen ? strndup(w->file, w->filelen < MAX_NAME ? w->filelen : MAX_NAME) : NULL;
        o->flat = w->flat;
        o->cum = w->cum;
        out->n++;
        if (!o->function || (w->filelen && !o->file)) {
            rc = oom(err, errlen);
            goto out;
        }
    }
    if (out->n) qsort(out->rows, (size_t)out->n, sizeof *out->rows, by_flat);
out:
    if (rc < 0) {
        for (int i = 0; i < out->n; i++) {
            free(out->rows[i].function);
            free(out->rows[i].file);
        }
        free(out->rows);
        out->rows = NULL;
        out->n = 0;
    }
    free(frames);
    free(m.rows);
    free(m.slots);
    prof_free(&p);
    return rc;
}

/* ---- heap profile: allocation sites ---- */

static int by_stack(const void *a, const void *b, void *arg)
{
    const struct prof *p = arg;
    const struct sample *x = &p->samples[*(const size_t *)a], *y = &p->samples[*(const size_t *)b];
    uint32_t n = x->nloc < y->nloc ? x->nloc : y->nloc;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t u = p->locids[x->loc0 + i], v = p->locids[y->loc0 + i];
        if (u != v) return u < v ? -1 : 1;
    }
    return x->nloc < y->nloc ? -1 : x->nloc > y->nloc;
}

static int heap_row(const struct prof *p, const struct sample *s, struct frameref *frames, struct rt_heap_row *row)
{
    size_t nf = sample_frames(p, s, frames, MAX_FRAMES);
    row->stack = calloc(nf ? nf : 1, sizeof *row->stack);
    if (!row->stack) return -ENOMEM;
    for (size_t j = 0; j < nf; j++) {
        struct rt_frame *f = &row->stack[j];
        if (frame_strings(p, &frames[j], &f->function, &f->file) < 0) return -ENOMEM;
        f->line = frames[j].line > 0 && frames[j].line <= INT32_MAX ? (int)frames[j].line : 0;
        row->nstack++;
    }
    row->name = strdup(nf ? row->stack[0].function : "?");
    return row->name ? 0 : -ENOMEM;
}

int pprof_read_heap(const void *data, size_t len, struct rt_heap *out, char *err, size_t errlen)
{
    struct prof p;
    size_t *order = NULL;
    struct frameref *frames = NULL;
    size_t cap = 0;
    int rc = prof_decode(&p, data, len, err, errlen);
    if (rc < 0) goto out;
    int in_space = type_index(&p, "inuse_space", NULL), in_obj = type_index(&p, "inuse_objects", NULL);
    int al_space = type_index(&p, "alloc_space", NULL), al_obj = type_index(&p, "alloc_objects", NULL);
    if (in_space < 0) {
        rc = -EBADMSG;
        snprintf(err, errlen, "not a heap profile: it has no inuse_space values");
        goto out;
    }
    order = malloc((p.nsamples ? p.nsamples : 1) * sizeof *order);
    frames = malloc(MAX_FRAMES * sizeof *frames);
    if (!order || !frames) {
        rc = oom(err, errlen);
        goto out;
    }
    /* Go keeps a bucket per stack and size: samples of one stack are one site. */
    for (size_t i = 0; i < p.nsamples; i++) order[i] = i;
    if (p.nsamples) qsort_r(order, p.nsamples, sizeof *order, by_stack, &p);
    for (size_t i = 0; i < p.nsamples;) {
        size_t j = i;
        long long count = 0, bytes = 0, acount = 0, abytes = 0;
        for (; j < p.nsamples && by_stack(&order[i], &order[j], &p) == 0; j++) {
            const struct sample *s = &p.samples[order[j]];
            count = add_sat(count, sample_value(&p, s, in_obj));
            bytes = add_sat(bytes, sample_value(&p, s, in_space));
            acount = add_sat(acount, sample_value(&p, s, al_obj));
            abytes = add_sat(abytes, sample_value(&p, s, al_space));
        }
        if (count == 0 && bytes == 0 && acount == 0 && abytes == 0) { /* as pprof does: nothing to show */
            i = j;
            continue;
        }
        if (GROW(out->rows, cap, out->n, 64) < 0) {
            rc = oom(err, errlen);
            goto out;
        }
        struct rt_heap_row *row = &out->rows[out->n++];
        memset(row, 0, sizeof *row);
        row->count = in_obj >= 0 ? heap_bound(count) : 0;
        row->bytes = heap_bound(bytes);
        row->alloc_count = al_obj >= 0 ? heap_bound(acount) : -1;
        row->alloc_bytes = al_space >= 0 ? heap_bound(abytes) : -1;
        if (heap_row(&p, &p.samples[order[i]], frames, row) < 0) {
            rc = oom(err, errlen);
            goto out;
        }
        i = j;
    }
    if (out->n) rt_heap_finish(out); /* (its qsort must not see a NULL array) */
    else out->total_count = out->total_bytes = 0;
out:
    if (rc < 0) {
        for (int i = 0; i < out->n; i++) {
            free(out->rows[i].name);
            rt_frames_free(out->rows[i].stack, out->rows[i].nstack);
        }
        free(out->rows);
        out->rows = NULL;
        out->n = 0;
    }
    free(order);
    free(frames);
    prof_free(&p);
    return rc;
}
