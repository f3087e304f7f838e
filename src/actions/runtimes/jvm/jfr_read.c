#include "jfr_read.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

/* The facts of the format used here (JDK 11+ ChunkParser, JMC's loader):
 * - a chunk: a 68-byte header ("FLR\0", u16 major, u16 minor, then big-endian i64 chunk size, constant-pool
 *   offset, metadata offset, start nanos, duration nanos, start ticks, ticks per second, and an i32 of features,
 *   bit 0: integers are compressed), then events up to chunk size; chunks follow one another in a file;
 * - an event: its size (an int, counting itself), its type (a long; 0 metadata, 1 constant pool), then the fields
 *   of its class in the metadata's order;
 * - compressed integers: 7 bits a byte, low bits first, the high bit saying more follows; the ninth byte of a long
 *   gives all its 8 bits. Uncompressed: big-endian, fixed width;
 * - strings: a byte of encoding (0 null, 1 "", 2 a reference into the String pool, 3 UTF-8, 4 chars as ints,
 *   5 Latin-1), then an int length and the bytes or chars;
 * - metadata: start, duration, id (longs), a string table (an int count, strings), then an element tree: name (an
 *   index into the table), attributes (count, key and value indices), children (count, elements). "class"
 *   elements (attributes id, name) hold "field" elements (name, class, constantPool="true", dimension="1");
 * - a constant pool: start, duration, delta (longs), a flush byte, a count of pools, each a class id (long), a
 *   count and that many (key as a long, value of the class) pairs;
 * - a value: a field with constantPool is a long key into that class's pool; dimension 1 is an int count and
 *   that many values; the primitives are boolean and byte (one byte), char, short, int and long (integers), float
 *   and double (4 and 8 bytes, big-endian), java.lang.String; any other class is its fields in turn. */

#define HEADER_SIZE 68
#define MAX_NEST 16          /* elements in the metadata, classes inside classes in a value */
#define MAX_FRAMES 2048      /* frames of one stack kept (JFR's default depth is 64) */
#define MAX_STRING (1u << 20)

enum prim { P_OBJ, P_BOOL, P_BYTE, P_CHAR, P_SHORT, P_INT, P_LONG, P_FLOAT, P_DOUBLE, P_STRING };

struct field {
    char *name;
    long long type;
    int cls; /* index into classes, -1 unknown (resolved after the metadata) */
    int cp, array;
};

struct jclass {
    long long id;
    char *name;
    enum prim prim;
    struct field *fields;
    size_t nfields, cap;
};

/* A decoded value: an integer, a string, a pool key, an object (kid[i]: its class's field i) or an array. */
enum vkind { V_INT, V_STR, V_STRREF, V_REF, V_OBJ, V_ARR };

struct val {
    enum vkind kind;
    int cls;      /* V_OBJ, V_REF: the class */
    long long i;  /* V_INT, V_REF and V_STRREF (the key) */
    char *s;      /* V_STR, NULL for a null string */
    struct val *kid;
    size_t n;
};

struct entry {
    long long key;
    struct val v;
    int *frames; /* a StackTrace's resolved frames (into the report), -2: not yet, NULL with nframes -1: bad */
    int nframes;
};

struct pool {
    int cls;
    struct entry *e;
    size_t n, cap;
    int sorted;
};

struct sample {
    long long thread, stack; /* keys into the Thread and StackTrace pools */
    int has_thread, has_stack;
};

struct chunk {
    const unsigned char *base; /* the chunk's first byte */
    size_t size;
    size_t at;                 /* offset in the file, for errors */
    int compressed;
    struct jclass *classes;
    size_t nclasses, ccap;
    struct pool *pools;
    size_t npools, pcap;
    struct sample *samples;
    size_t nsamples, scap;
    long long budget;          /* values left to decode in this chunk */
    /* classes looked up by name (-1: absent) */
    int c_sample, c_stacktrace, c_frame, c_method, c_class, c_symbol, c_frametype, c_thread, c_string;
};

struct rd {
    const unsigned char *p, *end;
    const struct chunk *c;
    const char *bad; /* the first thing wrong, NULL while all is well */
};

static void rd_fail(struct rd *r, const char *why)
{
    if (!r->bad) r->bad = why;
    r->p = r->end;
}

static uint64_t rd_be(struct rd *r, int n)
{
    if (r->end - r->p < n) {
        rd_fail(r, "truncated");
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = v << 8 | *r->p++;
    return v;
}

static uint64_t rd_varint(struct rd *r)
{
    uint64_t v = 0;
    for (int i = 0; i < 9; i++) {
        if (r->p >= r->end) {
            rd_fail(r, "truncated");
            return 0;
        }
        unsigned b = *r->p++;
        if (i == 8) return v | (uint64_t)b << 56;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) return v;
    }
    return v;
}

static long long rd_long(struct rd *r) { return (long long)(r->c->compressed ? rd_varint(r) : rd_be(r, 8)); }
static int rd_int(struct rd *r) { return (int)(r->c->compressed ? rd_varint(r) : rd_be(r, 4)); }
static int rd_short(struct rd *r) { return (short)(r->c->compressed ? rd_varint(r) : rd_be(r, 2)); }
static unsigned rd_byte(struct rd *r) { return (unsigned)rd_be(r, 1); }

/* A count of items of at least min_bytes each that must fit in what is left. */
static size_t rd_count(struct rd *r, size_t min_bytes)
{
    int n = rd_int(r);
    if (r->bad) return 0;
    if (n < 0 || (min_bytes && (size_t)n > (size_t)(r->end - r->p) / min_bytes) || n > (1 << 24)) {
        rd_fail(r, "a count larger than what follows");
        return 0;
    }
    return (size_t)n;
}

static void put_utf8(char *s, size_t *n, unsigned c)
{
    if (c < 0x80) s[(*n)++] = (char)c;
    else if (c < 0x800) {
        s[(*n)++] = (char)(0xC0 | c >> 6);
        s[(*n)++] = (char)(0x80 | (c & 0x3F));
    } else {
        s[(*n)++] = (char)(0xE0 | c >> 12);
        s[(*n)++] = (char)(0x80 | (c >> 6 & 0x3F));
        s[(*n)++] = (char)(0x80 | (c & 0x3F));
    }
}

/* A string: *out malloc'd (NULL for a null string), or a pool reference in *ref (returns 2). Returns 1 for a
 * string, 0 null, 2 reference, -1 error (r->bad set) or -ENOMEM. */
static int rd_string(struct rd *r, char **out, long long *ref)
{
    *out = NULL;
    unsigned enc = rd_byte(r);
    if (r->bad) return -1;
    switch (enc) {
    case 0: return 0;
    case 1: return (*out = strdup("")) ? 1 : -ENOMEM;
    case 2: *ref = rd_long(r); return r->bad ? -1 : 2;
    case 3:
    case 5: {
        size_t n = rd_count(r, 1);
        if (r->bad) return -1;
        if (n > MAX_STRING) {
            rd_fail(r, "a string too long");
            return -1;
        }
        char *s = malloc(enc == 5 ? 2 * n + 1 : n + 1);
        if (!s) return -ENOMEM;
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (enc == 3) s[k++] = (char)r->p[i];
            else put_utf8(s, &k, r->p[i]);
        }
        r->p += n;
        s[k] = '\0';
        *out = s;
        return 1;
    }
    case 4: {
        size_t n = rd_count(r, 1);
        if (r->bad) return -1;
        if (n > MAX_STRING) {
            rd_fail(r, "a string too long");
            return -1;
        }
        char *s = malloc(3 * n + 1);
        if (!s) return -ENOMEM;
        size_t k = 0;
        for (size_t i = 0; i < n && !r->bad; i++) {
            unsigned c = (unsigned)rd_varint(r) & 0xFFFF;
            put_utf8(s, &k, c ? c : '?');
        }
        s[k] = '\0';
        if (r->bad) {
            free(s);
            return -1;
        }
        *out = s;
        return 1;
    }
    default: rd_fail(r, "an unknown string encoding"); return -1;
    }
}

/* ---- metadata ---- */

static int class_by_id(const struct chunk *c, long long id)
{
    for (size_t i = 0; i < c->nclasses; i++)
        if (c->classes[i].id == id) return (int)i;
    return -1;
}

static int class_by_name(const struct chunk *c, const char *name)
{
    for (size_t i = 0; i < c->nclasses; i++)
        if (c->classes[i].name && !strcmp(c->classes[i].name, name)) return (int)i;
    return -1;
}

static enum prim prim_of(const char *name)
{
    static const struct {
        const char *name;
        enum prim p;
    } t[] = {{"boolean", P_BOOL}, {"byte", P_BYTE},     {"char", P_CHAR},     {"short", P_SHORT},
             {"int", P_INT},      {"long", P_LONG},     {"float", P_FLOAT},   {"double", P_DOUBLE},
             {"java.lang.String", P_STRING}};
    for (size_t i = 0; name && i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(name, t[i].name)) return t[i].p;
    return P_OBJ;
}

struct meta {
    char **str;
    size_t nstr;
};

static const char *meta_str(const struct meta *m, int i) { return i >= 0 && (size_t)i < m->nstr ? m->str[i] : NULL; }

/* One element and its children; parent_class: the class a "field" belongs to (-1: none). */
static int meta_element(struct rd *r, struct chunk *c, const struct meta *m, int depth, int parent_class)
{
    if (depth > MAX_NEST) {
        rd_fail(r, "metadata nested too deep");
        return -1;
    }
    const char *name = meta_str(m, rd_int(r));
    size_t nattr = rd_count(r, 2);
    const char *a_id = NULL, *a_name = NULL, *a_class = NULL, *a_cp = NULL, *a_dim = NULL;
    for (size_t i = 0; i < nattr && !r->bad; i++) {
        const char *k = meta_str(m, rd_int(r)), *v = meta_str(m, rd_int(r));
        if (!k || !v) continue;
        if (!strcmp(k, "id")) a_id = v;
        else if (!strcmp(k, "name")) a_name = v;
        else if (!strcmp(k, "class")) a_class = v;
        else if (!strcmp(k, "constantPool")) a_cp = v;
        else if (!strcmp(k, "dimension")) a_dim = v;
    }
    if (r->bad) return -1;
    int me = -1;
    if (name && !strcmp(name, "class") && a_id && a_name) {
        if (GROW(c->classes, c->ccap, c->nclasses, 64) < 0) return -ENOMEM;
        struct jclass *k = &c->classes[c->nclasses];
        memset(k, 0, sizeof *k);
        k->id = strtoll(a_id, NULL, 10);
        if (!(k->name = strdup(a_name))) return -ENOMEM;
        k->prim = prim_of(a_name);
        me = (int)c->nclasses++;
    } else if (name && !strcmp(name, "field") && parent_class >= 0 && a_name && a_class) {
        struct jclass *k = &c->classes[parent_class];
        if (GROW(k->fields, k->cap, k->nfields, 8) < 0) return -ENOMEM;
        struct field *f = &k->fields[k->nfields];
        memset(f, 0, sizeof *f);
        if (!(f->name = strdup(a_name))) return -ENOMEM;
        f->type = strtoll(a_class, NULL, 10);
        f->cls = -1;
        f->cp = a_cp && !strcmp(a_cp, "true");
        f->array = a_dim && strcmp(a_dim, "0") != 0;
        k->nfields++;
    }
    size_t nkids = rd_count(r, 3);
    for (size_t i = 0; i < nkids && !r->bad; i++) {
        int rc = meta_element(r, c, m, depth + 1, me);
        if (rc < 0) return rc;
    }
    return r->bad ? -1 : 0;
}

static int read_metadata(struct chunk *c, size_t off, char *err, size_t errlen)
{
    struct rd r = {c->base + off, c->base + c->size, c, NULL};
    long long size = rd_int(&r);
    if (!r.bad && (size < 1 || (size_t)size > c->size - off)) rd_fail(&r, "an event size beyond the chunk");
    if (!r.bad) r.end = c->base + off + (size_t)size;
    if (!r.bad && rd_long(&r) != 0) rd_fail(&r, "the metadata offset does not point at the metadata");
    rd_long(&r); /* start, duration, id */
    rd_long(&r);
    rd_long(&r);
    struct meta m = {0};
    int rc = 0;
    m.nstr = rd_count(&r, 1);
    if (!r.bad && !(m.str = calloc(m.nstr ? m.nstr : 1, sizeof *m.str))) rc = -ENOMEM;
    for (size_t i = 0; rc == 0 && i < m.nstr && !r.bad; i++) {
        long long ref;
        int s = rd_string(&r, &m.str[i], &ref);
        if (s == -ENOMEM) rc = s;
    }
    if (rc == 0 && !r.bad) rc = meta_element(&r, c, &m, 0, -1);
    for (size_t i = 0; i < m.nstr && m.str; i++) free(m.str[i]);
    free(m.str);
    if (rc == -ENOMEM) {
        snprintf(err, errlen, "out of memory");
        return rc;
    }
    if (r.bad) {
        snprintf(err, errlen, "not a JFR recording diagtop can read: the metadata at offset %zu: %s", c->at + off,
                 r.bad);
        return -EBADMSG;
    }
    for (size_t i = 0; i < c->nclasses; i++)
        for (size_t j = 0; j < c->classes[i].nfields; j++)
            c->classes[i].fields[j].cls = class_by_id(c, c->classes[i].fields[j].type);
    c->c_sample = class_by_name(c, "jdk.ExecutionSample");
    c->c_stacktrace = class_by_name(c, "jdk.types.StackTrace");
    c->c_frame = class_by_name(c, "jdk.types.StackFrame");
    c->c_method = class_by_name(c, "jdk.types.Method");
    c->c_class = class_by_name(c, "java.lang.Class");
    c->c_symbol = class_by_name(c, "jdk.types.Symbol");
    c->c_frametype = class_by_name(c, "jdk.types.FrameType");
    c->c_thread = class_by_name(c, "java.lang.Thread");
    c->c_string = class_by_name(c, "java.lang.String");
    return 0;
}

/* ---- values ---- */

static void val_free(struct val *v)
{
    for (size_t i = 0; i < v->n; i++) val_free(&v->kid[i]);
    free(v->kid);
    free(v->s);
    memset(v, 0, sizeof *v);
}

static int read_value(struct rd *r, struct chunk *c, int cls, int depth, struct val *out);

/* One value of field f (an array when f says so). */
static int read_field(struct rd *r, struct chunk *c, const struct field *f, int depth, struct val *out)
{
    memset(out, 0, sizeof *out);
    if (f->cls < 0) {
        rd_fail(r, "a field of a class the metadata does not define");
        return -1;
    }
    if (f->array) {
        out->kind = V_ARR;
        size_t n = rd_count(r, 1); /* every element of a real array takes a byte at least */
        if (r->bad) return -1;
        if ((long long)n > c->budget) {
            rd_fail(r, "more values than the chunk can hold");
            return -1;
        }
        if (n && !(out->kid = calloc(n, sizeof *out->kid))) return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
            struct field one = *f;
            one.array = 0;
            int rc = read_field(r, c, &one, depth + 1, &out->kid[i]);
            out->n = i + 1;
            if (rc < 0) return rc;
        }
        return 0;
    }
    if (f->cp) {
        out->kind = V_REF;
        out->cls = f->cls;
        out->i = rd_long(r);
        return r->bad ? -1 : 0;
    }
    return read_value(r, c, f->cls, depth, out);
}

static int read_value(struct rd *r, struct chunk *c, int cls, int depth, struct val *out)
{
    memset(out, 0, sizeof *out);
    if (depth > MAX_NEST) {
        rd_fail(r, "values nested too deep");
        return -1;
    }
    if (--c->budget < 0) {
        rd_fail(r, "more values than the chunk can hold");
        return -1;
    }
    const struct jclass *k = &c->classes[cls];
    out->kind = V_INT;
    switch (k->prim) {
    case P_BOOL:
    case P_BYTE: out->i = (signed char)rd_byte(r); break;
    case P_CHAR:
    case P_SHORT: out->i = rd_short(r); break;
    case P_INT: out->i = rd_int(r); break;
    case P_LONG: out->i = rd_long(r); break;
    case P_FLOAT: rd_be(r, 4); break;
    case P_DOUBLE: rd_be(r, 8); break;
    case P_STRING: {
        int s = rd_string(r, &out->s, &out->i);
        if (s == -ENOMEM) return s;
        out->kind = s == 2 ? V_STRREF : V_STR;
        break;
    }
    case P_OBJ:
        out->kind = V_OBJ;
        out->cls = cls;
        if (k->nfields && !(out->kid = calloc(k->nfields, sizeof *out->kid))) return -ENOMEM;
        for (size_t i = 0; i < k->nfields; i++) {
            int rc = read_field(r, c, &k->fields[i], depth + 1, &out->kid[i]);
            out->n = i + 1;
            if (rc < 0) return rc;
        }
        break;
    }
    return r->bad ? -1 : 0;
}

/* The value of an object's field by name, NULL when absent. */
static const struct val *field_of(const struct chunk *c, const struct val *v, const char *name)
{
    if (!v || v->kind != V_OBJ) return NULL;
    const struct jclass *k = &c->classes[v->cls];
    for (size_t i = 0; i < v->n && i < k->nfields; i++)
        if (!strcmp(k->fields[i].name, name)) return &v->kid[i];
    return NULL;
}

/* ---- constant pools ---- */

static int wanted(const struct chunk *c, int cls)
{
    return cls >= 0 && (cls == c->c_stacktrace || cls == c->c_method || cls == c->c_class || cls == c->c_symbol ||
                        cls == c->c_frametype || cls == c->c_thread || cls == c->c_string);
}

static struct pool *pool_of(struct chunk *c, int cls, int create)
{
    for (size_t i = 0; i < c->npools; i++)
        if (c->pools[i].cls == cls) return &c->pools[i];
    if (!create || GROW(c->pools, c->pcap, c->npools, 8) < 0) return NULL;
    struct pool *p = &c->pools[c->npools++];
    memset(p, 0, sizeof *p);
    p->cls = cls;
    return p;
}

static int read_pool_event(struct rd *r, struct chunk *c)
{
    rd_long(r); /* start, duration, delta to the previous pool: every pool event is met by the scan */
    rd_long(r);
    rd_long(r);
    rd_byte(r); /* flush */
    size_t npools = rd_count(r, 2);
    for (size_t i = 0; i < npools && !r->bad; i++) {
        long long id = rd_long(r);
        size_t n = rd_count(r, 1);
        if (r->bad) break;
        int cls = class_by_id(c, id);
        if (cls < 0) {
            rd_fail(r, "a constant pool of a class the metadata does not define");
            break;
        }
        struct pool *p = wanted(c, cls) ? pool_of(c, cls, 1) : NULL;
        if (wanted(c, cls) && !p) return -ENOMEM;
        for (size_t j = 0; j < n && !r->bad; j++) {
            long long key = rd_long(r);
            struct val v;
            int rc = read_value(r, c, cls, 0, &v);
            if (rc < 0 || !p) {
                val_free(&v);
                if (rc == -ENOMEM) return rc;
                continue;
            }
            if (GROW(p->e, p->cap, p->n, 64) < 0) {
                val_free(&v);
                return -ENOMEM;
            }
            p->e[p->n++] = (struct entry){.key = key, .v = v, .nframes = -2};
            p->sorted = 0;
        }
    }
    return r->bad ? -1 : 0;
}

static int by_key(const void *a, const void *b)
{
    long long x = ((const struct entry *)a)->key, y = ((const struct entry *)b)->key;
    return x < y ? -1 : x > y;
}

static struct entry *lookup(struct chunk *c, int cls, long long key)
{
    struct pool *p = cls >= 0 ? pool_of(c, cls, 0) : NULL;
    if (!p || !p->n) return NULL;
    if (!p->sorted) {
        qsort(p->e, p->n, sizeof *p->e, by_key);
        p->sorted = 1;
    }
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->e[mid].key < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < p->n && p->e[lo].key == key ? &p->e[lo] : NULL;
}

/* A string field, following a reference into the Symbol or String pool; NULL when there is none. */
static const char *string_of(struct chunk *c, const struct val *v, int depth)
{
    if (!v || depth > 4) return NULL;
    if (v->kind == V_STR) return v->s;
    if (v->kind == V_STRREF) {
        struct entry *e = lookup(c, c->c_string, v->i);
        return e ? string_of(c, &e->v, depth + 1) : NULL;
    }
    if (v->kind == V_REF) {
        struct entry *e = lookup(c, v->cls, v->i);
        return e ? string_of(c, field_of(c, &e->v, "string"), depth + 1) : NULL;
    }
    return NULL;
}

static const struct val *deref(struct chunk *c, const struct val *v)
{
    if (!v || v->kind != V_REF) return v;
    struct entry *e = lookup(c, v->cls, v->i);
    return e ? &e->v : NULL;
}

/* ---- the report ---- */

struct builder {
    struct cpu_report *r;
    size_t fcap, scap, tcap;
    int *fhash, *shash; /* open addressing: index + 1, 0 empty */
    size_t fbits, sbits;
    long long period_ns;
};

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

static uint64_t str_hash(uint64_t h, const char *s)
{
    for (; s && *s; s++) h = mix(h, (unsigned char)*s);
    return mix(h, 0xff);
}

/* Rebuilds a table of 2^bits slots for n items with hash h(i). */
static int rehash(int **tab, size_t *bits, size_t n, uint64_t (*h)(const struct builder *, int),
                  const struct builder *b)
{
    if (*tab && n * 2 < ((size_t)1 << *bits)) return 0;
    size_t nb = *bits ? *bits + 1 : 10;
    int *t = calloc((size_t)1 << nb, sizeof *t);
    if (!t) return -ENOMEM;
    size_t mask = ((size_t)1 << nb) - 1;
    for (size_t i = 0; i < n; i++) {
        size_t s = (size_t)h(b, (int)i) & mask;
        while (t[s]) s = (s + 1) & mask;
        t[s] = (int)i + 1;
    }
    free(*tab);
    *tab = t;
    *bits = nb;
    return 0;
}

static uint64_t frame_hash(const char *fn, int line, int inlined)
{
    return mix(mix(str_hash(0xcbf29ce484222325ull, fn), (uint64_t)line), (uint64_t)inlined);
}

static uint64_t frame_hash_i(const struct builder *b, int i)
{
    const struct cpu_frame *f = &b->r->frames[i];
    return frame_hash(f->function, f->line, f->inlined);
}

static uint64_t stack_hash(int tid, int truncated, const int *fr, int n)
{
    uint64_t h = mix(mix(0xcbf29ce484222325ull, (uint64_t)tid), (uint64_t)truncated);
    for (int i = 0; i < n; i++) h = mix(h, (uint64_t)fr[i]);
    return mix(h, (uint64_t)n);
}

static uint64_t stack_hash_i(const struct builder *b, int i)
{
    const struct cpu_stack *s = &b->r->stacks[i];
    return stack_hash(s->tid, s->truncated, s->frames, s->nframes);
}

/* The report's frame for fn (taken over) at line: its index, or -ENOMEM. */
static int add_frame(struct builder *b, char *fn, int line, int inlined)
{
    struct cpu_report *r = b->r;
    if (rehash(&b->fhash, &b->fbits, (size_t)r->nframes, frame_hash_i, b) < 0) {
        free(fn);
        return -ENOMEM;
    }
    size_t mask = ((size_t)1 << b->fbits) - 1, s = (size_t)frame_hash(fn, line, inlined) & mask;
    for (; b->fhash[s]; s = (s + 1) & mask) {
        const struct cpu_frame *f = &r->frames[b->fhash[s] - 1];
        if (f->line == line && f->inlined == inlined && !strcmp(f->function, fn)) {
            free(fn);
            return b->fhash[s] - 1;
        }
    }
    if (GROW(r->frames, b->fcap, r->nframes, 256) < 0) {
        free(fn);
        return -ENOMEM;
    }
    r->frames[r->nframes] = (struct cpu_frame){.inlined = inlined, .function = fn, .line = line};
    b->fhash[s] = r->nframes + 1;
    return r->nframes++;
}

/* "java/util/HashMap" and "put" into "java.util.HashMap.put". */
static char *method_name(const char *cls, const char *m)
{
    if (!cls) cls = "?";
    if (!m) m = "?";
    size_t n = strlen(cls), k = strlen(m);
    char *s = malloc(n + k + 2);
    if (!s) return NULL;
    for (size_t i = 0; i < n; i++) s[i] = cls[i] == '/' ? '.' : cls[i];
    s[n] = '.';
    memcpy(s + n + 1, m, k + 1);
    return s;
}

/* The frames of a StackTrace pool entry, resolved once per chunk into report frames. */
static int resolve_stack(struct builder *b, struct chunk *c, struct entry *e)
{
    if (e->nframes != -2) return 0;
    e->nframes = 0;
    const struct val *frames = field_of(c, &e->v, "frames");
    size_t n = frames && frames->kind == V_ARR ? frames->n : 0;
    if (n > MAX_FRAMES) n = MAX_FRAMES;
    if (n && !(e->frames = malloc(n * sizeof *e->frames))) return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const struct val *f = &frames->kid[i];
        const struct val *m = deref(c, field_of(c, f, "method"));
        const struct val *cls = deref(c, field_of(c, m, "type"));
        const struct val *line = field_of(c, f, "lineNumber");
        const char *type = string_of(c, field_of(c, deref(c, field_of(c, f, "type")), "description"), 0);
        char *fn = method_name(string_of(c, field_of(c, cls, "name"), 0), string_of(c, field_of(c, m, "name"), 0));
        if (!fn) return -ENOMEM;
        int ix = add_frame(b, fn, line && line->kind == V_INT && line->i > 0 ? (int)line->i : 0,
                           type && !strcmp(type, "Inlined"));
        if (ix < 0) return ix;
        e->frames[e->nframes++] = ix;
    }
    return 0;
}

static int add_sample(struct builder *b, struct chunk *c, const struct sample *sm)
{
    struct cpu_report *r = b->r;
    struct entry *st = sm->has_stack ? lookup(c, c->c_stacktrace, sm->stack) : NULL;
    const struct val *th = sm->has_thread ? deref(c, &(struct val){.kind = V_REF, .cls = c->c_thread, .i = sm->thread})
                                          : NULL;
    if (c->c_thread < 0) th = NULL;
    const struct val *os = field_of(c, th, "osThreadId");
    int tid = os && os->kind == V_INT ? (int)os->i : 0;
    int rc = st ? resolve_stack(b, c, st) : 0;
    if (rc < 0) return rc;
    const int *fr = st ? st->frames : NULL;
    int nf = st ? st->nframes : 0;
    const struct val *tr = st ? field_of(c, &st->v, "truncated") : NULL;
    int truncated = !st || (tr && tr->kind == V_INT && tr->i);
    if (rehash(&b->shash, &b->sbits, (size_t)r->nstacks, stack_hash_i, b) < 0) return -ENOMEM;
    size_t mask = ((size_t)1 << b->sbits) - 1, s = (size_t)stack_hash(tid, truncated, fr, nf) & mask;
    struct cpu_stack *hit = NULL;
    for (; b->shash[s]; s = (s + 1) & mask) {
        struct cpu_stack *x = &r->stacks[b->shash[s] - 1];
        if (x->tid == tid && x->truncated == truncated && x->nframes == nf &&
            (!nf || !memcmp(x->frames, fr, (size_t)nf * sizeof *fr))) {
            hit = x;
            break;
        }
    }
    if (!hit) {
        if (GROW(r->stacks, b->scap, r->nstacks, 256) < 0) return -ENOMEM;
        hit = &r->stacks[r->nstacks];
        *hit = (struct cpu_stack){.tid = tid, .truncated = truncated, .nframes = nf};
        if (nf && !(hit->frames = malloc((size_t)nf * sizeof *fr))) return -ENOMEM;
        if (nf) memcpy(hit->frames, fr, (size_t)nf * sizeof *fr);
        b->shash[s] = ++r->nstacks;
    }
    hit->samples++;
    hit->cpu_ns += b->period_ns;
    r->samples++;
    int t = 0;
    while (t < r->nthreads && r->threads[t].tid != tid) t++;
    if (t == r->nthreads) {
        if (GROW(r->threads, b->tcap, r->nthreads, 16) < 0) return -ENOMEM;
        r->threads[t] = (struct cpu_thread){.tid = tid};
        const char *name = string_of(c, field_of(c, th, "javaName"), 0);
        if (!name) name = string_of(c, field_of(c, th, "osName"), 0);
        snprintf(r->threads[t].name, sizeof r->threads[t].name, "%s", name ? name : "");
        r->nthreads++;
    }
    r->threads[t].samples++;
    return 0;
}

static void chunk_free(struct chunk *c)
{
    for (size_t i = 0; i < c->nclasses; i++) {
        for (size_t j = 0; j < c->classes[i].nfields; j++) free(c->classes[i].fields[j].name);
        free(c->classes[i].fields);
        free(c->classes[i].name);
    }
    free(c->classes);
    for (size_t i = 0; i < c->npools; i++) {
        for (size_t j = 0; j < c->pools[i].n; j++) {
            val_free(&c->pools[i].e[j].v);
            free(c->pools[i].e[j].frames);
        }
        free(c->pools[i].e);
    }
    free(c->pools);
    free(c->samples);
}

/* One chunk at data[at..at+size): its metadata, then every event (pools kept, samples noted), then the samples. */
static int read_chunk(struct builder *b, const unsigned char *data, size_t at, size_t size, int compressed,
                      size_t meta_off, char *err, size_t errlen)
{
    struct chunk c = {.base = data + at, .size = size, .at = at, .compressed = compressed};
    c.budget = (long long)size * 2 + 65536; /* real data: about one value a byte */
    int rc = read_metadata(&c, meta_off, err, errlen);
    size_t off = HEADER_SIZE;
    while (rc == 0 && off < size) {
        struct rd r = {c.base + off, c.base + size, &c, NULL};
        long long esize = rd_int(&r);
        if (!r.bad && (esize < 1 || (size_t)esize > size - off)) rd_fail(&r, "an event size beyond the chunk");
        if (!r.bad) r.end = c.base + off + (size_t)esize;
        long long type = rd_long(&r);
        if (!r.bad && type == 1) rc = read_pool_event(&r, &c);
        else if (!r.bad && c.c_sample >= 0 && type == c.classes[c.c_sample].id) {
            struct val v;
            if ((rc = read_value(&r, &c, c.c_sample, 0, &v)) == 0) {
                const struct val *t = field_of(&c, &v, "sampledThread"), *s = field_of(&c, &v, "stackTrace");
                if (GROW(c.samples, c.scap, c.nsamples, 1024) < 0) rc = -ENOMEM;
                else
                    c.samples[c.nsamples++] = (struct sample){
                        .thread = t ? t->i : 0, .stack = s ? s->i : 0,
                        .has_thread = t && t->kind == V_REF, .has_stack = s && s->kind == V_REF};
            }
            val_free(&v);
        }
        if (rc == -ENOMEM) break;
        if (r.bad) {
            snprintf(err, errlen, "not a JFR recording diagtop can read: the event at offset %zu: %s", at + off, r.bad);
            rc = -EBADMSG;
            break;
        }
        rc = 0;
        off += (size_t)esize;
    }
    for (size_t i = 0; rc == 0 && i < c.nsamples; i++) rc = add_sample(b, &c, &c.samples[i]);
    if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
    chunk_free(&c);
    return rc;
}

static uint64_t be_at(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = v << 8 | p[i];
    return v;
}

int jfr_read_report(const void *data, size_t len, long long period_ns, struct cpu_report *out, char *err,
                    size_t errlen)
{
    memset(out, 0, sizeof *out);
    const unsigned char *d = data;
    struct builder b = {.r = out, .period_ns = period_ns > 0 ? period_ns : 10000000};
    snprintf(out->method, sizeof out->method, "jfr");
    out->period_ns = b.period_ns;
    out->hz = (int)(1000000000LL / b.period_ns);
    out->target_cost_percent = -1;
    int rc = 0, nchunks = 0;
    size_t at = 0;
    while (rc == 0 && (at < len || nchunks == 0)) {
        if (len - at < HEADER_SIZE || memcmp(d + at, "FLR\0", 4)) {
            snprintf(err, errlen, "not a JFR recording: %s at offset %zu",
                     len - at < HEADER_SIZE ? "a chunk header cut short" : "no \"FLR\" chunk header", at);
            rc = -EBADMSG;
            break;
        }
        const unsigned char *h = d + at;
        unsigned major = (unsigned)be_at(h + 4, 2), minor = (unsigned)be_at(h + 6, 2);
        uint64_t size = be_at(h + 8, 8), meta = be_at(h + 24, 8), dur = be_at(h + 40, 8);
        uint32_t features = (uint32_t)be_at(h + 64, 4);
        if (major != 2) {
            snprintf(err, errlen, "JFR format %u.%u at offset %zu: diagtop reads format 2 (JDK 11 and later)", major,
                     minor, at);
            rc = -ENOTSUP;
            break;
        }
        if (size < HEADER_SIZE || size > len - at || meta < HEADER_SIZE || meta >= size) {
            snprintf(err, errlen,
                     "not a JFR recording diagtop can read: the chunk at offset %zu says %llu bytes with its "
                     "metadata at %llu, and %zu bytes are left (a recording cut short?)",
                     at, (unsigned long long)size, (unsigned long long)meta, len - at);
            rc = -EBADMSG;
            break;
        }
        rc = read_chunk(&b, d, at, (size_t)size, features & 1, (size_t)meta, err, errlen);
        if (dur < (uint64_t)1e15) out->seconds += (double)dur / 1e9;
        at += (size_t)size;
        nchunks++;
    }
    free(b.fhash);
    free(b.shash);
    if (rc < 0) cpu_report_free(out);
    return rc;
}
