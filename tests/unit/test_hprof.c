/* hprof: dumps built byte by byte, so every answer is known: the dominators and retained sizes of a diamond, the
 * shortest path and its labels, a referent that holds nothing, a million-long chain read without recursion,
 * the layout inferred from addresses, and cut or scrambled files refused without a crash (ASan watches). */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "actions/offline/heap_analysis.h"
#include "check.h"

struct buf {
    unsigned char *p;
    size_t n, cap;
};

static void put(struct buf *b, uint64_t v, unsigned n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->cap + n) * 2;
        b->p = realloc(b->p, b->cap);
    }
    for (unsigned i = 0; i < n; i++) b->p[b->n++] = (unsigned char)(v >> (8 * (n - 1 - i)));
}

static void put_bytes(struct buf *b, const void *s, size_t n)
{
    for (size_t i = 0; i < n; i++) put(b, ((const unsigned char *)s)[i], 1);
}

static void record(struct buf *f, unsigned tag, const struct buf *body)
{
    put(f, tag, 1);
    put(f, 0, 4);
    put(f, body->n, 4);
    put_bytes(f, body->p, body->n);
}

static void string_rec(struct buf *f, uint64_t id, const char *s)
{
    struct buf b = {0};
    put(&b, id, 8);
    put_bytes(&b, s, strlen(s));
    record(f, 0x01, &b);
    free(b.p);
}

static void load_class(struct buf *f, uint64_t cls, uint64_t name)
{
    struct buf b = {0};
    put(&b, 1, 4);
    put(&b, cls, 8);
    put(&b, 0, 4);
    put(&b, name, 8);
    record(f, 0x02, &b);
    free(b.p);
}

struct field { uint64_t name; unsigned type; uint64_t value; };

/* CLASS DUMP: statics (object type, with values) and instance fields. */
static void class_dump(struct buf *h, uint64_t id, uint64_t super, unsigned inst_bytes, const struct field *st,
                       unsigned nst, const struct field *fl, unsigned nfl)
{
    put(h, 0x20, 1);
    put(h, id, 8);
    put(h, 0, 4);
    put(h, super, 8);
    for (int i = 0; i < 5; i++) put(h, 0, 8);
    put(h, inst_bytes, 4);
    put(h, 0, 2);
    put(h, nst, 2);
    for (unsigned i = 0; i < nst; i++) {
        put(h, st[i].name, 8);
        put(h, st[i].type, 1);
        put(h, st[i].value, st[i].type == 2 ? 8 : 4);
    }
    put(h, nfl, 2);
    for (unsigned i = 0; i < nfl; i++) {
        put(h, fl[i].name, 8);
        put(h, fl[i].type, 1);
    }
}

/* A Node: next, other (references), v (int): 20 bytes in the file, 24 in a JVM with compressed oops. */
static void node(struct buf *h, uint64_t id, uint64_t next, uint64_t other, unsigned v)
{
    put(h, 0x21, 1);
    put(h, id, 8);
    put(h, 0, 4);
    put(h, 0x120, 8);
    put(h, 20, 4);
    put(h, next, 8);
    put(h, other, 8);
    put(h, v, 4);
}

enum { S_OBJECT = 1, S_CLASS, S_NODE, S_HOLDER, S_REF, S_WEAK, S_NEXT, S_OTHER, S_V, S_ROOT, S_REFERENT, S_QUEUE };

/* The classes every dump here has: Object, Class, Node, Holder (static ROOT), Reference (referent, queue) and
 * WeakThing extending it. */
static void preamble(struct buf *f, struct buf *h, uint64_t root)
{
    put_bytes(f, "JAVA PROFILE 1.0.2", 19);
    put(f, 8, 4);
    put(f, 0, 8);
    static const char *const names[] = {NULL, "java/lang/Object", "java/lang/Class", "Node", "Holder",
                                        "java/lang/ref/Reference", "WeakThing", "next", "other", "v", "ROOT",
                                        "referent", "queue"};
    for (unsigned i = 1; i < sizeof names / sizeof names[0]; i++) string_rec(f, i, names[i]);
    load_class(f, 0x100, S_OBJECT);
    load_class(f, 0x110, S_CLASS);
    load_class(f, 0x120, S_NODE);
    load_class(f, 0x130, S_HOLDER);
    load_class(f, 0x140, S_REF);
    load_class(f, 0x150, S_WEAK);
    class_dump(h, 0x100, 0, 0, NULL, 0, NULL, 0);
    class_dump(h, 0x110, 0x100, 0, NULL, 0, NULL, 0);
    struct field nf[] = {{S_NEXT, 2, 0}, {S_OTHER, 2, 0}, {S_V, 10, 0}};
    class_dump(h, 0x120, 0x100, 20, NULL, 0, nf, 3);
    struct field hs[] = {{S_ROOT, 2, root}};
    class_dump(h, 0x130, 0x100, 0, hs, 1, NULL, 0);
    struct field rf[] = {{S_REFERENT, 2, 0}, {S_QUEUE, 2, 0}};
    class_dump(h, 0x140, 0x100, 16, NULL, 0, rf, 2);
    class_dump(h, 0x150, 0x140, 16, NULL, 0, NULL, 0);
}

static char dir[64];

static const char *write_dump(const struct buf *f, const char *name)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *o = fopen(path, "wb");
    if (f->n) fwrite(f->p, 1, f->n, o);
    fclose(o);
    return path;
}

/* Holder.ROOT -> A; A.next -> B, A.other -> C; B.next -> D, C.next -> D; D.next -> E. A JNI global W, a WeakThing
 * whose referent is F. G: referred to by nothing. */
static struct buf diamond(void)
{
    struct buf f = {0}, h = {0};
    preamble(&f, &h, 0x1000);
    node(&h, 0x1000, 0x1100, 0x1200, 1); /* A */
    node(&h, 0x1100, 0x1300, 0, 2);      /* B */
    node(&h, 0x1200, 0x1300, 0, 3);      /* C */
    node(&h, 0x1300, 0x1400, 0, 4);      /* D */
    node(&h, 0x1400, 0, 0, 5);           /* E */
    node(&h, 0x1500, 0, 0, 6);           /* F */
    node(&h, 0x1600, 0, 0, 7);           /* G */
    put(&h, 0x21, 1);                    /* W: a WeakThing, referent F */
    put(&h, 0x1700, 8);
    put(&h, 0, 4);
    put(&h, 0x150, 8);
    put(&h, 16, 4);
    put(&h, 0x1500, 8);
    put(&h, 0, 8);
    put(&h, 0x01, 1); /* ROOT JNI GLOBAL */
    put(&h, 0x1700, 8);
    put(&h, 0, 8);
    record(&f, 0x1c, &h);
    free(h.p);
    return f;
}

static const struct heap_object_row *row_of(const struct heap_object_row *r, size_t n, uint64_t id)
{
    for (size_t i = 0; i < n; i++)
        if (r[i].id == id) return &r[i];
    return NULL;
}

static void test_diamond_dominators(void)
{
    struct buf f = diamond();
    struct heap_analysis_opts o = {.layout = "compressed"};
    struct heap_analysis *a;
    char err[256];
    CHECK(heap_analysis_open(&a, write_dump(&f, "diamond.hprof"), &o, err, sizeof err) == 0);
    free(f.p);
    if (!a) return;
    struct heap_object_row *r;
    size_t n;
    uint64_t total;
    CHECK(heap_analysis_instances(a, "Node", 100, &r, &n, &total, err, sizeof err) == 0);
    CHECK_INT(total, 7);
    CHECK_INT(row_of(r, n, 0x1000)->retained, 5 * 24); /* A holds B, C, D and E: the diamond joins below it */
    CHECK_INT(row_of(r, n, 0x1100)->retained, 24);     /* B does not dominate D, C neither */
    CHECK_INT(row_of(r, n, 0x1300)->retained, 48);     /* D holds E */
    CHECK_INT(row_of(r, n, 0x1500)->retained, 0);      /* what no strong reference holds is not retained by anything */
    CHECK(!row_of(r, n, 0x1500)->reachable);           /* only a referent holds F */
    CHECK(!row_of(r, n, 0x1600)->reachable);           /* nothing holds G */
    CHECK_INT(row_of(r, n, 0x1000)->shallow, 24);
    free(r);
    struct heap_summary s;
    heap_analysis_summary(a, &s);
    CHECK_INT(s.weak_only, 2);

    struct heap_paths p;
    CHECK(heap_analysis_paths(a, "0x1400", 10, &p, err, sizeof err) == 0);
    CHECK_INT(p.reached, 1);
    char *chain = p.nnodes ? heap_paths_chain(&p, (uint32_t)p.nnodes - 1) : NULL;
    CHECK_STR(chain, "Holder.ROOT (static) \u2192 Node.next \u2192 Node.next \u2192 Node.next \u2192 Node");
    free(chain);
    heap_paths_free(&p);
    CHECK(heap_analysis_paths(a, "Holder", 10, &p, err, sizeof err) == 0); /* a class with no instance */
    CHECK(p.asked == 0 && p.reached == 0 && p.nnodes == 0);
    heap_paths_free(&p);
    CHECK(heap_analysis_paths(a, "0x1500", 10, &p, err, sizeof err) == 0);
    CHECK_INT(p.reached, 0);
    CHECK_INT(p.weak_only, 1);
    heap_paths_free(&p);

    struct heap_class_row *hr;
    CHECK(heap_analysis_histogram(a, &hr, &n) == 0);
    for (size_t i = 0; i < n; i++)
        if (strcmp(hr[i].name, "Node") == 0) {
            CHECK_INT(hr[i].count, 7);
            CHECK_INT(hr[i].retained, 5 * 24); /* A's subtree: no Node outside it is reachable */
        }
    free(hr);

    struct heap_field *fl;
    struct heap_object_row self;
    CHECK(heap_analysis_fields(a, "0x1000", 10, &fl, &n, &self, err, sizeof err) == 0);
    CHECK_INT(n, 3);
    if (n == 3) {
        CHECK_STR(fl[0].name, "next");
        CHECK_INT(fl[0].ref, 0x1100);
        CHECK_STR(fl[2].value, "1");
    }
    heap_fields_free(fl, n);
    heap_analysis_close(a);
}

/* Holder.ROOT -> a chain a million long: the DFS, the dominators and the path are all iterative. */
static void test_deep_chain(void)
{
    enum { N = 1000000 };
    struct buf f = {0}, h = {0};
    preamble(&f, &h, 0x100000);
    for (uint64_t i = 0; i < N; i++) node(&h, 0x100000 + 24 * i, i + 1 < N ? 0x100000 + 24 * (i + 1) : 0, 0, 0);
    record(&f, 0x1c, &h);
    free(h.p);
    struct heap_analysis *a;
    char err[256];
    CHECK(heap_analysis_open(&a, write_dump(&f, "deep.hprof"), NULL, err, sizeof err) == 0);
    free(f.p);
    if (!a) return;
    struct heap_summary s;
    heap_analysis_summary(a, &s);
    CHECK_STR(s.layout, "compressed oops"); /* inferred: each node 24 bytes after the one before */
    CHECK(s.layout_tried > 100000 && s.layout_matched == s.layout_tried);
    struct heap_object_row *r;
    size_t n;
    CHECK(heap_analysis_dominators(a, 1, &r, &n) == 0);
    CHECK(n == 1 && r[0].is_class && strcmp(r[0].class_name, "Holder") == 0);
    free(r);
    uint64_t total;
    CHECK(heap_analysis_instances(a, "Node", 1, &r, &n, &total, err, sizeof err) == 0);
    CHECK(n == 1 && r[0].id == 0x100000 && r[0].retained == 24ull * N);
    free(r);
    struct heap_paths p;
    char last[32];
    snprintf(last, sizeof last, "0x%llx", 0x100000ull + 24ull * (N - 1));
    CHECK(heap_analysis_paths(a, last, 1, &p, err, sizeof err) == 0);
    CHECK_INT(p.nnodes, N + 1);
    char *chain = p.nnodes ? heap_paths_chain(&p, (uint32_t)p.nnodes - 1) : NULL;
    CHECK(chain && strncmp(chain, "\u2026", 3) == 0); /* shortened at the root end */
    free(chain);
    heap_paths_free(&p);
    heap_analysis_close(a);
}

/* Exercises everything an open dump answers. */
static void ask_all(struct heap_analysis *a)
{
    char err[256];
    struct heap_class_row *hr;
    struct heap_object_row *r, self;
    struct heap_paths p;
    struct heap_suspect *s;
    struct heap_field *fl;
    size_t n;
    uint64_t total;
    if (heap_analysis_histogram(a, &hr, &n) == 0) free(hr);
    if (heap_analysis_dominators(a, 10, &r, &n) == 0) free(r);
    if (heap_analysis_instances(a, "Node", 10, &r, &n, &total, err, sizeof err) == 0) free(r);
    if (heap_analysis_paths(a, "Node", 10, &p, err, sizeof err) == 0) {
        for (size_t i = 0; i < p.nnodes; i++) free(heap_paths_chain(&p, (uint32_t)i));
        heap_paths_free(&p);
    }
    if (heap_analysis_suspects(a, 0.01, &s, &n) == 0) heap_suspects_free(s, n);
    static const char *const ids[] = {"0x1000", "0x1700", "0x130", "0x1600"};
    for (int i = 0; i < 4; i++)
        if (heap_analysis_fields(a, ids[i], 10, &fl, &n, &self, err, sizeof err) == 0) heap_fields_free(fl, n);
}

/* Every prefix of a dump, and thousands of scrambled copies: an answer or an error, never a crash. */
static void test_hostile_bytes(void)
{
    struct buf f = diamond();
    struct buf g = {0};
    char err[256];
    int refused = 0, read = 0;
    for (size_t len = 0; len < f.n; len++) {
        g.n = 0;
        put_bytes(&g, f.p, len);
        struct heap_analysis *a;
        if (heap_analysis_open(&a, write_dump(&g, "cut.hprof"), NULL, err, sizeof err) == 0) {
            ask_all(a);
            heap_analysis_close(a);
            read++;
        } else {
            refused += strstr(err, "offset") || strstr(err, "empty") || strstr(err, "HPROF");
        }
    }
    CHECK(refused > 0 && refused + read == (int)f.n);
    srand(7);
    for (int round = 0; round < 3000; round++) {
        g.n = 0;
        put_bytes(&g, f.p, f.n);
        for (int k = 0; k < 1 + round % 4; k++) g.p[32 + (size_t)rand() % (g.n - 32)] = (unsigned char)rand();
        struct heap_analysis *a;
        if (heap_analysis_open(&a, write_dump(&g, "scrambled.hprof"), NULL, err, sizeof err) == 0) {
            ask_all(a);
            heap_analysis_close(a);
        }
    }
    free(f.p);
    free(g.p);
}

int main(void)
{
    check_suite = "hprof";
    snprintf(dir, sizeof dir, "/tmp/diagtop-unit-hprof.XXXXXX");
    if (!mkdtemp(dir)) return 2;
    RUN(test_diamond_dominators);
    RUN(test_deep_chain);
    RUN(test_hostile_bytes);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) return 2;
    return check_failed_tests ? 1 : 0;
}
