/* heap_analysis: open a dump (reader, then graph and dominators within a memory budget said up front) and answer
 * from it: histogram, dominators, instances, suspects, fields. Paths are heap_paths.c's. */
#include "heap_analysis.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap_state.h"
#include "util/big_alloc.h"
#include "util/bytes.h"

struct progress_relay {
    const struct heap_analysis_opts *o;
    const char *phase;
};

static int relay(void *arg, uint64_t done, uint64_t total)
{
    struct progress_relay *r = arg;
    return r->o->progress ? r->o->progress(r->o->progress_arg, r->phase, done, total) : 0;
}

static uint64_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "re");
    char line[256];
    unsigned long long kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
    if (f) fclose(f);
    return (uint64_t)kib * 1024;
}

/* What the graph and the dominators will hold at their peak: the rows both ways and the algorithm's arrays. The
 * edge count is bounded by the reference slots the dump has (nulls included). */
static uint64_t graph_estimate(const struct hprof *h)
{
    uint64_t slots = heap_graph_slots(h), nv = (uint64_t)h->nobjects + 1;
    return nv * 8 * 2 + slots * 4 * 2 + nv * (7 * 4 + 8) + nv * (4 + 8);
}

static uint64_t reader_bytes(const struct hprof *h)
{
    size_t per_object = sizeof *h->obj_id + sizeof *h->obj_off + sizeof *h->obj_class + sizeof *h->obj_kind +
                        sizeof *h->obj_shallow8;
    return (uint64_t)h->nobjects * per_object + (h->hash_mask + 1) * sizeof *h->hash + h->nstrings * sizeof *h->strings +
           (uint64_t)h->nclasses * sizeof *h->classes + (uint64_t)h->nroots * sizeof *h->roots;
}

static const struct hprof_layout *layout_named(const char *name)
{
    static const char *const names[] = {"compressed", "uncompressed-class", "uncompressed"};
    for (int i = 0; i < 3; i++)
        if (strcmp(name, names[i]) == 0) return &hprof_layouts[i];
    return NULL;
}

int heap_analysis_open(struct heap_analysis **out, const char *path, const struct heap_analysis_opts *o, char *err,
                       size_t errlen)
{
    static const struct heap_analysis_opts none;
    if (!o) o = &none;
    *out = NULL;
    struct heap_analysis *a = calloc(1, sizeof *a);
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    struct progress_relay r = {o, "reading"};
    struct hprof_read_opts ro = {o->tmpdir, NULL, o->histogram_only, relay, &r};
    if (o->layout && !(ro.layout = layout_named(o->layout))) {
        snprintf(err, errlen, "unknown layout '%s' (compressed, uncompressed-class or uncompressed)", o->layout);
        free(a);
        return -1;
    }
    int rc = hprof_read(&a->h, path, &ro, err, errlen);
    if (rc < 0) {
        if (rc == -2) snprintf(err, errlen, "cancelled");
        free(a);
        return -1;
    }
    if (!o->histogram_only) {
        uint64_t budget = o->max_memory ? o->max_memory : mem_available() / 2;
        uint64_t need = reader_bytes(&a->h) + graph_estimate(&a->h);
        if (budget && need > budget) {
            snprintf(err, errlen,
                     "%s: its index needs about %llu MiB, over the memory budget of %llu MiB (%s); pass a larger "
                     "--max-memory, or --histogram for counts and shallow sizes only",
                     path, (unsigned long long)(need >> 20), (unsigned long long)(budget >> 20),
                     o->max_memory ? "--max-memory" : "half of the memory available");
            heap_analysis_close(a);
            return -1;
        }
        r.phase = "graph";
        rc = heap_graph_build(&a->g, &a->h, relay, &r);
        if (rc < 0) {
            snprintf(err, errlen, "%s", rc == -ECANCELED ? "cancelled"
                                        : rc == -EOVERFLOW ? "more than 4 billion references: more than this reader indexes"
                                                           : "out of memory building the reference graph");
            heap_analysis_close(a);
            return -1;
        }
        a->has_graph = 1;
    }
    *out = a;
    return 0;
}

void heap_analysis_close(struct heap_analysis *a)
{
    if (!a) return;
    heap_graph_free(&a->g);
    heap_domtree_free(&a->dt);
    big_free(a->bfs_parent, ((size_t)a->g.n + 1) * sizeof *a->bfs_parent);
    hprof_free(&a->h);
    free(a);
}

void heap_analysis_summary(const struct heap_analysis *a, struct heap_summary *s)
{
    const struct hprof *h = &a->h;
    memset(s, 0, sizeof *s);
    s->file_bytes = h->file.stored_size;
    s->dump_bytes = h->file.size;
    s->gzipped = h->file.gzipped;
    s->id_size = h->id_size;
    s->layout = h->layout.name;
    s->layout_matched = h->layout.matched;
    s->layout_tried = h->layout.tried;
    s->timestamp_ms = h->timestamp_ms;
    s->objects = h->objects_seen;
    s->classes = h->nreal_classes;
    s->roots = h->nroots;
    for (uint32_t k = 0; k < h->nclasses; k++) s->shallow_bytes += h->class_shallow[k];
    s->index_bytes = reader_bytes(h);
    if (a->has_graph) {
        s->reachable = a->g.reachable;
        s->reachable_bytes = a->g.reachable_bytes;
        s->weak_only = s->objects - s->reachable;
        s->weak_only_bytes = s->shallow_bytes - s->reachable_bytes;
        uint64_t nv = (uint64_t)a->g.n + 1;
        s->index_bytes += nv * (4 + 4 + 8) + (uint64_t)a->g.out_start[nv] * 4;
    }
}

static int cmp_class_rows(const void *x, const void *y)
{
    const struct heap_class_row *a = x, *b = y;
    if (a->retained != b->retained) return a->retained < b->retained ? 1 : -1;
    if (a->shallow != b->shallow) return a->shallow < b->shallow ? 1 : -1;
    return strcmp(a->name, b->name);
}

int heap_ensure_domtree(struct heap_analysis *a)
{
    return a->dt.start ? 0 : heap_domtree_build(&a->dt, &a->g);
}

uint32_t heap_object_named(const struct hprof *h, const char *text)
{
    if (text[0] != '0' || (text[1] != 'x' && text[1] != 'X') || !text[2]) return HPROF_NONE;
    char *end;
    unsigned long long id = strtoull(text + 2, &end, 16);
    return *end ? HPROF_NONE : hprof_find(h, id);
}

/* A class's retained bytes: the instances that no other instance of the class dominates, summed. One walk of the
 * dominator tree, depth first with an explicit stack, counting the instances of each class on the current path. */
static int class_retained(struct heap_analysis *a, uint64_t *by_class)
{
    const struct hprof *h = &a->h;
    if (heap_ensure_domtree(a) < 0) return -ENOMEM;
    size_t nv = (size_t)a->g.n + 1, bytes = nv * sizeof(uint32_t);
    uint32_t *on_path = calloc(h->nclasses, sizeof *on_path);
    uint32_t *stack = big_alloc(bytes), *next = big_alloc(bytes);
    if (!on_path || !stack || !next) {
        free(on_path);
        big_free(stack, bytes);
        big_free(next, bytes);
        return -ENOMEM;
    }
    uint32_t depth = 0;
    stack[depth] = a->g.n;
    next[depth++] = a->dt.start[a->g.n];
    while (depth) {
        uint32_t v = stack[depth - 1];
        if (next[depth - 1] == a->dt.start[v + 1]) {
            if (v != a->g.n) on_path[h->obj_class[v]]--;
            depth--;
            continue;
        }
        uint32_t w = a->dt.child[next[depth - 1]++];
        uint32_t k = h->obj_class[w];
        if (on_path[k]++ == 0) by_class[k] += a->g.retained[w];
        stack[depth] = w;
        next[depth++] = a->dt.start[w];
    }
    free(on_path);
    big_free(stack, bytes);
    big_free(next, bytes);
    return 0;
}

int heap_analysis_histogram(const struct heap_analysis *ca, struct heap_class_row **rows, size_t *n)
{
    struct heap_analysis *a = (struct heap_analysis *)ca; /* the dominator tree is built on first use */
    const struct hprof *h = &a->h;
    struct heap_class_row *r = calloc(h->nclasses ? h->nclasses : 1, sizeof *r);
    uint64_t *ret = calloc(h->nclasses ? h->nclasses : 1, sizeof *ret);
    if (!r || !ret || (a->has_graph && class_retained(a, ret) < 0)) {
        free(r);
        free(ret);
        return -ENOMEM;
    }
    for (uint32_t k = 0; k < h->nclasses; k++) {
        r[k].count = h->class_count[k];
        r[k].shallow = h->class_shallow[k];
    }
    size_t m = 0;
    for (uint32_t k = 0; k < h->nclasses; k++)
        if (r[k].count) {
            r[m] = r[k];
            r[m].name = h->classes[k].name;
            r[m++].retained = ret[k];
        }
    free(ret);
    qsort(r, m, sizeof *r, cmp_class_rows);
    *rows = r;
    *n = m;
    return 0;
}

static void object_row(const struct heap_analysis *a, uint32_t v, struct heap_object_row *row)
{
    row->id = a->h.obj_id[v];
    row->class_name = heap_display_class(&a->h, v);
    row->is_class = a->h.obj_kind[v] == HPROF_OBJ_CLASS;
    row->shallow = hprof_shallow(&a->h, v);
    row->retained = a->has_graph ? a->g.retained[v] : 0;
    row->reachable = a->has_graph && a->g.idom[v] != HPROF_NONE;
}

static int cmp_object_rows(const void *x, const void *y)
{
    const struct heap_object_row *a = x, *b = y;
    if (a->retained != b->retained) return a->retained < b->retained ? 1 : -1;
    if (a->shallow != b->shallow) return a->shallow < b->shallow ? 1 : -1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* Whether object x sorts after y in a listing: smaller retained, then smaller shallow, then larger id. */
static int sorts_after(const struct heap_analysis *a, uint32_t x, uint32_t y)
{
    uint64_t rx = a->has_graph ? a->g.retained[x] : 0, ry = a->has_graph ? a->g.retained[y] : 0;
    if (rx != ry) return rx < ry;
    if (a->h.obj_shallow8[x] != a->h.obj_shallow8[y]) return a->h.obj_shallow8[x] < a->h.obj_shallow8[y];
    return a->h.obj_id[x] > a->h.obj_id[y];
}

/* The limit biggest of objs, kept in a heap whose root is the smallest kept: one pass, no sort of them all. */
static size_t top_objects(const struct heap_analysis *a, const uint32_t *objs, size_t m, size_t limit, uint32_t *top)
{
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        size_t at;
        if (k < limit) {
            at = k++;
            while (at > 0 && sorts_after(a, objs[i], top[(at - 1) / 2])) { /* sift up */
                top[at] = top[(at - 1) / 2];
                at = (at - 1) / 2;
            }
        } else if (sorts_after(a, top[0], objs[i])) {
            at = 0; /* replaces the smallest kept, sifted down */
            for (;;) {
                size_t c = 2 * at + 1;
                if (c >= k) break;
                if (c + 1 < k && sorts_after(a, top[c + 1], top[c])) c++;
                if (!sorts_after(a, top[c], objs[i])) break;
                top[at] = top[c];
                at = c;
            }
        } else {
            continue;
        }
        top[at] = objs[i];
    }
    return k;
}

/* Rows of the selected objects, biggest first, the first limit kept. */
static int object_rows(const struct heap_analysis *a, const uint32_t *objs, size_t m, size_t limit,
                       struct heap_object_row **rows, size_t *n)
{
    size_t k = m < limit ? m : limit;
    uint32_t *top = k < m ? malloc((k ? k : 1) * sizeof *top) : NULL;
    struct heap_object_row *r = malloc((k ? k : 1) * sizeof *r);
    if (!r || (k < m && !top)) {
        free(top);
        free(r);
        return -ENOMEM;
    }
    if (top) top_objects(a, objs, m, k, top);
    for (size_t i = 0; i < k; i++) object_row(a, top ? top[i] : objs[i], &r[i]);
    free(top);
    qsort(r, k, sizeof *r, cmp_object_rows);
    *rows = r;
    *n = k;
    return 0;
}

int heap_analysis_dominators(const struct heap_analysis *a, size_t limit, struct heap_object_row **rows, size_t *n)
{
    *rows = NULL;
    *n = 0;
    if (!a->has_graph) return 0;
    uint32_t *objs = malloc(((size_t)a->g.n + 1) * sizeof *objs);
    if (!objs) return -ENOMEM;
    size_t m = 0;
    for (uint32_t v = 0; v < a->g.n; v++)
        if (a->g.idom[v] == a->g.n) objs[m++] = v;
    int rc = object_rows(a, objs, m, limit, rows, n);
    free(objs);
    return rc;
}

/* A class by exact name, else by a suffix after a '.' or '$' that only one class has. */
static int class_by_java_name(const struct hprof *h, const char *name, uint32_t **ks, size_t *nk, char *err,
                              size_t errlen);

static int class_by_name(const struct hprof *h, const char *asked, uint32_t **ks, size_t *nk, char *err, size_t errlen)
{
    /* a descriptor as jcmd GC.class_histogram writes arrays ([B, [Ljava.lang.Object;) reads as Java's name */
    char *conv = asked[0] == '[' ? hprof_java_name(asked, (uint32_t)strlen(asked)) : NULL;
    int rc = class_by_java_name(h, conv ? conv : asked, ks, nk, err, errlen);
    free(conv);
    return rc;
}

static int class_by_java_name(const struct hprof *h, const char *name, uint32_t **ks, size_t *nk, char *err,
                              size_t errlen)
{
    size_t len = strlen(name), m = 0;
    uint32_t *out = malloc((h->nclasses ? h->nclasses : 1) * sizeof *out);
    if (!out) return -1;
    for (uint32_t k = 0; k < h->nclasses; k++)
        if (strcmp(h->classes[k].name, name) == 0) out[m++] = k;
    if (!m) {
        const char *first = NULL;
        for (uint32_t k = 0; k < h->nclasses; k++) {
            const char *c = h->classes[k].name;
            size_t cl = strlen(c);
            if (cl > len && strcmp(c + cl - len, name) == 0 && (c[cl - len - 1] == '.' || c[cl - len - 1] == '$')) {
                if (first && strcmp(first, c) != 0) {
                    snprintf(err, errlen, "'%s' names several classes (%s, %s...): give the full name", name, first, c);
                    free(out);
                    return -1;
                }
                first = c;
                out[m++] = k;
            }
        }
    }
    if (!m) {
        snprintf(err, errlen, "no class '%s' in this dump", name);
        free(out);
        return -1;
    }
    *ks = out;
    *nk = m; /* several when loaders define one name more than once */
    return 0;
}

int heap_class_objects(const struct heap_analysis *a, const char *cls, uint32_t **objs, size_t *n, char *err,
                       size_t errlen)
{
    const struct hprof *h = &a->h;
    uint32_t *ks;
    size_t nk;
    *objs = NULL;
    *n = 0;
    if (class_by_name(h, cls, &ks, &nk, err, errlen) < 0) return -1;
    unsigned char *want = calloc(h->nclasses, 1);
    uint32_t *o = NULL;
    size_t m = 0, cap = 0;
    int rc = want ? 0 : -ENOMEM;
    for (size_t i = 0; want && i < nk; i++) want[ks[i]] = 1;
    for (uint32_t v = 0; rc == 0 && v < h->nobjects; v++) {
        if (!want[h->obj_class[v]]) continue;
        if (m == cap) {
            cap = cap ? cap * 2 : 256;
            uint32_t *no = realloc(o, cap * sizeof *no);
            if (!no) rc = -ENOMEM;
            else o = no;
        }
        if (rc == 0) o[m++] = v;
    }
    free(want);
    free(ks);
    if (rc < 0) {
        free(o);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    *objs = o;
    *n = m;
    return 0;
}

int heap_analysis_instances(const struct heap_analysis *a, const char *cls, size_t limit, struct heap_object_row **rows,
                            size_t *n, uint64_t *total, char *err, size_t errlen)
{
    uint32_t *objs;
    size_t m;
    *rows = NULL;
    *n = 0;
    *total = 0;
    if (heap_class_objects(a, cls, &objs, &m, err, errlen) < 0) return -1;
    int rc = object_rows(a, objs, m, limit, rows, n);
    *total = m;
    free(objs);
    if (rc < 0) snprintf(err, errlen, "out of memory");
    return rc < 0 ? -1 : 0;
}

/* Suspects: objects near the top of the dominator tree retaining a share of the heap. Going down, the biggest
 * child is followed while it holds most of its parent; where that stops the bytes spread over many children:
 * the accumulation point, with the class most of those children are. */
static uint32_t accumulation_point(const struct heap_analysis *a, uint32_t v)
{
    for (unsigned depth = 0; depth < 10000; depth++) {
        uint32_t best = HPROF_NONE;
        for (uint32_t i = a->dt.start[v]; i < a->dt.start[v + 1]; i++) {
            uint32_t c = a->dt.child[i];
            if (best == HPROF_NONE || a->g.retained[c] > a->g.retained[best]) best = c;
        }
        if (best == HPROF_NONE || a->g.retained[best] * 10 < a->g.retained[v] * 8) return v;
        v = best;
    }
    return v;
}

static void children_class(const struct heap_analysis *a, uint32_t v, struct heap_suspect *s)
{
    const struct hprof *h = &a->h;
    uint64_t *cnt = calloc(h->nclasses, sizeof *cnt), *ret = calloc(h->nclasses, sizeof *ret);
    if (cnt && ret) {
        for (uint32_t i = a->dt.start[v]; i < a->dt.start[v + 1]; i++) {
            uint32_t c = a->dt.child[i];
            cnt[h->obj_class[c]]++;
            ret[h->obj_class[c]] += a->g.retained[c];
        }
        uint32_t best = HPROF_NONE;
        for (uint32_t k = 0; k < h->nclasses; k++)
            if (cnt[k] && (best == HPROF_NONE || ret[k] > ret[best])) best = k;
        if (best != HPROF_NONE) {
            s->children_class = h->classes[best].name;
            s->children_class_count = cnt[best];
            s->children_class_retained = ret[best];
        }
    }
    free(cnt);
    free(ret);
}

int heap_analysis_suspects(struct heap_analysis *a, double share, struct heap_suspect **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!a->has_graph) return 0;
    if (heap_ensure_domtree(a) < 0) return -ENOMEM;
    uint64_t threshold = (uint64_t)(share * (double)a->g.reachable_bytes);
    uint32_t *objs = malloc(((size_t)a->g.n + 1) * sizeof *objs);
    if (!objs) return -ENOMEM;
    size_t m = 0;
    for (uint32_t v = 0; v < a->g.n; v++)
        if (a->g.idom[v] == a->g.n && a->g.retained[v] >= threshold && a->g.retained[v] > 0) objs[m++] = v;
    struct heap_object_row *rows;
    size_t k;
    int rc = object_rows(a, objs, m, SIZE_MAX, &rows, &k);
    free(objs);
    if (rc < 0) return rc;
    struct heap_suspect *s = calloc(k ? k : 1, sizeof *s);
    if (!s) {
        free(rows);
        return -ENOMEM;
    }
    for (size_t i = 0; i < k; i++) {
        uint32_t v = hprof_find(&a->h, rows[i].id);
        s[i].id = rows[i].id;
        s[i].class_name = heap_display_class(&a->h, v);
        s[i].is_class = rows[i].is_class;
        s[i].retained = rows[i].retained;
        s[i].path = heap_object_chain(a, v);
        uint32_t acc = accumulation_point(a, v);
        s[i].accumulation_id = a->h.obj_id[acc];
        s[i].accumulation_class = heap_display_class(&a->h, acc);
        s[i].accumulation_retained = a->g.retained[acc];
        s[i].accumulation_children = a->dt.start[acc + 1] - a->dt.start[acc];
        children_class(a, acc, &s[i]);
    }
    free(rows);
    *out = s;
    *n = k;
    return 0;
}

void heap_suspects_free(struct heap_suspect *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++) free(s[i].path);
    free(s);
}

/* java.lang.String: its value array (byte[] with a coder since JDK 9: 0 Latin-1, 1 UTF-16 in the JVM's byte
 * order, little-endian on the platforms HotSpot dumps from; char[] before, written big-endian). */
struct string_fields {
    const struct hprof *h;
    uint64_t value;
    int coder;
};

static int string_field(void *arg, const struct hprof_field *f)
{
    struct string_fields *sf = arg;
    if (f->type == HPROF_OBJECT && hprof_field_is(sf->h, f, "value"))
        sf->value = hprof_id_at(sf->h, f->value);
    else if (f->type == HPROF_BYTE && hprof_field_is(sf->h, f, "coder"))
        sf->coder = f->value[0];
    return 0;
}

static size_t put_utf8(char *out, unsigned c)
{
    if (c < 0x80) { out[0] = (char)c; return 1; }
    if (c < 0x800) { out[0] = (char)(0xc0 | c >> 6); out[1] = (char)(0x80 | (c & 0x3f)); return 2; }
    out[0] = (char)(0xe0 | c >> 12);
    out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
    out[2] = (char)(0x80 | (c & 0x3f));
    return 3;
}

int heap_string_text(const struct hprof *h, uint32_t obj, char *buf, size_t n)
{
    if (n < 8 || h->obj_kind[obj] != HPROF_OBJ_INSTANCE || strcmp(h->classes[h->obj_class[obj]].name, "java.lang.String"))
        return -1;
    struct string_fields sf = {h, 0, 0};
    hprof_instance_fields(h, obj, string_field, &sf);
    uint32_t arr = sf.value ? hprof_find(h, sf.value) : HPROF_NONE;
    if (arr == HPROF_NONE || h->obj_kind[arr] != HPROF_OBJ_PRIM_ARRAY) return -1;
    const unsigned char *p = h->file.bytes + h->obj_off[arr] + h->id_size + 4;
    uint32_t count = (uint32_t)bytes_be(p, 4);
    unsigned type = p[4];
    p += 5;
    size_t w = 0;
    unsigned unit = type == HPROF_CHAR ? 2 : sf.coder ? 2 : 1;
    uint32_t chars = type == HPROF_CHAR ? count : count / unit;
    for (uint32_t i = 0; i < chars; i++) {
        unsigned c = type == HPROF_CHAR ? (unsigned)bytes_be(p + 2 * i, 2)
                     : unit == 2        ? (unsigned)bytes_le(p + 2 * i, 2)
                                        : p[i];
        if (c >= 0xd800 && c < 0xe000) c = 0xfffd; /* a surrogate half: shown as a replacement */
        if (w + 3 + 4 >= n) {
            memcpy(buf + w, "...", 3);
            w += 3;
            break;
        }
        w += put_utf8(buf + w, c);
    }
    buf[w] = 0;
    return 0;
}

/* The fields view. */
struct fields_out {
    const struct heap_analysis *a;
    struct heap_field *f;
    size_t n, cap, limit;
    int is_static;
};

static const char *type_name(unsigned t)
{
    switch (t) {
    case HPROF_OBJECT: return "object";
    case HPROF_BOOLEAN: return "boolean";
    case HPROF_CHAR: return "char";
    case HPROF_FLOAT: return "float";
    case HPROF_DOUBLE: return "double";
    case HPROF_BYTE: return "byte";
    case HPROF_SHORT: return "short";
    case HPROF_INT: return "int";
    case HPROF_LONG: return "long";
    default: return "?";
    }
}

static void value_text(const struct heap_analysis *a, unsigned type, const unsigned char *p, char *buf, size_t n,
                       uint64_t *ref)
{
    const struct hprof *h = &a->h;
    *ref = 0;
    if (type == HPROF_OBJECT) {
        uint64_t id = hprof_id_at(h, p);
        uint32_t v = id ? hprof_find(h, id) : HPROF_NONE;
        if (!id) {
            snprintf(buf, n, "null");
            return;
        }
        *ref = id;
        if (v == HPROF_NONE) {
            snprintf(buf, n, "0x%llx (not in the dump)", (unsigned long long)id);
            return;
        }
        char s[160];
        if (heap_string_text(h, v, s, sizeof s) == 0)
            snprintf(buf, n, "0x%llx java.lang.String \"%s\"", (unsigned long long)id, s);
        else
            snprintf(buf, n, "0x%llx %s%s", (unsigned long long)id, h->obj_kind[v] == HPROF_OBJ_CLASS ? "class " : "",
                     heap_display_class(h, v));
        return;
    }
    struct hprof_field f = {0, type, p, 0};
    int64_t v = hprof_field_int(h, &f);
    if (type == HPROF_FLOAT) {
        uint32_t u = (uint32_t)v;
        float x;
        memcpy(&x, &u, sizeof x);
        snprintf(buf, n, "%g", (double)x);
    } else if (type == HPROF_DOUBLE) {
        uint64_t u = (uint64_t)v;
        double x;
        memcpy(&x, &u, sizeof x);
        snprintf(buf, n, "%g", x);
    } else if (type == HPROF_BOOLEAN) {
        snprintf(buf, n, "%s", v ? "true" : "false");
    } else if (type == HPROF_CHAR && v >= 0x20 && v < 0x7f) {
        snprintf(buf, n, "'%c'", (int)v);
    } else {
        snprintf(buf, n, "%lld", (long long)v);
    }
}

static int field_push(struct fields_out *fo, const char *name, unsigned type, const unsigned char *value)
{
    if (fo->n >= fo->limit) return 1;
    if (fo->n == fo->cap) {
        size_t cap = fo->cap ? fo->cap * 2 : 32;
        struct heap_field *nf = realloc(fo->f, cap * sizeof *nf);
        if (!nf) return -1;
        fo->f = nf;
        fo->cap = cap;
    }
    char val[512];
    struct heap_field *f = &fo->f[fo->n];
    value_text(fo->a, type, value, val, sizeof val, &f->ref);
    f->type = type_name(type);
    f->name = strdup(name);
    f->value = strdup(val);
    if (!f->name || !f->value) {
        free(f->name);
        free(f->value);
        return -1;
    }
    fo->n++;
    return 0;
}

static int push_named(void *arg, const struct hprof_field *f)
{
    struct fields_out *fo = arg;
    char name[300];
    uint32_t len;
    const char *fname = hprof_field_name(&fo->a->h, f, &len);
    snprintf(name, sizeof name, "%s%.*s", fo->is_static ? "static " : "", fname ? (int)len : 1, fname ? fname : "?");
    return field_push(fo, name, f->type, f->value);
}

int heap_analysis_fields(const struct heap_analysis *a, const char *idtext, size_t limit, struct heap_field **out,
                         size_t *n, struct heap_object_row *self, char *err, size_t errlen)
{
    const struct hprof *h = &a->h;
    uint32_t v = heap_object_named(h, idtext);
    *out = NULL;
    *n = 0;
    if (v == HPROF_NONE) {
        snprintf(err, errlen, "no object %s in this dump (give its id as 0x...)", idtext);
        return -1;
    }
    object_row(a, v, self);
    struct fields_out fo = {a, NULL, 0, 0, limit, 0};
    int rc = 0;
    switch (h->obj_kind[v]) {
    case HPROF_OBJ_INSTANCE: rc = hprof_instance_fields(h, v, push_named, &fo); break;
    case HPROF_OBJ_CLASS: {
        uint32_t k = hprof_class_of_object(h, v);
        fo.is_static = 1;
        if (k != HPROF_NONE) rc = hprof_class_statics(h, k, push_named, &fo);
        break;
    }
    case HPROF_OBJ_ARRAY: case HPROF_OBJ_PRIM_ARRAY: {
        const unsigned char *p = h->file.bytes + h->obj_off[v] + h->id_size + 4;
        uint32_t count = (uint32_t)bytes_be(p, 4);
        unsigned type = HPROF_OBJECT, sz = h->id_size;
        if (h->obj_kind[v] == HPROF_OBJ_PRIM_ARRAY) {
            type = p[4];
            sz = hprof_type_size(h, type);
            p += 5;
        } else {
            p += 4 + h->id_size;
        }
        for (uint32_t i = 0; i < count && rc == 0; i++) {
            char name[24];
            snprintf(name, sizeof name, "[%u]", i);
            rc = field_push(&fo, name, type, p + (size_t)i * sz);
        }
        break;
    }
    }
    if (rc < 0) {
        heap_fields_free(fo.f, fo.n);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    *out = fo.f;
    *n = fo.n;
    return 0;
}

void heap_fields_free(struct heap_field *f, size_t n)
{
    for (size_t i = 0; f && i < n; i++) {
        free(f[i].name);
        free(f[i].value);
    }
    free(f);
}

static int cmp_row_name(const void *x, const void *y)
{
    return strcmp(((const struct heap_class_row *)x)->name, ((const struct heap_class_row *)y)->name);
}

static int cmp_diff(const void *x, const void *y)
{
    const struct heap_diff_row *a = x, *b = y;
    if (a->dshallow != b->dshallow) return a->dshallow < b->dshallow ? 1 : -1;
    if (a->dcount != b->dcount) return a->dcount < b->dcount ? 1 : -1;
    return strcmp(a->name, b->name);
}

/* Rows sorted by name, with one class name's rows (several loaders) added together. */
static struct heap_class_row *by_name(const struct heap_class_row *r, size_t n, size_t *m)
{
    struct heap_class_row *s = malloc((n ? n : 1) * sizeof *s);
    if (!s) return NULL;
    memcpy(s, r, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_row_name);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && strcmp(s[k - 1].name, s[i].name) == 0) {
            s[k - 1].count += s[i].count;
            s[k - 1].shallow += s[i].shallow;
        } else {
            s[k++] = s[i];
        }
    }
    *m = k;
    return s;
}

int heap_histogram_diff(const struct heap_class_row *newer, size_t nn, const struct heap_class_row *older, size_t no,
                        struct heap_diff_row **rows, size_t *n)
{
    size_t a_n, b_n;
    struct heap_class_row *a = by_name(newer, nn, &a_n), *b = by_name(older, no, &b_n);
    struct heap_diff_row *d = malloc((nn + no + 1) * sizeof *d);
    if (!a || !b || !d) {
        free(a);
        free(b);
        free(d);
        return -ENOMEM;
    }
    size_t i = 0, j = 0, k = 0;
    while (i < a_n || j < b_n) {
        int c = i == a_n ? 1 : j == b_n ? -1 : strcmp(a[i].name, b[j].name);
        const struct heap_class_row *x = c <= 0 ? &a[i] : NULL, *y = c >= 0 ? &b[j] : NULL;
        d[k].name = x ? x->name : y->name;
        d[k].count = x ? x->count : 0;
        d[k].shallow = x ? x->shallow : 0;
        d[k].dcount = (int64_t)d[k].count - (int64_t)(y ? y->count : 0);
        d[k].dshallow = (int64_t)d[k].shallow - (int64_t)(y ? y->shallow : 0);
        k++;
        if (x) i++;
        if (y) j++;
    }
    free(a);
    free(b);
    qsort(d, k, sizeof *d, cmp_diff);
    *rows = d;
    *n = k;
    return 0;
}
