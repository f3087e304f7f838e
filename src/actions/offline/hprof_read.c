/* hprof_read: HPROF 1.0.2 into compact arrays. One pass over the records collects objects, classes, roots and
 * strings; classes are then resolved (names, superclasses, where their reference fields lie), objects sorted by
 * id, and sizes computed with the JVM's layout, inferred from the addresses themselves. */
#include "hprof_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/big_alloc.h"
#include "util/bytes.h"
#include "util/grow.h"

const char *const hprof_root_names[ROOT_KINDS] = {
    "unknown", "JNI global", "JNI local", "Java frame", "native stack", "system class",
    "thread block", "busy monitor", "thread", "VM internal",
};

/* HotSpot on 64 bits: compressed oops and class pointers by default (heaps under 32 GiB), -XX:-UseCompressedOops
 * keeps compressed class pointers, and -XX:-UseCompressedClassPointers drops both. */
const struct hprof_layout hprof_layouts[HPROF_LAYOUTS] = {
    {12, 16, 4, "compressed oops", 0, 0},
    {12, 16, 8, "uncompressed oops, compressed class pointers", 0, 0},
    {16, 24, 8, "uncompressed oops and class pointers", 0, 0},
    {8, 12, 4, "32-bit", 0, 0}, /* 4-byte ids: 8-byte headers, 4-byte references, 12-byte array headers */
};

/* Top-level record and heap sub-record tags. */
enum {
    TAG_STRING = 0x01, TAG_LOAD_CLASS = 0x02, TAG_HEAP_DUMP = 0x0c, TAG_HEAP_DUMP_SEGMENT = 0x1c,
    SUB_ROOT_UNKNOWN = 0xff, SUB_ROOT_JNI_GLOBAL = 0x01, SUB_ROOT_JNI_LOCAL = 0x02, SUB_ROOT_JAVA_FRAME = 0x03,
    SUB_ROOT_NATIVE_STACK = 0x04, SUB_ROOT_STICKY_CLASS = 0x05, SUB_ROOT_THREAD_BLOCK = 0x06,
    SUB_ROOT_MONITOR_USED = 0x07, SUB_ROOT_THREAD_OBJECT = 0x08, SUB_CLASS_DUMP = 0x20, SUB_INSTANCE_DUMP = 0x21,
    SUB_OBJ_ARRAY_DUMP = 0x22, SUB_PRIM_ARRAY_DUMP = 0x23,
    /* Android's additions (hprof-conv writes them away, some tools keep them) */
    SUB_ROOT_INTERNED_STRING = 0x89, SUB_ROOT_FINALIZING = 0x8a, SUB_ROOT_DEBUGGER = 0x8b,
    SUB_ROOT_REFERENCE_CLEANUP = 0x8c, SUB_ROOT_VM_INTERNAL = 0x8d, SUB_ROOT_JNI_MONITOR = 0x8e,
    SUB_UNREACHABLE = 0x90, SUB_PRIM_ARRAY_NODATA = 0xc3, SUB_HEAP_DUMP_INFO = 0xfe,
};

/* A reading position inside one record, with what to say when the bytes run out. */
struct cursor {
    const unsigned char *p, *end, *base;
    unsigned id_size;
    const char *what;
    uint64_t what_off;
    char *err;
    size_t errlen;
};

static int fail(struct cursor *c, const char *why)
{
    snprintf(c->err, c->errlen, "%s at offset %llu (in %s at offset %llu)", why, (unsigned long long)(c->p - c->base),
             c->what, (unsigned long long)c->what_off);
    return -1;
}

static int need(struct cursor *c, uint64_t n)
{
    return (uint64_t)(c->end - c->p) >= n ? 0 : fail(c, "truncated record");
}

static uint64_t take(struct cursor *c, unsigned n)
{
    uint64_t v = bytes_be(c->p, n);
    c->p += n;
    return v;
}

static uint64_t take_id(struct cursor *c) { return take(c, c->id_size); }

unsigned hprof_type_size(const struct hprof *h, unsigned type)
{
    switch (type) {
    case HPROF_OBJECT: return h->id_size;
    case HPROF_BOOLEAN: case HPROF_BYTE: return 1;
    case HPROF_CHAR: case HPROF_SHORT: return 2;
    case HPROF_FLOAT: case HPROF_INT: return 4;
    case HPROF_DOUBLE: case HPROF_LONG: return 8;
    default: return 0;
    }
}

uint64_t hprof_id_at(const struct hprof *h, const unsigned char *p) { return bytes_be(p, h->id_size); }

/* Ids are 8-aligned addresses: Fibonacci hashing of the rest spreads them over a power-of-two table. */
static uint64_t id_hash(uint64_t id) { return (id >> 3) * 0x9e3779b97f4a7c15ull; }

/* What the pass collects before classes and ids are resolved. */
/* counts_only: per class id (an array type for primitive arrays), the count, and for arrays their bytes under
 * each known layout, so the layout may be chosen after the pass. */
struct tally {
    uint64_t key, count, bytes[HPROF_LAYOUTS];
    uint32_t ord; /* its number, in the order first seen: what obj_class holds until classes are resolved */
    uint8_t kind;
    uint8_t used;
};
#define CLASS_OBJECT_ORD UINT32_MAX /* obj_class of a class object during the pass */

struct pending {
    int counts_only;
    struct { uint64_t key; uint8_t kind; } *ords; size_t nords, ords_cap; /* by tally number */
    struct tally *tally; size_t tally_cap, ntally; /* open addressing by key */
    size_t last;        /* the tally used last: objects of one class come in runs */
    struct { uint64_t obj; uint8_t kind; uint32_t serial; } *roots; size_t nroots, roots_cap;
    struct { uint64_t id, name; } *names; size_t nnames, names_cap; /* LOAD CLASS: class id -> name string */
    size_t classes_cap, strings_cap;
};

static struct tally *tally_find(struct pending *pd, uint64_t key, uint8_t kind)
{
    if (pd->tally_cap && pd->tally[pd->last].used && pd->tally[pd->last].key == key) return &pd->tally[pd->last];
    if (2 * (pd->ntally + 1) > pd->tally_cap) { /* rehash into twice the room */
        size_t cap = pd->tally_cap ? 2 * pd->tally_cap : 1024;
        struct tally *t = calloc(cap, sizeof *t);
        if (!t) return NULL;
        for (size_t i = 0; i < pd->tally_cap; i++) {
            if (!pd->tally[i].used) continue;
            size_t s = id_hash(pd->tally[i].key) & (cap - 1);
            while (t[s].used) s = (s + 1) & (cap - 1);
            t[s] = pd->tally[i];
        }
        free(pd->tally);
        pd->tally = t;
        pd->tally_cap = cap;
    }
    size_t s = id_hash(key) & (pd->tally_cap - 1);
    while (pd->tally[s].used && pd->tally[s].key != key) s = (s + 1) & (pd->tally_cap - 1);
    if (!pd->tally[s].used) {
        if (GROW(pd->ords, pd->ords_cap, pd->nords, 1024) < 0) return NULL;
        pd->ords[pd->nords].key = key;
        pd->ords[pd->nords].kind = kind;
        pd->tally[s].ord = (uint32_t)pd->nords++;
        pd->tally[s].used = 1;
        pd->tally[s].key = key;
        pd->tally[s].kind = kind;
        pd->ntally++;
    }
    pd->last = s;
    return &pd->tally[s];
}

static uint64_t align8(uint64_t v) { return (v + 7) & ~(uint64_t)7; }

static int add_object(struct hprof *h, struct pending *pd, uint64_t id, uint64_t off, uint8_t kind,
                      uint64_t class_id, uint64_t count)
{
    size_t n = h->nobjects;
    h->objects_seen++;
    struct tally *t = NULL;
    if (kind != HPROF_OBJ_CLASS) {
        if (!(t = tally_find(pd, class_id, kind))) return -ENOMEM;
        t->count++;
        if (pd->counts_only && kind != HPROF_OBJ_INSTANCE)
            for (int l = 0; l < HPROF_LAYOUTS; l++) {
                unsigned elem = kind == HPROF_OBJ_ARRAY ? hprof_layouts[l].ref : hprof_type_size(h, (unsigned)class_id);
                t->bytes[l] += align8(hprof_layouts[l].array_header + count * elem);
            }
    }
    if (pd->counts_only && n == h->obj_cap) return 0; /* the sample the layout is inferred from is full */
    if (n == h->obj_cap || n == UINT32_MAX - 1) return -EOVERFLOW;
    h->obj_id[n] = id;
    h->obj_off[n] = off;
    h->obj_kind[n] = kind;
    h->obj_shallow8[n] = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count; /* the element count until sizes are known */
    h->obj_class[n] = t ? t->ord : CLASS_OBJECT_ORD;
    h->nobjects++;
    return 0;
}

static int add_root(struct pending *pd, uint64_t obj, uint8_t kind, uint32_t serial)
{
    if (GROW(pd->roots, pd->roots_cap, pd->nroots, 1024) < 0) return -ENOMEM;
    pd->roots[pd->nroots].obj = obj;
    pd->roots[pd->nroots].kind = kind;
    pd->roots[pd->nroots].serial = serial;
    pd->nroots++;
    return 0;
}

/* Skips n values of the given type; -1 on an unknown type. */
static int skip_value(struct cursor *c, const struct hprof *h, unsigned type)
{
    unsigned sz = hprof_type_size(h, type);
    if (!sz) return fail(c, "unknown basic type");
    if (need(c, sz) < 0) return -1;
    c->p += sz;
    return 0;
}

/* CLASS DUMP: the class's ids, its constant pool (skipped), its statics and its field descriptors (kept as
 * offsets: they are read again when classes are resolved and when an object's fields are shown). */
static int read_class_dump(struct hprof *h, struct pending *pd, struct cursor *c, uint64_t rec_off)
{
    unsigned id = c->id_size;
    if (need(c, 7 * id + 8 + 2) < 0) return -1;
    struct hprof_class k;
    memset(&k, 0, sizeof k);
    k.id = take_id(c);
    take(c, 4);
    k.super_id = take_id(c);
    k.loader_id = take_id(c);
    c->p += 4 * id; /* signers, protection domain, two reserved */
    k.instance_bytes = (uint32_t)take(c, 4);
    unsigned ncp = (unsigned)take(c, 2);
    for (unsigned i = 0; i < ncp; i++) {
        if (need(c, 3) < 0) return -1;
        c->p += 2;
        if (skip_value(c, h, (unsigned)take(c, 1)) < 0) return -1;
    }
    if (need(c, 2) < 0) return -1;
    k.nstatics = (uint16_t)take(c, 2);
    k.statics_off = (uint64_t)(c->p - c->base);
    for (unsigned i = 0; i < k.nstatics; i++) {
        if (need(c, id + 1) < 0) return -1;
        c->p += id;
        if (skip_value(c, h, (unsigned)take(c, 1)) < 0) return -1;
    }
    if (need(c, 2) < 0) return -1;
    k.nfields = (uint16_t)take(c, 2);
    k.fields_off = (uint64_t)(c->p - c->base);
    for (unsigned i = 0; i < k.nfields; i++) {
        if (need(c, id + 1) < 0) return -1;
        c->p += id;
        if (!hprof_type_size(h, (unsigned)take(c, 1))) return fail(c, "unknown field type");
    }
    k.super = k.object = HPROF_NONE;
    if (GROW(h->classes, pd->classes_cap, h->nclasses, 1024) < 0) return -ENOMEM;
    h->classes[h->nclasses++] = k;
    return add_object(h, pd, k.id, rec_off, HPROF_OBJ_CLASS, 0, 0);
}

/* One heap sub-record at c->p. */
static int read_sub_record(struct hprof *h, struct pending *pd, struct cursor *c)
{
    unsigned id = c->id_size;
    uint64_t off = (uint64_t)(c->p - c->base);
    unsigned tag = (unsigned)take(c, 1);
    uint64_t body = off + 1, obj;
    c->what = "a heap sub-record";
    c->what_off = off;
    switch (tag) {
    case SUB_ROOT_UNKNOWN: case SUB_ROOT_STICKY_CLASS: case SUB_ROOT_MONITOR_USED:
    case SUB_ROOT_INTERNED_STRING: case SUB_ROOT_FINALIZING: case SUB_ROOT_DEBUGGER:
    case SUB_ROOT_REFERENCE_CLEANUP: case SUB_ROOT_VM_INTERNAL: case SUB_UNREACHABLE:
        if (need(c, id) < 0) return -1;
        obj = take_id(c);
        if (tag == SUB_UNREACHABLE) return 0;
        return add_root(pd, obj, tag == SUB_ROOT_UNKNOWN ? ROOT_UNKNOWN : tag == SUB_ROOT_STICKY_CLASS ? ROOT_STICKY_CLASS
                                 : tag == SUB_ROOT_MONITOR_USED ? ROOT_MONITOR_USED : ROOT_OTHER, 0);
    case SUB_ROOT_JNI_GLOBAL:
        if (need(c, 2 * id) < 0) return -1;
        obj = take_id(c);
        c->p += id;
        return add_root(pd, obj, ROOT_JNI_GLOBAL, 0);
    case SUB_ROOT_JNI_LOCAL: case SUB_ROOT_JAVA_FRAME: case SUB_ROOT_THREAD_OBJECT: case SUB_ROOT_JNI_MONITOR: {
        if (need(c, id + 8) < 0) return -1;
        obj = take_id(c);
        uint32_t serial = (uint32_t)take(c, 4);
        c->p += 4;
        return add_root(pd, obj, tag == SUB_ROOT_JNI_LOCAL ? ROOT_JNI_LOCAL : tag == SUB_ROOT_JAVA_FRAME ? ROOT_JAVA_FRAME
                                 : tag == SUB_ROOT_THREAD_OBJECT ? ROOT_THREAD_OBJECT : ROOT_OTHER, serial);
    }
    case SUB_ROOT_NATIVE_STACK: case SUB_ROOT_THREAD_BLOCK: {
        if (need(c, id + 4) < 0) return -1;
        obj = take_id(c);
        uint32_t serial = (uint32_t)take(c, 4);
        return add_root(pd, obj, tag == SUB_ROOT_NATIVE_STACK ? ROOT_NATIVE_STACK : ROOT_THREAD_BLOCK, serial);
    }
    case SUB_CLASS_DUMP:
        c->what = "a CLASS DUMP";
        return read_class_dump(h, pd, c, body);
    case SUB_INSTANCE_DUMP: {
        c->what = "an INSTANCE DUMP";
        if (need(c, 2 * id + 8) < 0) return -1;
        obj = take_id(c);
        c->p += 4;
        uint64_t klass = take_id(c);
        uint64_t n = take(c, 4);
        if (need(c, n) < 0) return -1;
        c->p += n;
        return add_object(h, pd, obj, body, HPROF_OBJ_INSTANCE, klass, 0);
    }
    case SUB_OBJ_ARRAY_DUMP: {
        c->what = "an OBJECT ARRAY DUMP";
        if (need(c, 2 * id + 8) < 0) return -1;
        obj = take_id(c);
        c->p += 4;
        uint64_t n = take(c, 4);
        uint64_t klass = take_id(c);
        if (need(c, n * id) < 0) return -1;
        c->p += n * id;
        return add_object(h, pd, obj, body, HPROF_OBJ_ARRAY, klass, n);
    }
    case SUB_PRIM_ARRAY_DUMP: case SUB_PRIM_ARRAY_NODATA: {
        c->what = "a PRIMITIVE ARRAY DUMP";
        if (need(c, id + 9) < 0) return -1;
        obj = take_id(c);
        c->p += 4;
        uint64_t n = take(c, 4);
        unsigned type = (unsigned)take(c, 1);
        unsigned sz = hprof_type_size(h, type);
        if (!sz || type == HPROF_OBJECT) return fail(c, "unknown primitive array type");
        if (tag == SUB_PRIM_ARRAY_DUMP) {
            if (need(c, n * sz) < 0) return -1;
            c->p += n * sz;
        }
        return add_object(h, pd, obj, body, HPROF_OBJ_PRIM_ARRAY, type, n);
    }
    case SUB_HEAP_DUMP_INFO:
        if (need(c, 4 + id) < 0) return -1;
        c->p += 4 + id;
        return 0;
    default:
        c->p--;
        return fail(c, "unknown heap sub-record tag");
    }
}

static int report_errno(int rc, struct cursor *c)
{
    if (rc == -ENOMEM) snprintf(c->err, c->errlen, "out of memory reading the dump");
    else if (rc == -EOVERFLOW) snprintf(c->err, c->errlen, "more objects than this reader indexes (4 billion)");
    return -1;
}

/* The records, start to end: strings, class names and the heap dump's sub-records; the rest is skipped. */
static int read_records(struct hprof *h, struct pending *pd, struct cursor *c, const struct hprof_read_opts *o)
{
    const unsigned char *start = c->p;
    size_t released = 0;
    while (c->p < c->end) {
        uint64_t off = (uint64_t)(c->p - c->base);
        c->what = "a record header";
        c->what_off = off;
        if (need(c, 9) < 0) return -1;
        unsigned tag = (unsigned)take(c, 1);
        c->p += 4;
        uint64_t len = take(c, 4);
        if (need(c, len) < 0) return -1;
        struct cursor r = *c;
        r.end = c->p + len;
        r.what_off = off;
        int rc = 0;
        if (tag == TAG_STRING) {
            r.what = "a STRING record";
            if (need(&r, r.id_size) < 0) return -1;
            if (GROW(h->strings, pd->strings_cap, h->nstrings, 4096) < 0) return report_errno(-ENOMEM, c);
            struct hprof_string *s = &h->strings[h->nstrings++];
            s->id = take_id(&r);
            s->off = (uint64_t)(r.p - r.base);
            s->len = (uint32_t)(len - r.id_size);
        } else if (tag == TAG_LOAD_CLASS) {
            r.what = "a LOAD CLASS record";
            if (need(&r, 8 + 2 * r.id_size) < 0) return -1;
            if (GROW(pd->names, pd->names_cap, pd->nnames, 1024) < 0) return report_errno(-ENOMEM, c);
            r.p += 4;
            pd->names[pd->nnames].id = take_id(&r);
            r.p += 4;
            pd->names[pd->nnames++].name = take_id(&r);
        } else if (tag == TAG_HEAP_DUMP || tag == TAG_HEAP_DUMP_SEGMENT) {
            while (r.p < r.end && rc == 0) rc = read_sub_record(h, pd, &r);
            if (rc == -1) return -1;
            if (rc < 0) return report_errno(rc, c);
        }
        c->p += len;
        size_t done = (size_t)(c->p - start);
        if (done - released >= (16u << 20)) { /* keep only what is still read resident */
            hprof_file_release(&h->file, 0, (size_t)(c->p - c->base) - (1u << 20));
            released = done;
            if (o->progress && o->progress(o->progress_arg, (uint64_t)(c->p - c->base), h->file.size)) return -2;
        }
    }
    return 0;
}

static int cmp_class_id(const void *a, const void *b)
{
    uint64_t x = ((const struct hprof_class *)a)->id, y = ((const struct hprof_class *)b)->id;
    return x < y ? -1 : x > y;
}

static int cmp_string_id(const void *a, const void *b)
{
    uint64_t x = ((const struct hprof_string *)a)->id, y = ((const struct hprof_string *)b)->id;
    return x < y ? -1 : x > y;
}

static int cmp_name_id(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

const char *hprof_string(const struct hprof *h, uint64_t id, uint32_t *len)
{
    size_t lo = 0, hi = h->nstrings;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->strings[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    if (lo == h->nstrings || h->strings[lo].id != id) return NULL;
    *len = h->strings[lo].len;
    return (const char *)h->file.bytes + h->strings[lo].off;
}

static uint32_t class_find(const struct hprof *h, uint64_t id)
{
    size_t lo = 0, hi = h->nreal_classes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->classes[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < h->nreal_classes && h->classes[lo].id == id && id ? (uint32_t)lo : HPROF_NONE;
}

/* A JVM class name as Java writes it: java/util/HashMap$Node -> java.util.HashMap$Node, [[I -> int[][],
 * [Ljava/lang/String; -> java.lang.String[]. Control bytes stay for the renderers to sanitize. */
char *hprof_java_name(const char *s, uint32_t n)
{
    unsigned dims = 0;
    while (dims < n && s[dims] == '[') dims++;
    const char *base = s + dims;
    uint32_t blen = n - dims;
    static const struct { char code; const char *name; } prims[] = {
        {'Z', "boolean"}, {'C', "char"}, {'F', "float"}, {'D', "double"}, {'B', "byte"},
        {'S', "short"}, {'I', "int"}, {'J', "long"},
    };
    if (dims && blen >= 2 && base[0] == 'L' && base[blen - 1] == ';') {
        base++;
        blen -= 2;
    } else if (dims && blen == 1) {
        for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
            if (prims[i].code == base[0]) {
                base = prims[i].name;
                blen = (uint32_t)strlen(base);
            }
    }
    char *out = malloc((size_t)blen + 2 * dims + 1);
    if (!out) return NULL;
    for (uint32_t i = 0; i < blen; i++) out[i] = base[i] == '/' ? '.' : base[i];
    for (unsigned d = 0; d < dims; d++) memcpy(out + blen + 2 * d, "[]", 2);
    out[blen + 2 * dims] = 0;
    return out;
}

static int add_synthetic_class(struct hprof *h, struct pending *pd, const char *name, uint8_t kind, uint8_t type)
{
    if (GROW(h->classes, pd->classes_cap, h->nclasses, 16) < 0) return -ENOMEM;
    struct hprof_class *k = &h->classes[h->nclasses];
    memset(k, 0, sizeof *k);
    k->super = k->object = HPROF_NONE;
    k->kind = kind;
    k->elem_type = type;
    if (!(k->name = strdup(name))) return -ENOMEM;
    h->nclasses++;
    return 0;
}

/* The reference fields of an instance of k, at their offsets in its data: the class's own fields come first, then
 * its superclass's, and so on. Reference.referent is left out: what only a weak, soft or phantom reference holds is
 * not kept alive by it. */
static int class_ref_fields(struct hprof *h, uint32_t ki, size_t *cap)
{
    struct hprof_class *k = &h->classes[ki];
    k->ref_first = (uint32_t)h->nref_offs;
    uint32_t off = 0;
    unsigned depth = 0;
    /* off stops at the instance's size: a hostile superclass cycle costs no more than the fields that fit */
    for (uint32_t s = ki; s != HPROF_NONE && depth++ <= h->nclasses && off < k->instance_bytes; s = h->classes[s].super) {
        const struct hprof_class *c = &h->classes[s];
        if (c->name && strcmp(c->name, "java.lang.ref.Reference") == 0) k->is_reference = 1;
        const unsigned char *p = h->file.bytes + c->fields_off;
        for (unsigned i = 0; c->fields_off && i < c->nfields; i++, p += h->id_size + 1) {
            unsigned type = p[h->id_size];
            if (type == HPROF_OBJECT) {
                k->nrefs_all++;
                uint32_t len;
                const char *fname = hprof_string(h, hprof_id_at(h, p), &len);
                int referent = c->name && strcmp(c->name, "java.lang.ref.Reference") == 0 && fname &&
                               len == 8 && memcmp(fname, "referent", 8) == 0;
                if (!referent && off + h->id_size <= k->instance_bytes) {
                    if (GROW(h->ref_offs, *cap, h->nref_offs, 1024) < 0) return -ENOMEM;
                    h->ref_offs[h->nref_offs++] = off;
                }
            }
            off += hprof_type_size(h, type);
        }
    }
    k->ref_count = (uint32_t)(h->nref_offs - k->ref_first);
    return 0;
}

/* Classes: sorted by id, named through LOAD CLASS, linked to their superclass and their class object, and their
 * reference fields laid out; then the synthetic classes of primitive arrays and of objects whose class is missing. */
static int resolve_classes(struct hprof *h, struct pending *pd)
{
    if (h->nclasses) qsort(h->classes, h->nclasses, sizeof *h->classes, cmp_class_id);
    h->nreal_classes = h->nclasses;
    if (pd->nnames) qsort(pd->names, pd->nnames, sizeof *pd->names, cmp_name_id);
    if (h->nstrings) qsort(h->strings, h->nstrings, sizeof *h->strings, cmp_string_id);
    size_t ni = 0;
    for (uint32_t i = 0; i < h->nclasses; i++) {
        struct hprof_class *k = &h->classes[i];
        while (ni < pd->nnames && pd->names[ni].id < k->id) ni++;
        uint32_t len = 0;
        const char *s = ni < pd->nnames && pd->names[ni].id == k->id ? hprof_string(h, pd->names[ni].name, &len) : NULL;
        char anon[40];
        if (!s) {
            snprintf(anon, sizeof anon, "<class 0x%llx>", (unsigned long long)k->id);
            s = anon;
            len = (uint32_t)strlen(anon);
        }
        if (!(k->name = hprof_java_name(s, len))) return -ENOMEM;
        k->kind = s[0] == '[' ? HPROF_CLASS_OBJ_ARRAY : HPROF_CLASS_INSTANCE;
        k->super = class_find(h, k->super_id);
    }
    size_t cap = 0;
    for (uint32_t i = 0; i < h->nclasses; i++)
        if (h->classes[i].kind == HPROF_CLASS_INSTANCE && class_ref_fields(h, i, &cap) < 0) return -ENOMEM;
    h->class_object = HPROF_NONE;
    for (uint32_t i = 0; i < h->nclasses; i++)
        if (strcmp(h->classes[i].name, "java.lang.Class") == 0) h->class_object = i;
    uint32_t real = h->nclasses;
    static const struct { uint8_t type; const char *name; } prims[] = {
        {HPROF_BOOLEAN, "boolean[]"}, {HPROF_CHAR, "char[]"}, {HPROF_FLOAT, "float[]"}, {HPROF_DOUBLE, "double[]"},
        {HPROF_BYTE, "byte[]"}, {HPROF_SHORT, "short[]"}, {HPROF_INT, "int[]"}, {HPROF_LONG, "long[]"},
    };
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
        if (add_synthetic_class(h, pd, prims[i].name, HPROF_CLASS_PRIM_ARRAY, prims[i].type) < 0) return -ENOMEM;
    if (add_synthetic_class(h, pd, "<unknown class>", HPROF_CLASS_INSTANCE, 0) < 0) return -ENOMEM;
    if (h->class_object == HPROF_NONE) {
        if (add_synthetic_class(h, pd, "java.lang.Class", HPROF_CLASS_INSTANCE, 0) < 0) return -ENOMEM;
        h->class_object = h->nclasses - 1;
    }
    uint32_t unknown = real + 8;

    /* each object's class index: obj_class holds the number of its class id's tally until now */
    uint32_t *ordmap = malloc((pd->nords ? pd->nords : 1) * sizeof *ordmap);
    if (!ordmap) return -ENOMEM;
    for (size_t o = 0; o < pd->nords; o++) {
        uint32_t k = unknown;
        if (pd->ords[o].kind == HPROF_OBJ_PRIM_ARRAY) {
            for (uint32_t j = 0; j < 8; j++)
                if (h->classes[real + j].elem_type == pd->ords[o].key) k = real + j;
        } else if ((k = class_find(h, pd->ords[o].key)) == HPROF_NONE) {
            k = unknown;
        }
        ordmap[o] = k;
    }
    for (uint32_t i = 0; i < h->nobjects; i++)
        h->obj_class[i] = h->obj_class[i] == CLASS_OBJECT_ORD ? h->class_object : ordmap[h->obj_class[i]];
    free(ordmap);
    return 0;
}

/* Sizes in the JVM under a layout: an instance of class k, an array, the class object of class ki (java.lang.
 * Class's own fields, then the statics, as HotSpot's mirrors hold them). */
static uint64_t instance_size(const struct hprof *h, const struct hprof_layout *l, uint32_t k)
{
    const struct hprof_class *c = &h->classes[k];
    uint64_t refs = (uint64_t)c->nrefs_all * (h->id_size - l->ref);
    uint64_t fields = c->instance_bytes > refs ? c->instance_bytes - refs : 0;
    return align8(l->header + fields);
}

static uint64_t mirror_size(const struct hprof *h, const struct hprof_layout *l, uint32_t ki)
{
    uint64_t own = instance_size(h, l, h->class_object) - l->header; /* rounded: a close enough bound */
    return align8(l->header + own + (ki != HPROF_NONE ? h->classes[ki].statics_bytes : 0));
}

static uint64_t object_size(const struct hprof *h, const struct hprof_layout *l, uint32_t i, uint64_t count)
{
    const struct hprof_class *k = &h->classes[h->obj_class[i]];
    switch (h->obj_kind[i]) {
    case HPROF_OBJ_INSTANCE: return instance_size(h, l, h->obj_class[i]);
    case HPROF_OBJ_ARRAY: return align8(l->array_header + count * l->ref);
    case HPROF_OBJ_PRIM_ARRAY: return align8(l->array_header + count * hprof_type_size(h, k->elem_type));
    default: return mirror_size(h, l, hprof_class_of_object(h, i));
    }
}

/* The layout that explains most distances between objects written one after the other: HotSpot walks its heap
 * in address order, so where two ids are close, the second starts where the first ends. */
static void infer_layout(struct hprof *h)
{
    struct hprof_layout best;
    unsigned tried = 0, match[3] = {0, 0, 0};
    for (uint32_t i = 0; i + 1 < h->nobjects && tried < 200000; i++) {
        if (h->obj_kind[i] == HPROF_OBJ_CLASS || h->obj_kind[i + 1] == HPROF_OBJ_CLASS) continue;
        uint64_t d = h->obj_id[i + 1] - h->obj_id[i];
        if (h->obj_id[i + 1] <= h->obj_id[i] || d > 4096) continue;
        tried++;
        for (int l = 0; l < 3; l++)
            if (object_size(h, &hprof_layouts[l], i, h->obj_shallow8[i]) == d) match[l]++;
    }
    int pick = 0;
    for (int l = 1; l < 3; l++)
        if (match[l] > match[pick]) pick = l;
    best = hprof_layouts[h->id_size == 4 ? 3 : pick];
    best.matched = match[pick];
    best.tried = tried;
    h->layout = best;
}

/* The statics' bytes in the JVM's layout, from the CLASS DUMP. */
struct statics_sum {
    const struct hprof *h;
    uint32_t bytes;
};

static int add_static(void *arg, const struct hprof_field *f)
{
    struct statics_sum *ss = arg;
    ss->bytes += f->type == HPROF_OBJECT ? ss->h->layout.ref : hprof_type_size(ss->h, f->type);
    return 0;
}

static void statics_sizes(struct hprof *h)
{
    for (uint32_t i = 0; i < h->nclasses; i++) {
        struct statics_sum ss = {h, 0};
        hprof_class_statics(h, i, add_static, &ss);
        h->classes[i].statics_bytes = ss.bytes;
    }
}

/* The id lookup, made once every object is known; an id written twice is an error naming both offsets. */

static int build_hash(struct hprof *h, char *err, size_t errlen)
{
    enum { STEP = 256 };
    uint64_t slots = 16, slot[STEP];
    while (slots < (uint64_t)h->nobjects + h->nobjects / 2) slots <<= 1; /* load 2/3 at most */
    if (!(h->hash = big_alloc(slots * sizeof *h->hash))) return -ENOMEM;
    h->hash_mask = slots - 1;
    for (uint32_t base = 0; base < h->nobjects; base += STEP) { /* slots fetched ahead, a batch at a time */
        uint32_t m = h->nobjects - base < STEP ? h->nobjects - base : STEP;
        for (uint32_t j = 0; j < m; j++) {
            slot[j] = id_hash(h->obj_id[base + j]) & h->hash_mask;
            __builtin_prefetch(&h->hash[slot[j]], 1);
        }
        for (uint32_t j = 0; j < m; j++) {
            uint32_t i = base + j;
            uint64_t s = slot[j];
            for (; h->hash[s]; s = (s + 1) & h->hash_mask)
                if (h->obj_id[h->hash[s] - 1] == h->obj_id[i]) {
                    snprintf(err, errlen, "object 0x%llx is written twice (at offsets %llu and %llu)",
                             (unsigned long long)h->obj_id[i], (unsigned long long)h->obj_off[h->hash[s] - 1],
                             (unsigned long long)h->obj_off[i]);
                    return -EINVAL;
                }
            h->hash[s] = i + 1;
        }
    }
    return 0;
}

uint32_t hprof_find(const struct hprof *h, uint64_t id)
{
    if (!h->hash) return HPROF_NONE;
    for (uint64_t s = id_hash(id) & h->hash_mask; h->hash[s]; s = (s + 1) & h->hash_mask)
        if (h->obj_id[h->hash[s] - 1] == id) return h->hash[s] - 1;
    return HPROF_NONE;
}

void hprof_find_many(const struct hprof *h, const uint64_t *ids, uint32_t *out, size_t n)
{
    enum { STEP = 256 };
    uint64_t slot[STEP];
    for (size_t base = 0; base < n; base += STEP) {
        size_t m = n - base < STEP ? n - base : STEP;
        const uint64_t *id = ids + base;
        for (size_t i = 0; i < m; i++) {
            slot[i] = id_hash(id[i]) & h->hash_mask;
            __builtin_prefetch(&h->hash[slot[i]]);
        }
        for (size_t i = 0; i < m; i++) {
            uint32_t c = h->hash[slot[i]];
            if (c) __builtin_prefetch(&h->obj_id[c - 1]);
        }
        for (size_t i = 0; i < m; i++) {
            uint32_t found = HPROF_NONE;
            for (uint64_t s = slot[i]; h->hash[s]; s = (s + 1) & h->hash_mask)
                if (h->obj_id[h->hash[s] - 1] == id[i]) {
                    found = h->hash[s] - 1;
                    break;
                }
            out[base + i] = found;
        }
    }
}

uint32_t hprof_class_of_object(const struct hprof *h, uint32_t obj)
{
    return h->obj_kind[obj] == HPROF_OBJ_CLASS ? class_find(h, h->obj_id[obj]) : HPROF_NONE;
}

const unsigned char *hprof_instance_data(const struct hprof *h, uint32_t obj, uint32_t *len)
{
    if (h->obj_kind[obj] != HPROF_OBJ_INSTANCE) return NULL;
    const unsigned char *p = h->file.bytes + h->obj_off[obj] + 2 * h->id_size + 4;
    *len = (uint32_t)bytes_be(p, 4);
    return p + 4;
}

const unsigned char *hprof_array_elems(const struct hprof *h, uint32_t obj, uint32_t *count)
{
    if (h->obj_kind[obj] != HPROF_OBJ_ARRAY) return NULL;
    const unsigned char *p = h->file.bytes + h->obj_off[obj] + h->id_size + 4;
    *count = (uint32_t)bytes_be(p, 4);
    return p + 4 + h->id_size;
}

int hprof_instance_fields(const struct hprof *h, uint32_t obj, int (*fn)(void *arg, const struct hprof_field *f),
                          void *arg)
{
    uint32_t len, off = 0;
    const unsigned char *d = hprof_instance_data(h, obj, &len);
    if (!d) return 0;
    unsigned depth = 0;
    for (uint32_t s = h->obj_class[obj]; s != HPROF_NONE && depth++ <= h->nclasses; s = h->classes[s].super) {
        const struct hprof_class *c = &h->classes[s];
        const unsigned char *p = h->file.bytes + c->fields_off;
        for (unsigned i = 0; c->fields_off && i < c->nfields; i++, p += h->id_size + 1) {
            struct hprof_field f = {hprof_id_at(h, p), p[h->id_size], d + off, s};
            unsigned sz = hprof_type_size(h, f.type);
            if (off + sz > len) return 0;
            int rc = fn(arg, &f);
            if (rc) return rc;
            off += sz;
        }
    }
    return 0;
}

int hprof_class_statics(const struct hprof *h, uint32_t cls, int (*fn)(void *arg, const struct hprof_field *f),
                        void *arg)
{
    const struct hprof_class *c = &h->classes[cls];
    const unsigned char *p = h->file.bytes + c->statics_off;
    for (unsigned i = 0; c->statics_off && i < c->nstatics; i++) {
        struct hprof_field f = {hprof_id_at(h, p), p[h->id_size], p + h->id_size + 1, cls};
        int rc = fn(arg, &f);
        if (rc) return rc;
        p += h->id_size + 1 + hprof_type_size(h, f.type);
    }
    return 0;
}

const char *hprof_field_name(const struct hprof *h, const struct hprof_field *f, uint32_t *len)
{
    *len = 0;
    return hprof_string(h, f->name_id, len);
}

int hprof_field_is(const struct hprof *h, const struct hprof_field *f, const char *name)
{
    uint32_t len;
    const char *s = hprof_field_name(h, f, &len);
    return s && len == strlen(name) && memcmp(s, name, len) == 0;
}

int64_t hprof_field_int(const struct hprof *h, const struct hprof_field *f)
{
    unsigned sz = hprof_type_size(h, f->type);
    uint64_t v = bytes_be(f->value, sz);
    if (f->type == HPROF_OBJECT || f->type == HPROF_CHAR || f->type == HPROF_BOOLEAN || sz == 8) return (int64_t)v;
    uint64_t sign = (uint64_t)1 << (sz * 8 - 1);
    return (int64_t)((v ^ sign) - sign);
}

/* Roots by object index (those naming no object in the dump are dropped), and thread objects by serial. */
static int resolve_roots(struct hprof *h, struct pending *pd)
{
    h->roots = malloc((pd->nroots ? pd->nroots : 1) * sizeof *h->roots);
    if (!h->roots) return -ENOMEM;
    uint32_t maxserial = 0;
    for (size_t i = 0; i < pd->nroots; i++) {
        uint32_t o = hprof_find(h, pd->roots[i].obj);
        if (o == HPROF_NONE) continue;
        struct hprof_root *r = &h->roots[h->nroots++];
        r->object = o;
        r->kind = pd->roots[i].kind;
        r->thread_serial = pd->roots[i].serial;
        if (r->kind == ROOT_THREAD_OBJECT && r->thread_serial > maxserial && r->thread_serial < (1u << 24))
            maxserial = r->thread_serial;
    }
    h->nthreads = maxserial + 1;
    if (!(h->thread_objects = malloc((size_t)h->nthreads * sizeof *h->thread_objects))) return -ENOMEM;
    for (uint32_t i = 0; i < h->nthreads; i++) h->thread_objects[i] = HPROF_NONE;
    for (uint32_t i = 0; i < h->nroots; i++)
        if (h->roots[i].kind == ROOT_THREAD_OBJECT && h->roots[i].thread_serial < h->nthreads)
            h->thread_objects[h->roots[i].thread_serial] = h->roots[i].object;
    for (uint32_t i = 0; i < h->nclasses; i++)
        if (h->classes[i].id) h->classes[i].object = hprof_find(h, h->classes[i].id);
    return 0;
}

static int read_header(struct hprof *h, struct cursor *c)
{
    c->what = "the file header";
    c->what_off = 0;
    const unsigned char *nul = memchr(c->p, 0, (size_t)(c->end - c->p) < 64 ? (size_t)(c->end - c->p) : 64);
    if (!nul || (strcmp((const char *)c->p, "JAVA PROFILE 1.0.2") != 0 &&
                 strcmp((const char *)c->p, "JAVA PROFILE 1.0.1") != 0)) {
        snprintf(c->err, c->errlen, "not an HPROF heap dump (no \"JAVA PROFILE 1.0.x\" header)");
        return -1;
    }
    c->p = nul + 1;
    if (need(c, 12) < 0) return -1;
    h->id_size = (unsigned)take(c, 4);
    if (h->id_size != 4 && h->id_size != 8) {
        snprintf(c->err, c->errlen, "identifier size %u at offset %llu: HPROF uses 4 or 8", h->id_size,
                 (unsigned long long)(c->p - c->base - 4));
        return -1;
    }
    c->id_size = h->id_size;
    h->timestamp_ms = take(c, 8);
    return 0;
}

/* Per class: instances and bytes, from the objects indexed, or (counts_only) from the tallies. */
static int class_totals(struct hprof *h, struct pending *pd)
{
    h->class_count = calloc(h->nclasses, sizeof *h->class_count);
    h->class_shallow = calloc(h->nclasses, sizeof *h->class_shallow);
    if (!h->class_count || !h->class_shallow) return -ENOMEM;
    if (!pd->counts_only) {
        for (uint32_t i = 0; i < h->nobjects; i++) {
            h->class_count[h->obj_class[i]]++;
            h->class_shallow[h->obj_class[i]] += hprof_shallow(h, i);
        }
        return 0;
    }
    int l = 0; /* the tallies' column of the layout chosen */
    for (int i = 0; i < HPROF_LAYOUTS; i++)
        if (hprof_layouts[i].header == h->layout.header && hprof_layouts[i].ref == h->layout.ref &&
            hprof_layouts[i].array_header == h->layout.array_header)
            l = i;
    uint32_t unknown = h->nreal_classes + 8;
    for (size_t i = 0; i < pd->tally_cap; i++) {
        const struct tally *t = &pd->tally[i];
        if (!t->used) continue;
        uint32_t k = t->kind == HPROF_OBJ_PRIM_ARRAY ? unknown : class_find(h, t->key);
        for (uint32_t j = 0; t->kind == HPROF_OBJ_PRIM_ARRAY && j < 8; j++)
            if (h->classes[h->nreal_classes + j].elem_type == t->key) k = h->nreal_classes + j;
        if (k == HPROF_NONE) k = unknown;
        h->class_count[k] += t->count;
        h->class_shallow[k] += t->kind == HPROF_OBJ_INSTANCE ? t->count * instance_size(h, &h->layout, k) : t->bytes[l];
    }
    for (uint32_t k = 0; k < h->nreal_classes; k++) { /* class objects */
        h->class_count[h->class_object]++;
        h->class_shallow[h->class_object] += mirror_size(h, &h->layout, k);
    }
    return 0;
}

static void pending_free(struct pending *pd)
{
    free(pd->tally);
    free(pd->ords);
    free(pd->roots);
    free(pd->names);
}

int hprof_read(struct hprof *h, const char *path, const struct hprof_read_opts *o, char *err, size_t errlen)
{
    static const struct hprof_read_opts none;
    if (!o) o = &none;
    memset(h, 0, sizeof *h);
    if (hprof_file_open(&h->file, path, o->tmpdir, err, errlen) < 0) return -1;
    if (!h->file.bytes) {
        snprintf(err, errlen, "%s: empty file", path);
        hprof_free(h);
        return -1;
    }
    struct cursor c = {h->file.bytes, h->file.bytes + h->file.size, h->file.bytes, 0, "", 0, err, errlen};
    struct pending pd;
    memset(&pd, 0, sizeof pd);
    /* the smallest object record (an empty primitive array) is 18 bytes: room for every object the file holds;
     * counts_only keeps the first 256 Ki, for the layout */
    h->obj_cap = h->file.size / 18 + 1;
    pd.counts_only = o->counts_only;
    if (pd.counts_only && h->obj_cap > (1u << 18)) h->obj_cap = 1u << 18;
    h->obj_id = big_alloc(h->obj_cap * sizeof *h->obj_id);
    h->obj_off = big_alloc(h->obj_cap * sizeof *h->obj_off);
    h->obj_kind = big_alloc(h->obj_cap * sizeof *h->obj_kind);
    h->obj_shallow8 = big_alloc(h->obj_cap * sizeof *h->obj_shallow8);
    h->obj_class = big_alloc(h->obj_cap * sizeof *h->obj_class);
    int rc = h->obj_id && h->obj_off && h->obj_kind && h->obj_shallow8 && h->obj_class ? read_header(h, &c)
                                                                                     : report_errno(-ENOMEM, &c);
    if (rc == 0) rc = read_records(h, &pd, &c, o);
    if (rc == 0) {
        int e = resolve_classes(h, &pd);
        if (e == 0) {
            const struct hprof_layout *l = o->layout;
            if (l) h->layout = *l;
            else infer_layout(h);
            statics_sizes(h);
            for (uint32_t i = 0; i < h->nobjects; i++) {
                uint64_t units = object_size(h, &h->layout, i, h->obj_shallow8[i]) >> 3;
                h->obj_shallow8[i] = units > UINT32_MAX ? UINT32_MAX : (uint32_t)units;
            }
            e = class_totals(h, &pd);
            if (e == 0 && !pd.counts_only) {
                e = build_hash(h, err, errlen);
                if (e == -EINVAL) rc = -1;
            }
        }
        if (e == 0 && !pd.counts_only) e = resolve_roots(h, &pd);
        if (e < 0 && rc == 0) rc = report_errno(e, &c);
    }
    pending_free(&pd);
    if (rc < 0) hprof_free(h);
    return rc;
}

void hprof_free(struct hprof *h)
{
    big_free(h->obj_id, h->obj_cap * sizeof *h->obj_id);
    big_free(h->obj_off, h->obj_cap * sizeof *h->obj_off);
    big_free(h->obj_class, h->obj_cap * sizeof *h->obj_class);
    big_free(h->obj_kind, h->obj_cap * sizeof *h->obj_kind);
    big_free(h->obj_shallow8, h->obj_cap * sizeof *h->obj_shallow8);
    big_free(h->hash, (h->hash_mask + 1) * sizeof *h->hash);
    for (uint32_t i = 0; i < h->nclasses; i++) free(h->classes[i].name);
    free(h->classes);
    free(h->ref_offs);
    free(h->class_count);
    free(h->class_shallow);
    free(h->roots);
    free(h->thread_objects);
    free(h->strings);
    hprof_file_close(&h->file);
    memset(h, 0, sizeof *h);
}
