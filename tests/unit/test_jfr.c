/* The JFR reader on chunks built here as the JDK lays them out (metadata, constant pools, jdk.ExecutionSample
 * events; two chunks in one file), and on hostile bytes: every truncation, sizes and counts that lie, nesting
 * without end, all refused with a reason and no read outside the buffer (ASan).
 * `test_jfr FILE` also reads a real recording: it prints "samples N" and "top COUNT METHOD" lines (innermost
 * frames) for tests/e2e/jfr_read.sh to compare with `jfr print`, then checks every truncation of FILE. */
#include "check.h"
#include "actions/runtimes/jvm/jfr_read.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

struct buf {
    unsigned char *b;
    size_t n, cap;
};

static void put(struct buf *w, const void *p, size_t n)
{
    if (w->n + n > w->cap) {
        w->cap = (w->n + n) * 2 + 64;
        w->b = realloc(w->b, w->cap);
    }
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

static void u8(struct buf *w, unsigned v)
{
    unsigned char c = (unsigned char)v;
    put(w, &c, 1);
}

static void var(struct buf *w, uint64_t v) /* JFR's compressed integer */
{
    for (int i = 0; i < 8; i++) {
        if (v < 0x80) {
            u8(w, (unsigned)v);
            return;
        }
        u8(w, (unsigned)(v & 0x7f) | 0x80);
        v >>= 7;
    }
    u8(w, (unsigned)v);
}

static void be(struct buf *w, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--) u8(w, (unsigned)(v >> (8 * i)));
}

static void str(struct buf *w, const char *s) /* UTF-8 encoding */
{
    u8(w, 3);
    var(w, strlen(s));
    put(w, s, strlen(s));
}

/* An event: its size (one byte of varint here; every event below is < 128 bytes... or padded to two). */
static void event(struct buf *w, const struct buf *body)
{
    size_t n = body->n + 2; /* a two-byte size field, always */
    u8(w, (unsigned)(n & 0x7f) | 0x80);
    u8(w, (unsigned)(n >> 7));
    put(w, body->b, body->n);
}

/* The metadata's strings: index = position. */
static const char *const S[] = {
    "root", "metadata", "class", "field", "id", "name", "class", "constantPool", "true", "dimension", "1",
    /* 11 */ "long", "int", "boolean", "java.lang.String", "jdk.types.Symbol", "java.lang.Class", "jdk.types.Method",
    /* 18 */ "jdk.types.FrameType", "jdk.types.StackFrame", "jdk.types.StackTrace", "java.lang.Thread",
    /* 22 */ "jdk.ExecutionSample",
    /* 23 */ "string", "type", "lineNumber", "method", "truncated", "frames", "osThreadId", "javaName", "startTime",
    "sampledThread", "stackTrace", "description",
    /* 35 */ "20", "21", "22", "23", "24", "25", "26", "27", "28", "29", "30", "31",
};
enum { T_LONG = 20, T_INT, T_BOOL, T_STRING, T_SYMBOL, T_CLASS, T_METHOD, T_FTYPE, T_FRAME, T_TRACE, T_THREAD,
       T_SAMPLE };

static int idx_of(const char *s)
{
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++)
        if (!strcmp(S[i], s)) return (int)i;
    return -1;
}

struct fdef {
    const char *name;
    int type, cp, array;
};

static void field_el(struct buf *w, const struct fdef *f)
{
    char t[8];
    snprintf(t, sizeof t, "%d", f->type);
    var(w, 3); /* "field" */
    var(w, 2 + (unsigned)f->cp + (unsigned)f->array);
    var(w, 5), var(w, (uint64_t)idx_of(f->name));
    var(w, 6), var(w, (uint64_t)idx_of(t));
    if (f->cp) var(w, 7), var(w, 8);
    if (f->array) var(w, 9), var(w, 10);
    var(w, 0);
}

static void class_el(struct buf *w, int id, const char *name, const struct fdef *f, int nf)
{
    char t[8];
    snprintf(t, sizeof t, "%d", id);
    var(w, 2);
    var(w, 2);
    var(w, 4), var(w, (uint64_t)idx_of(t));
    var(w, 5), var(w, (uint64_t)idx_of(name));
    var(w, (uint64_t)nf);
    for (int i = 0; i < nf; i++) field_el(w, &f[i]);
}

static void metadata(struct buf *w, int nest_bomb)
{
    struct buf m = {0};
    var(&m, 0); /* type: metadata */
    var(&m, 0), var(&m, 0), var(&m, 1);
    var(&m, sizeof S / sizeof S[0]);
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++) str(&m, S[i]);
    var(&m, 0); /* root */
    var(&m, 0);
    var(&m, 1);
    var(&m, 1); /* metadata */
    var(&m, 0);
    var(&m, 12);
    class_el(&m, T_LONG, "long", NULL, 0);
    class_el(&m, T_INT, "int", NULL, 0);
    class_el(&m, T_BOOL, "boolean", NULL, 0);
    class_el(&m, T_STRING, "java.lang.String", NULL, 0);
    class_el(&m, T_SYMBOL, "jdk.types.Symbol", (struct fdef[]){{"string", T_STRING, 0, 0}}, 1);
    /* nest_bomb: a Class that holds itself inline, a value without end */
    class_el(&m, T_CLASS, "java.lang.Class", (struct fdef[]){{"name", nest_bomb ? T_CLASS : T_SYMBOL, !nest_bomb, 0}},
             1);
    class_el(&m, T_METHOD, "jdk.types.Method", (struct fdef[]){{"type", T_CLASS, 1, 0}, {"name", T_SYMBOL, 1, 0}}, 2);
    class_el(&m, T_FTYPE, "jdk.types.FrameType", (struct fdef[]){{"description", T_STRING, 0, 0}}, 1);
    class_el(&m, T_FRAME, "jdk.types.StackFrame",
             (struct fdef[]){{"method", T_METHOD, 1, 0}, {"lineNumber", T_INT, 0, 0}, {"type", T_FTYPE, 1, 0}}, 3);
    class_el(&m, T_TRACE, "jdk.types.StackTrace",
             (struct fdef[]){{"truncated", T_BOOL, 0, 0}, {"frames", T_FRAME, 0, 1}}, 2);
    class_el(&m, T_THREAD, "java.lang.Thread",
             (struct fdef[]){{"osThreadId", T_LONG, 0, 0}, {"javaName", T_STRING, 0, 0}}, 2);
    class_el(&m, T_SAMPLE, "jdk.ExecutionSample",
             (struct fdef[]){{"startTime", T_LONG, 0, 0},
                             {"sampledThread", T_THREAD, 1, 0},
                             {"stackTrace", T_TRACE, 1, 0}},
             3);
    event(w, &m);
    free(m.b);
}

static void pools(struct buf *w)
{
    struct buf p = {0};
    var(&p, 1); /* type: constant pool */
    var(&p, 0), var(&p, 0), var(&p, 0);
    u8(&p, 0);
    var(&p, 7);
    var(&p, T_SYMBOL), var(&p, 4);
    var(&p, 1), str(&p, "demo/Burner");
    var(&p, 2), str(&p, "spin");
    var(&p, 3), str(&p, "burnLoop");
    var(&p, 4), str(&p, "run");
    var(&p, T_CLASS), var(&p, 1);
    var(&p, 10), var(&p, 1);
    var(&p, T_METHOD), var(&p, 3);
    var(&p, 20), var(&p, 10), var(&p, 2);
    var(&p, 21), var(&p, 10), var(&p, 3);
    var(&p, 22), var(&p, 10), var(&p, 4);
    var(&p, T_FTYPE), var(&p, 2);
    var(&p, 1), str(&p, "JIT compiled");
    var(&p, 2), str(&p, "Inlined");
    var(&p, T_TRACE), var(&p, 2);
    var(&p, 30), u8(&p, 0), var(&p, 3); /* spin (inlined) <- burnLoop <- run */
    var(&p, 20), var(&p, 7), var(&p, 2);
    var(&p, 21), var(&p, 14), var(&p, 1);
    var(&p, 22), var(&p, 18), var(&p, 1);
    var(&p, 31), u8(&p, 1), var(&p, 1); /* burnLoop, truncated */
    var(&p, 21), var(&p, 15), var(&p, 1);
    var(&p, T_THREAD), var(&p, 1);
    var(&p, 5), var(&p, 4242), str(&p, "burner");
    var(&p, T_LONG), var(&p, 0); /* an empty pool of a class we do not keep */
    event(w, &p);
    free(p.b);
}

static void sample(struct buf *w, int stack)
{
    struct buf e = {0};
    var(&e, T_SAMPLE);
    var(&e, 123456);
    var(&e, 5);
    var(&e, (uint64_t)stack);
    event(w, &e);
    free(e.b);
}

/* One chunk: header, samples (before the pools, as a streaming JVM writes them), pools, metadata last. */
static void chunk(struct buf *w, int samples30, int samples31, int nest_bomb)
{
    size_t start = w->n;
    struct buf body = {0};
    for (int i = 0; i < samples30; i++) sample(&body, 30);
    for (int i = 0; i < samples31; i++) sample(&body, 31);
    size_t cp = 68 + body.n;
    pools(&body);
    size_t meta = 68 + body.n;
    metadata(&body, nest_bomb);
    put(w, "FLR\0", 4);
    be(w, 2, 2), be(w, 0, 2);
    be(w, 68 + body.n, 8);
    be(w, cp, 8), be(w, meta, 8);
    be(w, 0, 8), be(w, 2000000000ull, 8), be(w, 0, 8), be(w, 1000000000ull, 8);
    be(w, 1, 4); /* compressed integers */
    put(w, body.b, body.n);
    free(body.b);
    (void)start;
}

static int frame_named(const struct cpu_report *r, int ix, const char *name)
{
    return ix >= 0 && ix < r->nframes && r->frames[ix].function && !strcmp(r->frames[ix].function, name);
}

static void test_one_chunk(void)
{
    struct buf w = {0};
    chunk(&w, 3, 2, 0);
    struct cpu_report r;
    char err[256] = "";
    int rc = jfr_read_report(w.b, w.n, 10000000, &r, err, sizeof err);
    CHECK_INT(rc, 0);
    if (rc == 0) {
        CHECK_INT(r.samples, 5);
        CHECK_INT(r.nstacks, 2);
        CHECK_INT(r.nframes, 4); /* spin inlined, burnLoop at 14 and at 15, run */
        CHECK_STR(r.method, "jfr");
        CHECK_INT(r.period_ns, 10000000);
        CHECK(r.seconds > 1.99 && r.seconds < 2.01);
        CHECK_INT(r.nthreads, 1);
        CHECK_INT(r.threads[0].tid, 4242);
        CHECK_STR(r.threads[0].name, "burner");
        const struct cpu_stack *s = r.stacks[0].nframes == 3 ? &r.stacks[0] : &r.stacks[1];
        CHECK_INT(s->nframes, 3);
        CHECK_INT(s->samples, 3);
        CHECK_INT(s->cpu_ns, 30000000);
        CHECK_INT(s->tid, 4242);
        CHECK(!s->truncated);
        CHECK(frame_named(&r, s->frames[0], "demo.Burner.spin"));
        CHECK(frame_named(&r, s->frames[1], "demo.Burner.burnLoop"));
        CHECK(frame_named(&r, s->frames[2], "demo.Burner.run"));
        CHECK(r.frames[s->frames[0]].inlined && !r.frames[s->frames[1]].inlined);
        CHECK_INT(r.frames[s->frames[0]].line, 7);
        CHECK(r.frames[s->frames[0]].file == NULL && r.frames[s->frames[0]].module == NULL);
        const struct cpu_stack *t = s == &r.stacks[0] ? &r.stacks[1] : &r.stacks[0];
        CHECK(t->truncated && t->nframes == 1 && t->samples == 2);
        cpu_report_free(&r);
    }
    free(w.b);
}

/* Two chunks in one file (a recording that rotated, or `cat a.jfr b.jfr`): samples of both, frames shared. */
static void test_two_chunks(void)
{
    struct buf w = {0};
    chunk(&w, 3, 2, 0);
    chunk(&w, 4, 0, 0);
    struct cpu_report r;
    char err[256] = "";
    int rc = jfr_read_report(w.b, w.n, 0, &r, err, sizeof err);
    CHECK_INT(rc, 0);
    if (rc == 0) {
        CHECK_INT(r.samples, 9);
        CHECK_INT(r.nstacks, 2);
        CHECK_INT(r.nframes, 4);
        CHECK(r.seconds > 3.99 && r.seconds < 4.01);
        long long most = r.stacks[0].samples > r.stacks[1].samples ? r.stacks[0].samples : r.stacks[1].samples;
        CHECK_INT(most, 7);
        cpu_report_free(&r);
    }
    free(w.b);
}

/* Every prefix of a good file is refused with a reason (or, cut at a chunk's end, read as the chunks before). */
static void check_truncations(const unsigned char *b, size_t n, size_t step)
{
    int refused = 0, bad = 0;
    for (size_t k = 0; k < n; k += step) {
        struct cpu_report r;
        char err[256] = "";
        int rc = jfr_read_report(b, k, 0, &r, err, sizeof err);
        if (rc == 0) cpu_report_free(&r);
        else if (rc != -EBADMSG || !err[0]) bad++;
        else refused++;
    }
    CHECK_INT(bad, 0);
    CHECK(refused > 0);
}

static void test_hostile(void)
{
    struct buf w = {0};
    chunk(&w, 3, 2, 0);
    check_truncations(w.b, w.n, 1);
    struct cpu_report r;
    char err[256] = "";
    CHECK_INT(jfr_read_report("", 0, 0, &r, err, sizeof err), -EBADMSG);
    CHECK(strstr(err, "cut short") != NULL);
    CHECK_INT(jfr_read_report("PK\3\4 not a recording at all, not at all, no no no no no no no no no no no", 72, 0, &r,
                              err, sizeof err),
              -EBADMSG);
    CHECK(strstr(err, "FLR") != NULL);
    /* lying sizes: the chunk bigger than the file, the metadata outside the chunk, another version */
    unsigned char *c = malloc(w.n);
    memcpy(c, w.b, w.n);
    c[8] = 0x7f;
    CHECK_INT(jfr_read_report(c, w.n, 0, &r, err, sizeof err), -EBADMSG);
    CHECK(strstr(err, "cut short") != NULL);
    memcpy(c, w.b, w.n);
    c[24] = 0x10;
    CHECK_INT(jfr_read_report(c, w.n, 0, &r, err, sizeof err), -EBADMSG);
    memcpy(c, w.b, w.n);
    c[5] = 1;
    CHECK_INT(jfr_read_report(c, w.n, 0, &r, err, sizeof err), -ENOTSUP);
    CHECK(strstr(err, "format 1.0") != NULL);
    /* every byte after the header flipped in turn: refused or read, never outside the buffer */
    int bad = 0;
    for (size_t i = 68; i < w.n; i++) {
        memcpy(c, w.b, w.n);
        c[i] ^= 0xff;
        int rc = jfr_read_report(c, w.n, 0, &r, err, sizeof err);
        if (rc == 0) cpu_report_free(&r);
        else if ((rc != -EBADMSG && rc != -ENOTSUP) || !err[0]) bad++;
    }
    CHECK_INT(bad, 0);
    free(c);
    free(w.b);
    /* a class that holds itself inline: a value without end, stopped */
    struct buf z = {0};
    chunk(&z, 1, 0, 1);
    CHECK_INT(jfr_read_report(z.b, z.n, 0, &r, err, sizeof err), -EBADMSG);
    CHECK(strstr(err, "nested too deep") != NULL);
    free(z.b);
}

static int by_count(const void *a, const void *b)
{
    const long long *x = a, *y = b;
    return x[0] < y[0] ? 1 : x[0] > y[0] ? -1 : (x[1] > y[1]) - (x[1] < y[1]);
}

/* A real recording: its samples and innermost methods, for the e2e test to compare with `jfr print`. */
static int read_real(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("cannot open %s\n", path);
        return 2;
    }
    size_t cap = 1 << 20, n = 0;
    unsigned char *b = malloc(cap);
    size_t got;
    while ((got = fread(b + n, 1, cap - n, f)) > 0)
        if ((n += got) == cap) b = realloc(b, cap *= 2);
    fclose(f);
    struct cpu_report r;
    char err[256] = "";
    int rc = jfr_read_report(b, n, 10000000, &r, err, sizeof err);
    if (rc < 0) {
        printf("error %s\n", err);
        free(b);
        return 1;
    }
    printf("samples %lld\n", r.samples);
    long long(*top)[2] = calloc((size_t)r.nframes + 1, sizeof *top); /* by frame: count, index */
    for (int i = 0; i < r.nframes; i++) top[i][1] = i;
    for (int s = 0; s < r.nstacks; s++)
        if (r.stacks[s].nframes) top[r.stacks[s].frames[0]][0] += r.stacks[s].samples;
    /* by method name, as jfr print shows it (lines and inlining merged) */
    for (int i = 0; i < r.nframes; i++)
        for (int j = 0; j < i; j++)
            if (top[j][0] && !strcmp(r.frames[j].function, r.frames[i].function)) {
                top[j][0] += top[i][0];
                top[i][0] = 0;
                break;
            }
    qsort(top, (size_t)r.nframes, sizeof *top, by_count);
    for (int i = 0; i < r.nframes && i < 5 && top[i][0]; i++)
        printf("top %lld %s\n", top[i][0], r.frames[top[i][1]].function);
    free(top);
    cpu_report_free(&r);
    check_suite = "jfr (real file)";
    check_truncations(b, n, n / 3000 + 1);
    free(b);
    return check_failed_tests ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 2) return read_real(argv[1]);
    check_suite = "jfr";
    RUN(test_one_chunk);
    RUN(test_two_chunks);
    RUN(test_hostile);
    CHECK_EXIT();
}
