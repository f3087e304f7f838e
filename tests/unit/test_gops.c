/* The gops provider's parts: the protobuf reader, the goroutine dump, memstats and setgc replies, pprof profiles
 * (real ones from the Go target in tests/fixtures, cross-checked with `go tool pprof -top`, and hostile ones), the
 * transport against an in-process fake agent (hung, garbage, endless, refusing, resetting), saved files. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "actions/runtimes/go/gops_client.h"
#include "actions/runtimes/go/gops_parse.h"
#include "actions/runtimes/go/pprof_read.h"
#include "actions/runtimes/provider.h"
#include "util/saved_file.h"
#include "check.h"
#include "collect/runtime.h"
#include "util/clock.h"
#include "util/protobuf.h"

/* ---- helpers: building protobuf and gzip bytes ---- */

struct buf {
    unsigned char *p;
    size_t n, cap;
};

static void buf_put(struct buf *b, const void *data, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
}

static void put_varint(struct buf *b, uint32_t field, uint64_t v)
{
    unsigned char t[PB_VARINT_MAX * 2];
    size_t n = pb_put_tag(t, field, PB_VARINT);
    n += pb_put_varint(t + n, v);
    buf_put(b, t, n);
}

static void put_bytes(struct buf *b, uint32_t field, const void *data, size_t len)
{
    unsigned char t[PB_VARINT_MAX * 2];
    size_t n = pb_put_tag(t, field, PB_LEN);
    n += pb_put_varint(t + n, len);
    buf_put(b, t, n);
    buf_put(b, data, len);
}

static void put_msg(struct buf *b, uint32_t field, struct buf *m)
{
    put_bytes(b, field, m->p, m->n);
    free(m->p);
    memset(m, 0, sizeof *m);
}

static void put_str(struct buf *b, const char *s) { put_bytes(b, 6, s, strlen(s)); }

static void put_type(struct buf *b, int64_t type, int64_t unit)
{
    struct buf m = {0};
    put_varint(&m, 1, (uint64_t)type);
    put_varint(&m, 2, (uint64_t)unit);
    put_msg(b, 1, &m);
}

static void put_function(struct buf *b, uint64_t id, int64_t name, int64_t file)
{
    struct buf m = {0};
    put_varint(&m, 1, id);
    put_varint(&m, 2, (uint64_t)name);
    put_varint(&m, 4, (uint64_t)file);
    put_msg(b, 5, &m);
}

/* A location with lines (function id, line) pairs, innermost first. */
static void put_location(struct buf *b, uint64_t id, uint64_t address, int nlines, const uint64_t *lines)
{
    struct buf m = {0};
    put_varint(&m, 1, id);
    put_varint(&m, 3, address);
    for (int i = 0; i < nlines; i++) {
        struct buf l = {0};
        put_varint(&l, 1, lines[2 * i]);
        put_varint(&l, 2, lines[2 * i + 1]);
        put_msg(&m, 4, &l);
    }
    put_msg(b, 4, &m);
}

/* A sample with packed location ids and values. */
static void put_sample(struct buf *b, int nloc, const uint64_t *locs, int nval, const int64_t *vals)
{
    struct buf m = {0}, packed = {0};
    unsigned char v[PB_VARINT_MAX];
    for (int i = 0; i < nloc; i++) buf_put(&packed, v, pb_put_varint(v, locs[i]));
    put_msg(&m, 1, &packed);
    for (int i = 0; i < nval; i++) buf_put(&packed, v, pb_put_varint(v, (uint64_t)vals[i]));
    put_msg(&m, 2, &packed);
    put_msg(b, 2, &m);
}

static unsigned char *gzip_bytes(const void *data, size_t len, size_t *outlen)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    size_t cap = deflateBound(&z, len) + 64;
    unsigned char *out = malloc(cap);
    z.next_in = (unsigned char *)data;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    deflate(&z, Z_FINISH);
    *outlen = cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

static const struct rt_profile_row *prow(const struct rt_profile *p, const char *fn)
{
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->rows[i].function, fn) == 0) return &p->rows[i];
    return NULL;
}

/* ---- protobuf ---- */

static void varints_round_trip(void)
{
    const uint64_t vals[] = {0, 1, 127, 128, 300, 16383, 16384, 1ULL << 35, 1ULL << 63, UINT64_MAX};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        unsigned char b[PB_VARINT_MAX];
        size_t n = pb_put_varint(b, vals[i]);
        struct pb_reader r;
        uint64_t v = 0;
        pb_reader_init(&r, b, n);
        CHECK_INT(pb_read_varint(&r, &v), 0);
        CHECK(v == vals[i]);
        CHECK(!pb_more(&r));
    }
    unsigned char b[PB_VARINT_MAX];
    CHECK_INT(pb_put_varint(b, UINT64_MAX), 10);
    CHECK_INT(pb_put_varint(b, 300), 2);
    CHECK_INT(b[0], 0xac);
    CHECK_INT(b[1], 0x02);
}

static void malformed_varints_and_fields_fail(void)
{
    struct pb_reader r;
    uint64_t v;
    struct pb_field f;
    const unsigned char eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    pb_reader_init(&r, eleven, sizeof eleven);
    CHECK_INT(pb_read_varint(&r, &v), -EBADMSG);
    const unsigned char tenth_too_big[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    pb_reader_init(&r, tenth_too_big, sizeof tenth_too_big);
    CHECK_INT(pb_read_varint(&r, &v), -EBADMSG);
    const unsigned char truncated[] = {0x96};
    pb_reader_init(&r, truncated, 1);
    CHECK_INT(pb_read_varint(&r, &v), -EBADMSG);
    CHECK(!pb_more(&r));

    const unsigned char len_past_end[] = {0x0a, 0x05, 'a', 'b'};
    pb_reader_init(&r, len_past_end, sizeof len_past_end);
    CHECK_INT(pb_next(&r, &f), -EBADMSG);
    const unsigned char huge_len[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
    pb_reader_init(&r, huge_len, sizeof huge_len);
    CHECK_INT(pb_next(&r, &f), -EBADMSG);
    const unsigned char field_zero[] = {0x00, 0x01};
    pb_reader_init(&r, field_zero, sizeof field_zero);
    CHECK_INT(pb_next(&r, &f), -EBADMSG);
    const unsigned char group[] = {0x0b, 0x0c};
    pb_reader_init(&r, group, sizeof group);
    CHECK_INT(pb_next(&r, &f), -EBADMSG);
    const unsigned char short_fixed[] = {0x09, 1, 2, 3};
    pb_reader_init(&r, short_fixed, sizeof short_fixed);
    CHECK_INT(pb_next(&r, &f), -EBADMSG);

    const unsigned char good[] = {0x08, 0x96, 0x01, 0x12, 0x02, 'h', 'i', 0x1d, 1, 0, 0, 0, 0x21, 2, 0, 0, 0, 0, 0, 0, 0x80};
    pb_reader_init(&r, good, sizeof good);
    CHECK_INT(pb_next(&r, &f), 1);
    CHECK_INT(f.number, 1);
    CHECK_INT(f.u, 150);
    CHECK_INT(pb_next(&r, &f), 1);
    CHECK_INT(f.wire, PB_LEN);
    CHECK_INT(f.len, 2);
    CHECK(memcmp(f.data, "hi", 2) == 0);
    CHECK_INT(pb_next(&r, &f), 1);
    CHECK_INT(f.wire, PB_FIXED32);
    CHECK_INT(f.u, 1);
    CHECK_INT(pb_next(&r, &f), 1);
    CHECK_INT(f.wire, PB_FIXED64);
    CHECK(f.u == 0x8000000000000002ULL);
    CHECK_INT(pb_next(&r, &f), 0);
}

static int collect(void *arg, uint64_t v)
{
    struct buf *b = arg;
    buf_put(b, &v, sizeof v);
    return 0;
}

static void packed_and_unpacked_repeated(void)
{
    const unsigned char packed[] = {0x0a, 0x03, 0x01, 0xac, 0x02};
    struct pb_reader r;
    struct pb_field f;
    struct buf got = {0};
    pb_reader_init(&r, packed, sizeof packed);
    CHECK_INT(pb_next(&r, &f), 1);
    CHECK_INT(pb_each_varint(&f, collect, &got), 0);
    CHECK_INT(got.n, 2 * sizeof(uint64_t));
    CHECK_INT(((uint64_t *)got.p)[1], 300);
    const unsigned char single[] = {0x08, 0x07};
    pb_reader_init(&r, single, sizeof single);
    CHECK_INT(pb_next(&r, &f), 1);
    CHECK_INT(pb_each_varint(&f, collect, &got), 0);
    CHECK_INT(((uint64_t *)got.p)[2], 7);
    const unsigned char bad_run[] = {0x0a, 0x01, 0x80};
    pb_reader_init(&r, bad_run, sizeof bad_run);
    CHECK_INT(pb_next(&r, &f), 1);
    CHECK_INT(pb_each_varint(&f, collect, &got), -EBADMSG);
    free(got.p);
}

static void zigzag(void)
{
    CHECK_INT(pb_zigzag_encode(0), 0);
    CHECK_INT(pb_zigzag_encode(-1), 1);
    CHECK_INT(pb_zigzag_encode(1), 2);
    CHECK_INT(pb_zigzag_encode(-2), 3);
    CHECK(pb_zigzag_encode(INT64_MAX) == UINT64_MAX - 1);
    CHECK(pb_zigzag_encode(INT64_MIN) == UINT64_MAX);
    CHECK(pb_zigzag_decode(UINT64_MAX) == INT64_MIN);
    CHECK_INT(pb_zigzag_decode(3), -2);
}

/* ---- setgc ---- */

static void setgc_is_a_zigzag_varint(void)
{
    unsigned char b[16];
    CHECK_INT(gops_encode_setgc(50, b), 2);
    CHECK(b[0] == 0x10 && b[1] == 0x64);
    CHECK_INT(gops_encode_setgc(-1, b), 2);
    CHECK(b[0] == 0x10 && b[1] == 0x01);
    CHECK_INT(gops_encode_setgc(100, b), 3);
    CHECK(b[0] == 0x10 && b[1] == 0xc8 && b[2] == 0x01);
    CHECK_INT(gops_encode_setgc(0, b), 2);
    CHECK(b[1] == 0x00);

    char *msg = NULL, err[256];
    const char reply[] = "New GC percent set to 50. Previous value was 100.\n";
    CHECK_INT(gops_parse_setgc(reply, sizeof reply - 1, &msg, err, sizeof err), 0);
    CHECK_STR(msg, "New GC percent set to 50. Previous value was 100.");
    free(msg);
    CHECK_INT(gops_parse_setgc("ok", 2, &msg, err, sizeof err), -EBADMSG);
    CHECK(msg == NULL);
    CHECK_INT(gops_parse_setgc("New GC percent set to \x1b[2J", 26, &msg, err, sizeof err), -EBADMSG);
}

/* ---- goroutine dumps ---- */

static const struct rt_thread *goroutine(const struct rt_stack *s, long long id)
{
    for (int i = 0; i < s->n; i++)
        if (s->threads[i].id == id) return &s->threads[i];
    return NULL;
}

static void goroutine_dump_of_the_go_target(void)
{
    size_t n;
    char *text = fixture("gops_stack.txt", &n), err[256];
    struct rt_stack s = {0};
    CHECK_INT(gops_parse_stack(text, n, &s, err, sizeof err), 0);
    CHECK_INT(s.n, 4);
    const struct rt_thread *t = &s.threads[0];
    CHECK_INT(t->id, 1);
    CHECK_STR(t->state, "running");
    CHECK_INT(t->wait_seconds, -1);
    CHECK_INT(t->nframes, 5);
    CHECK_STR(t->frames[0].function, "runtime/pprof.writeGoroutineStacks");
    CHECK_STR(t->frames[0].file, "/usr/lib/go-1.19/src/runtime/pprof/pprof.go");
    CHECK_INT(t->frames[0].line, 692);
    CHECK_STR(t->frames[2].function, "runtime/pprof.(*Profile).WriteTo");
    CHECK_STR(t->frames[4].function, "main.main");
    CHECK(t->created_by == NULL);
    t = &s.threads[1];
    CHECK_STR(t->state, "chan receive");
    CHECK_STR(t->frames[0].function, "main.parkedReceive");
    CHECK_STR(t->frames[0].file, "/work/main/tests/targets/gopsy/main.go");
    CHECK(t->created_by && strncmp(t->created_by, "main.main in /work/main/tests/targets/gopsy/main.go:", 52) == 0);
    t = &s.threads[2];
    CHECK_STR(t->state, "sleep");
    CHECK_STR(t->frames[0].function, "time.Sleep");
    CHECK_STR(t->frames[1].function, "main.parkedSleep");
    rt_stack_free(&s);
    free(text);
}

static void goroutine_dump_forms(void)
{
    size_t n;
    char *text = fixture("gops_stack_forms.txt", &n), err[256];
    struct rt_stack s = {0};
    CHECK_INT(gops_parse_stack(text, n, &s, err, sizeof err), 0);
    CHECK_INT(s.n, 7); /* "goroutine x" is not one */
    const struct rt_thread *t = goroutine(&s, 7);
    CHECK(t != NULL);
    if (t) {
        CHECK_STR(t->state, "chan receive");
        CHECK_INT(t->wait_seconds, 180);
        CHECK_INT(t->nframes, 2);
        CHECK_STR(t->frames[0].function, "main.(*Server).wait");
        CHECK_STR(t->frames[0].file, "/src/app/server.go");
        CHECK_INT(t->frames[0].line, 88);
        CHECK_STR(t->frames[1].function, "main.worker"); /* inlined: "(...)", no offset */
        CHECK_INT(t->frames[1].line, 120);
        CHECK_STR(t->created_by, "main.start in /src/app/main.go:30");
    }
    t = goroutine(&s, 9);
    CHECK(t != NULL);
    if (t) {
        CHECK_STR(t->state, "syscall, locked to thread");
        CHECK_INT(t->wait_seconds, 60);
        CHECK_STR(t->created_by, "main.start in /src/app/main.go:31 (goroutine 1)");
    }
    t = goroutine(&s, 18); /* Go 1.23's gp=/m= header, fp= after the line, elided frames */
    CHECK(t != NULL);
    if (t) {
        CHECK_STR(t->state, "select (no cases)");
        CHECK_INT(t->wait_seconds, 125 * 60);
        CHECK_INT(t->nframes, 1);
        CHECK_STR(t->frames[0].function, "runtime.gopark");
        CHECK_INT(t->frames[0].line, 402);
        CHECK_STR(t->frames[0].file, "/usr/lib/go/src/runtime/proc.go");
        CHECK_STR(t->created_by, "net/http.(*Server).Serve in /usr/lib/go/src/net/http/server.go:3285 (goroutine 1)");
    }
    t = goroutine(&s, 20); /* running elsewhere: no frames, created by without a location */
    CHECK(t != NULL);
    if (t) {
        CHECK_INT(t->nframes, 0);
        CHECK_STR(t->created_by, "main.start");
    }
    t = goroutine(&s, 22); /* CRLF lines, a Windows path with a drive colon */
    CHECK(t != NULL);
    if (t) {
        CHECK_STR(t->state, "sleep");
        CHECK_STR(t->frames[0].file, "/C:/go/src/runtime/time.go");
        CHECK_INT(t->frames[0].line, 195);
    }
    CHECK(goroutine(&s, 21) != NULL);
    rt_stack_free(&s);
    free(text);
}

static void goroutine_dump_garbage(void)
{
    struct rt_stack s = {0};
    char err[256];
    CHECK_INT(gops_parse_stack("", 0, &s, err, sizeof err), -EBADMSG);
    const char junk[] = "\x00\xffnot\x1b[2Jwhat you asked for\x00";
    CHECK_INT(gops_parse_stack(junk, sizeof junk - 1, &s, err, sizeof err), -EBADMSG);
    CHECK(strstr(err, "not a goroutine dump") != NULL);
    /* a header without the closing "]:", and one with an id too big */
    const char bad[] = "goroutine 1 [running\ngoroutine 99999999999999999999999 [x]:\n";
    CHECK_INT(gops_parse_stack(bad, sizeof bad - 1, &s, err, sizeof err), -EBADMSG);
    /* deep stacks are capped; a frame line without its location keeps file NULL */
    struct buf b = {0};
    buf_put(&b, "goroutine 5 [running]:\n", 23);
    for (int i = 0; i < 5000; i++) buf_put(&b, "f()\n", 4);
    CHECK_INT(gops_parse_stack((char *)b.p, b.n, &s, err, sizeof err), 0);
    CHECK_INT(s.n, 1);
    CHECK_INT(s.threads[0].nframes, 1024);
    CHECK(s.threads[0].frames[0].file == NULL);
    rt_stack_free(&s);
    free(b.p);
    /* every prefix parses without reading past it (ASan) */
    size_t n;
    char *text = fixture("gops_stack_forms.txt", &n);
    for (size_t l = 0; l <= n; l++) {
        char *copy = malloc(l ? l : 1);
        memcpy(copy, text, l);
        struct rt_stack p = {0};
        gops_parse_stack(copy, l, &p, err, sizeof err);
        rt_stack_free(&p);
        free(copy);
    }
    free(text);
}

/* ---- memstats ---- */

static const struct rt_field *field(const struct rt_fields *fs, const char *key) { return rt_fields_find(fs, key); }

static void memstats_new_names(void)
{
    size_t n;
    char *text = fixture("gops_memstats_new.txt", &n), err[256];
    struct rt_fields fs = {0};
    CHECK_INT(gops_parse_memstats(text, n, &fs, err, sizeof err), 0);
    CHECK_INT(fs.n, 31);
    const struct rt_field *f = field(&fs, "heap_alloc");
    CHECK(f && f->unit == RT_BYTES && strcmp(f->section, "memstats") == 0);
    /* the exact integer of "16.57MB (17372744 bytes)" */
    const char *p = strstr(text, "heap-alloc: ");
    const char *open = strchr(p, '(');
    CHECK(f && f->u == strtoull(open + 1, NULL, 10));
    CHECK((f = field(&fs, "lookups")) && f->unit == RT_COUNT && f->u == 0);
    CHECK((f = field(&fs, "mspan_in_use")) && f->unit == RT_BYTES);
    CHECK((f = field(&fs, "buck_hash_sys")) && f->unit == RT_BYTES);
    CHECK((f = field(&fs, "next_gc")) && f->unit == RT_BYTES && f->u > 1000000);
    CHECK((f = field(&fs, "last_gc")) && f->unit == RT_TEXT && strstr(f->text, " UTC"));
    CHECK((f = field(&fs, "gc_pause_total")) && f->unit == RT_NANOSECONDS && f->u > 0);
    CHECK((f = field(&fs, "gc_pause")) && f->unit == RT_NANOSECONDS);
    CHECK((f = field(&fs, "gc_pause_end")) && f->unit == RT_TIME && f->u > 1700000000000000000ULL);
    CHECK((f = field(&fs, "num_gc")) && f->unit == RT_COUNT && f->u >= 1);
    CHECK((f = field(&fs, "gc_cpu_fraction")) && f->is_double && f->d > 0 && f->d < 1);
    CHECK((f = field(&fs, "enable_gc")) && f->unit == RT_BOOL && f->u == 1);
    CHECK((f = field(&fs, "debug_gc")) && f->unit == RT_BOOL && f->u == 0);
    rt_fields_free(&fs);
    free(text);
}

static void memstats_old_names(void)
{
    size_t n;
    char *text = fixture("gops_memstats_old.txt", &n), err[256];
    struct rt_fields fs = {0};
    CHECK_INT(gops_parse_memstats(text, n, &fs, err, sizeof err), 0);
    CHECK_INT(fs.n, 30);
    const struct rt_field *f;
    CHECK((f = field(&fs, "mspan_in_use")) && f->unit == RT_BYTES && f->u == 21024);
    CHECK((f = field(&fs, "mspan_sys")) && f->u == 32544);
    CHECK((f = field(&fs, "mcache_in_use")) && f->u == 2400);
    CHECK((f = field(&fs, "mcache_sys")) && f->u == 15600);
    CHECK(field(&fs, "stack_mspan_inuse") == NULL);
    CHECK(field(&fs, "buck_hash_sys") == NULL);
    CHECK((f = field(&fs, "debug_gc")) && f->unit == RT_BOOL && f->u == 0); /* last line, no newline */
    CHECK((f = field(&fs, "gc_pause_total")) && f->u == 288871);            /* "288.871µs" */
    rt_fields_free(&fs);
    free(text);
}

static void memstats_value_forms(void)
{
    const char text[] = "alloc: 123 bytes\n"
                        "sys: 1.00PB (1125899906842624 bytes)\n"
                        "heap-sys: 16.00EB (18446744073709551615 bytes)\n"
                        "heap-idle: 16.00EB (18446744073709551616 bytes)\n"
                        "next-gc: when heap-alloc >= 4.00MB (4194304 bytes)\r\n"
                        "last-gc: -\n"
                        "gc-pause-total: 1h2m3.000000004s\n"
                        "gc-cpu-fraction: 6.9e-05\n"
                        "enable-gc: maybe\n"
                        "mallocs: 12x\n"
                        "alloc: 999 bytes\n"
                        "future-field: 2.00KB (2048 bytes)\n"
                        "another one: 42\n"
                        "no colon here\n"
                        "\x1b[2J: 5\n"
                        "heap-objects: 7";
    struct rt_fields fs = {0};
    char err[256];
    CHECK_INT(gops_parse_memstats(text, sizeof text - 1, &fs, err, sizeof err), 0);
    const struct rt_field *f;
    CHECK((f = field(&fs, "alloc")) && f->unit == RT_BYTES && f->u == 123); /* the first of two wins */
    CHECK((f = field(&fs, "sys")) && f->u == 1125899906842624ULL);
    CHECK((f = field(&fs, "heap_sys")) && f->unit == RT_BYTES && f->u == 18446744073709551615ULL);
    CHECK((f = field(&fs, "heap_idle")) && f->unit == RT_TEXT); /* 2^64 does not fit: kept as written */
    CHECK((f = field(&fs, "next_gc")) && f->unit == RT_BYTES && f->u == 4194304);
    CHECK((f = field(&fs, "last_gc")) && f->unit == RT_TEXT && strcmp(f->text, "-") == 0);
    CHECK((f = field(&fs, "gc_pause_total")) && f->unit == RT_NANOSECONDS && f->u == 3723000000004ULL);
    CHECK((f = field(&fs, "gc_cpu_fraction")) && f->is_double && f->d > 6.89e-05 && f->d < 6.91e-05);
    CHECK((f = field(&fs, "enable_gc")) && f->unit == RT_TEXT && strcmp(f->text, "maybe") == 0);
    CHECK((f = field(&fs, "mallocs")) && f->unit == RT_TEXT);
    CHECK((f = field(&fs, "future_field")) && f->unit == RT_BYTES && f->u == 2048);
    CHECK((f = field(&fs, "another_one")) && f->unit == RT_COUNT && f->u == 42 && !strcmp(f->label, "another one"));
    CHECK((f = field(&fs, "heap_objects")) && f->unit == RT_COUNT && f->u == 7);
    for (int i = 0; i < fs.n; i++) CHECK(strchr(fs.f[i].key, '\x1b') == NULL && strchr(fs.f[i].label, '\x1b') == NULL);
    rt_fields_free(&fs);
    const char junk[] = "\x00\xffnot\x1b[2Jwhat you asked for\x00";
    CHECK_INT(gops_parse_memstats(junk, sizeof junk - 1, &fs, err, sizeof err), -EBADMSG);
    CHECK_INT(fs.n, 0);
}

static int is_snake(const char *k)
{
    if (!(*k >= 'a' && *k <= 'z')) return 0;
    for (; *k; k++)
        if (!((*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') || *k == '_')) return 0;
    return 1;
}

/* JSON keys: the snake_case of each label (text_snake_key), unique within the fields. */
static void field_keys_are_snake_case(void)
{
    struct rt_fields fs = {0};
    CHECK_INT(rt_fields_add_u64(&fs, "s", "heap-alloc", RT_BYTES, 1), 0);
    CHECK_INT(rt_fields_add_u64(&fs, "s", "heap alloc", RT_BYTES, 2), 0);
    CHECK_INT(rt_fields_add_u64(&fs, "s", "Heap Alloc", RT_BYTES, 3), 0);
    CHECK(fs.n == 3 && !strcmp(fs.f[1].key, "heap_alloc_2") && !strcmp(fs.f[2].key, "heap_alloc_3"));
    CHECK(!strcmp(fs.f[2].label, "Heap Alloc") && rt_fields_find(&fs, "heap_alloc")->u == 1);
    rt_fields_free(&fs);
    size_t n;
    char *text = fixture("gops_memstats_new.txt", &n), err[256];
    CHECK_INT(gops_parse_memstats(text, n, &fs, err, sizeof err), 0);
    free(text);
    text = fixture("gops_stats.txt", &n);
    CHECK_INT(gops_parse_stats(text, n, &fs, err, sizeof err), 0);
    for (int i = 0; i < fs.n; i++) CHECK(is_snake(fs.f[i].key));
    rt_fields_free(&fs);
    free(text);
}

static void go_durations(void)
{
    unsigned long long ns;
#define DUR(s, v) CHECK(gops_parse_duration(s, strlen(s), &ns) == 0 && ns == (v))
#define NOT_DUR(s) CHECK(gops_parse_duration(s, strlen(s), &ns) < 0)
    DUR("0s", 0);
    DUR("0", 0);
    DUR("5.249509ms", 5249509);
    DUR("43.722\xc2\xb5s", 43722); /* micro sign, as Go writes it */
    DUR("43.722\xce\xbcs", 43722); /* Greek mu */
    DUR("43.722us", 43722);
    DUR("999ns", 999);
    DUR("1.5s", 1500000000ULL);
    DUR("2m0.5s", 120500000000ULL);
    DUR("1h2m3.000000004s", 3723000000004ULL);
    DUR("2562047h47m16.854775807s", 9223372036854775807ULL);
    NOT_DUR("");
    NOT_DUR("5");
    NOT_DUR("ms");
    NOT_DUR("-1s");
    NOT_DUR("1.s5");
    NOT_DUR("5parsecs");
    NOT_DUR("99999999999999999999h");
#undef DUR
#undef NOT_DUR
}

static void stats_and_version(void)
{
    size_t n;
    char *text = fixture("gops_stats.txt", &n), err[256];
    struct rt_fields fs = {0};
    CHECK_INT(gops_parse_stats(text, n, &fs, err, sizeof err), 0);
    const struct rt_field *f;
    CHECK((f = field(&fs, "goroutines")) && f->unit == RT_COUNT && f->u == 4 && strcmp(f->section, "runtime") == 0);
    CHECK((f = field(&fs, "os_threads")) && f->unit == RT_COUNT && f->u >= 1 && !strcmp(f->label, "OS threads"));
    CHECK((f = field(&fs, "gomaxprocs")) && f->unit == RT_COUNT);
    CHECK((f = field(&fs, "num_cpu")) && f->unit == RT_COUNT);
    CHECK_INT(gops_parse_version("go1.19.8\n", 9, &fs, err, sizeof err), 0);
    CHECK((f = field(&fs, "version")) && f->unit == RT_TEXT && strcmp(f->text, "go1.19.8") == 0);
    CHECK_INT(gops_parse_version("", 0, &fs, err, sizeof err), -EBADMSG);
    CHECK_INT(gops_parse_version("\x1b[2J\n", 5, &fs, err, sizeof err), -EBADMSG);
    rt_fields_free(&fs);
    free(text);
}

/* ---- pprof ---- */

/* `go tool pprof -top tests/fixtures/gops_cpu.pb.gz`:
 *     2860ms 98.62% 98.62%     2890ms 99.66%  main.burnLeaf
 *       30ms  1.03% 99.66%       30ms  1.03%  runtime.asyncPreempt
 *          0     0% 99.66%     2890ms 99.66%  main.burnCPU
 * Total samples = 2900ms, Duration: 3.12s; one sample's location holds runtime.lock inlined in findRunnable. */
static void cpu_profile_of_the_go_target(void)
{
    size_t n;
    char *gz = fixture("gops_cpu.pb.gz", &n), err[256] = "";
    struct rt_profile p = {0};
    CHECK_INT(pprof_read_profile(gz, n, &p, err, sizeof err), 0);
    CHECK_STR(p.unit, "nanoseconds");
    CHECK_INT(p.total, 2900000000LL);
    CHECK(p.seconds > 3.0 && p.seconds < 3.2);
    CHECK(p.n > 3);
    CHECK_STR(p.rows[0].function, "main.burnLeaf");
    CHECK_STR(p.rows[0].file, "/work/main/tests/targets/gopsy/main.go");
    CHECK_INT(p.rows[0].flat, 2860000000LL);
    CHECK_INT(p.rows[0].cum, 2890000000LL);
    const struct rt_profile_row *r;
    CHECK((r = prow(&p, "main.burnCPU")) && r->flat == 0 && r->cum == 2890000000LL);
    CHECK((r = prow(&p, "runtime.asyncPreempt")) && r->flat == 30000000LL && r->cum == 30000000LL);
    CHECK((r = prow(&p, "runtime.lock")) && r->flat == 0 && r->cum == 10000000LL);         /* inlined */
    CHECK((r = prow(&p, "runtime.lock2")) && r->flat == 10000000LL);
    for (int i = 1; i < p.n; i++) CHECK(p.rows[i - 1].flat >= p.rows[i].flat);
    rt_profile_free(&p);
    free(gz);
}

/* `go tool pprof -raw tests/fixtures/gops_heap.pb.gz`: three stacks; growHeap's (main.go:173 <- main.main:220 <-
 * runtime.main) with 17 objects, 18190449 bytes, in use and allocated. */
static void heap_profile_of_the_go_target(void)
{
    size_t n;
    char *gz = fixture("gops_heap.pb.gz", &n), err[256] = "";
    struct rt_heap h = {0};
    CHECK_INT(pprof_read_heap(gz, n, &h, err, sizeof err), 0);
    CHECK_INT(h.n, 3);
    const struct rt_heap_row *r = &h.rows[0];
    CHECK_STR(r->name, "main.growHeap");
    CHECK_INT(r->count, 17);
    CHECK_INT(r->bytes, 18190449);
    CHECK_INT(r->alloc_count, 17);
    CHECK_INT(r->alloc_bytes, 18190449);
    CHECK_INT(r->nstack, 3);
    if (r->nstack == 3) {
        CHECK_STR(r->stack[0].function, "main.growHeap");
        CHECK_STR(r->stack[0].file, "/work/main/tests/targets/gopsy/main.go");
        CHECK_INT(r->stack[0].line, 173);
        CHECK_STR(r->stack[1].function, "main.main");
        CHECK_INT(r->stack[1].line, 220);
        CHECK_STR(r->stack[2].function, "runtime.main");
        CHECK_STR(r->stack[2].file, "/usr/lib/go-1.19/src/runtime/proc.go");
    }
    CHECK_INT(h.total_bytes, 18190449 + 524328 + 524496);
    CHECK_INT(h.total_count, 17 + 6554 + 1260);
    CHECK(h.rows[1].bytes >= h.rows[2].bytes);
    rt_heap_free(&h);
    /* not a CPU profile, but it decodes as one: the last sample type */
    struct rt_profile p = {0};
    CHECK_INT(pprof_read_profile(gz, n, &p, err, sizeof err), 0);
    CHECK_STR(p.unit, "bytes");
    rt_profile_free(&p);
    free(gz);
}

static void truncated_and_corrupt_profiles_fail_cleanly(void)
{
    size_t n;
    char *gz = fixture("gops_cpu.pb.gz", &n), err[256];
    for (size_t l = 0; l < n; l++) { /* every truncation of the gzip stream */
        struct rt_profile p = {0};
        int rc = pprof_read_profile(gz, l, &p, err, sizeof err);
        CHECK(rc < 0);
        CHECK(p.n == 0 && p.rows == NULL);
    }
    unsigned char *raw;
    size_t rawlen;
    CHECK_INT(pprof_gunzip(gz, n, PPROF_MAX_BYTES, &raw, &rawlen, err, sizeof err), 0);
    for (size_t l = 0; l < rawlen; l++) { /* every truncation of the protobuf, copied so ASan sees overreads */
        unsigned char *c = malloc(l ? l : 1);
        memcpy(c, raw, l);
        struct rt_profile p = {0};
        struct rt_heap h = {0};
        if (pprof_read_profile(c, l, &p, err, sizeof err) == 0) rt_profile_free(&p);
        if (pprof_read_heap(c, l, &h, err, sizeof err) == 0) rt_heap_free(&h);
        free(c);
    }
    unsigned seed = 12345;
    for (int round = 0; round < 2000; round++) { /* flipped bytes */
        unsigned char *c = malloc(rawlen);
        memcpy(c, raw, rawlen);
        for (int k = 0; k < 3; k++) c[rand_r(&seed) % rawlen] = (unsigned char)rand_r(&seed);
        struct rt_profile p = {0};
        if (pprof_read_profile(c, rawlen, &p, err, sizeof err) == 0) rt_profile_free(&p);
        free(c);
    }
    free(raw);
    const char junk[] = "\x00\xffnot\x1b[2Jwhat you asked for\x00";
    struct rt_profile p = {0};
    CHECK(pprof_read_profile(junk, sizeof junk - 1, &p, err, sizeof err) < 0);
    CHECK(strstr(err, "pprof") != NULL);
    CHECK(pprof_read_profile("\x1f\x8b garbage after the magic", 26, &p, err, sizeof err) == -EBADMSG);
    CHECK(strstr(err, "gzip") != NULL);
    CHECK(pprof_read_profile("", 0, &p, err, sizeof err) < 0);
    free(gz);
}

static void gzip_bombs_are_refused(void)
{
    size_t zn = 4u << 20, gzn;
    unsigned char *zeros = calloc(1, zn);
    unsigned char *gz = gzip_bytes(zeros, zn, &gzn), *out;
    size_t outlen;
    char err[256];
    CHECK(gzn < 64 * 1024);
    CHECK_INT(pprof_gunzip(gz, gzn, 1u << 20, &out, &outlen, err, sizeof err), -EFBIG);
    CHECK(out == NULL);
    CHECK(strstr(err, "refused") != NULL);
    CHECK_INT(pprof_gunzip(gz, gzn, 8u << 20, &out, &outlen, err, sizeof err), 0);
    CHECK_INT(outlen, zn);
    free(out);
    free(gz);
    free(zeros);
}

/* A small profile built here: functions A (1), B (2), C (3); string 7 is beyond the table. */
static void hostile_references_are_skipped(void)
{
    struct buf b = {0};
    put_type(&b, 1, 2);             /* samples/count */
    put_type(&b, 3, 4);             /* cpu/nanoseconds: chosen by name although second */
    put_function(&b, 1, 5, 8);      /* A in a.go */
    put_function(&b, 2, 6, 8);      /* B */
    put_function(&b, 3, 99, 8);     /* name beyond the string table: its lines are skipped */
    put_function(&b, 4, 5, 8);      /* A again under another id: the same row */
    put_location(&b, 10, 0x1000, 1, (uint64_t[]){1, 11});
    put_location(&b, 11, 0x2000, 1, (uint64_t[]){2, 22});
    put_location(&b, 12, 0x3000, 1, (uint64_t[]){3, 33});         /* only the bad function: named by address */
    put_location(&b, 13, 0x4000, 2, (uint64_t[]){42, 1, 4, 44});  /* unknown function 42, then A */
    /* A <- B <- A (recursion counts once in cum) <- unknown location 77 */
    put_sample(&b, 4, (uint64_t[]){10, 11, 13, 77}, 2, (int64_t[]){1, 100});
    put_sample(&b, 2, (uint64_t[]){12, 11}, 2, (int64_t[]){1, 10});
    put_sample(&b, 1, (uint64_t[]){0}, 2, (int64_t[]){1, 1}); /* id 0 is never a location */
    put_sample(&b, 1, (uint64_t[]){11}, 1, (int64_t[]){5});  /* too few values: cpu counts 0 */
    const char *strings[] = {"", "samples", "count", "cpu", "nanoseconds", "A", "B", "unused", "a.go"};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) put_str(&b, strings[i]);
    put_varint(&b, 10, 2500000000ULL); /* duration_nanos */

    struct rt_profile p = {0};
    char err[256] = "";
    CHECK_INT(pprof_read_profile(b.p, b.n, &p, err, sizeof err), 0);
    CHECK_STR(p.unit, "nanoseconds");
    CHECK(p.seconds == 2.5);
    CHECK_INT(p.total, 111);
    const struct rt_profile_row *r;
    CHECK((r = prow(&p, "A")) && r->flat == 100 && r->cum == 100 && r->file && strcmp(r->file, "a.go") == 0);
    CHECK((r = prow(&p, "B")) && r->flat == 0 && r->cum == 110);
    CHECK((r = prow(&p, "0x3000")) && r->flat == 10 && r->cum == 10 && r->file == NULL);
    CHECK_INT(p.n, 3);
    rt_profile_free(&p);

    /* the same bytes gzipped decode the same */
    size_t gzn;
    unsigned char *gz = gzip_bytes(b.p, b.n, &gzn);
    CHECK_INT(pprof_read_profile(gz, gzn, &p, err, sizeof err), 0);
    CHECK_INT(p.total, 111);
    rt_profile_free(&p);
    free(gz);

    /* no heap sample types: not a heap profile */
    struct rt_heap h = {0};
    CHECK_INT(pprof_read_heap(b.p, b.n, &h, err, sizeof err), -EBADMSG);
    CHECK(strstr(err, "inuse_space") != NULL);
    free(b.p);

    /* no sample types at all */
    memset(&b, 0, sizeof b);
    put_str(&b, "");
    CHECK_INT(pprof_read_profile(b.p, b.n, &p, err, sizeof err), -EBADMSG);
    free(b.p);
}

static void heap_sites_group_by_stack(void)
{
    struct buf b = {0};
    /* types by name, in an order unlike Go's */
    put_type(&b, 3, 4); /* inuse_space/bytes */
    put_type(&b, 1, 2); /* alloc_objects/count */
    put_type(&b, 5, 2); /* inuse_objects/count */
    put_function(&b, 1, 6, 0);
    put_function(&b, 2, 7, 0);
    put_location(&b, 1, 0x10, 1, (uint64_t[]){1, 5});
    put_location(&b, 2, 0x20, 1, (uint64_t[]){2, 6});
    /* one stack, two sizes (Go's buckets): one site */
    put_sample(&b, 2, (uint64_t[]){1, 2}, 3, (int64_t[]){1024, 4, 1});
    put_sample(&b, 2, (uint64_t[]){1, 2}, 3, (int64_t[]){4096, 2, 1});
    put_sample(&b, 1, (uint64_t[]){2}, 3, (int64_t[]){100000, 1, 1});
    const char *strings[] = {"", "alloc_objects", "count", "inuse_space", "bytes", "inuse_objects", "alloc", "main"};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) put_str(&b, strings[i]);
    struct rt_heap h = {0};
    char err[256] = "";
    CHECK_INT(pprof_read_heap(b.p, b.n, &h, err, sizeof err), 0);
    CHECK_INT(h.n, 2);
    if (h.n == 2) {
        CHECK_STR(h.rows[0].name, "main");
        CHECK_INT(h.rows[0].bytes, 100000);
        CHECK_INT(h.rows[0].nstack, 1);
        CHECK_STR(h.rows[1].name, "alloc");
        CHECK_INT(h.rows[1].bytes, 5120);
        CHECK_INT(h.rows[1].count, 2);
        CHECK_INT(h.rows[1].alloc_count, 6);
        CHECK_INT(h.rows[1].alloc_bytes, -1); /* no alloc_space in this profile */
        CHECK_INT(h.rows[1].nstack, 2);
        CHECK_STR(h.rows[1].stack[1].function, "main");
        CHECK_INT(h.rows[1].stack[1].line, 6);
    }
    CHECK_INT(h.total_bytes, 105120);
    rt_heap_free(&h);
    free(b.p);

    /* only sites with nothing in them, and no samples at all: empty, not an error */
    memset(&b, 0, sizeof b);
    put_type(&b, 1, 2);
    put_function(&b, 1, 3, 0);
    put_location(&b, 1, 0x10, 1, (uint64_t[]){1, 5});
    put_sample(&b, 1, (uint64_t[]){1}, 1, (int64_t[]){0});
    const char *empty[] = {"", "inuse_space", "bytes", "f"};
    for (size_t i = 0; i < 4; i++) put_str(&b, empty[i]);
    CHECK_INT(pprof_read_heap(b.p, b.n, &h, err, sizeof err), 0);
    CHECK(h.n == 0 && h.total_bytes == 0);
    rt_heap_free(&h);
    free(b.p);
    memset(&b, 0, sizeof b);
    put_type(&b, 1, 2);
    for (size_t i = 0; i < 3; i++) put_str(&b, empty[i]);
    CHECK_INT(pprof_read_heap(b.p, b.n, &h, err, sizeof err), 0);
    CHECK(h.n == 0);
    rt_heap_free(&h);
    struct rt_profile p = {0};
    CHECK_INT(pprof_read_profile(b.p, b.n, &p, err, sizeof err), 0);
    CHECK(p.n == 0 && p.total == 0 && strcmp(p.unit, "bytes") == 0);
    rt_profile_free(&p);
    free(b.p);
}

static void deep_and_wide_profiles_are_capped(void)
{
    struct buf b = {0};
    put_type(&b, 1, 2);
    put_function(&b, 1, 3, 0);
    /* a location with 1000 inlined lines (64 kept) and a sample 20000 locations deep (512 kept) */
    uint64_t *lines = malloc(2000 * sizeof *lines);
    for (int i = 0; i < 1000; i++) lines[2 * i] = 1, lines[2 * i + 1] = (uint64_t)i;
    put_location(&b, 1, 0x10, 1000, lines);
    free(lines);
    uint64_t *locs = malloc(20000 * sizeof *locs);
    for (int i = 0; i < 20000; i++) locs[i] = 1;
    put_sample(&b, 20000, locs, 1, (int64_t[]){7});
    free(locs);
    const char *strings[] = {"", "samples", "count", "f"};
    for (size_t i = 0; i < 4; i++) put_str(&b, strings[i]);
    struct rt_profile p = {0};
    char err[256] = "";
    CHECK_INT(pprof_read_profile(b.p, b.n, &p, err, sizeof err), 0);
    CHECK_INT(p.n, 1);
    CHECK(p.n == 1 && p.rows[0].flat == 7 && p.rows[0].cum == 7);
    rt_profile_free(&p);
    free(b.p);

    /* values that would overflow a sum saturate */
    memset(&b, 0, sizeof b);
    put_type(&b, 1, 2);
    put_type(&b, 3, 4);
    put_function(&b, 1, 5, 0);
    put_location(&b, 1, 0x10, 1, (uint64_t[]){1, 1});
    for (int i = 0; i < 4; i++) put_sample(&b, 1, (uint64_t[]){1}, 2, (int64_t[]){INT64_MAX, INT64_MAX});
    const char *hs[] = {"", "inuse_space", "bytes", "inuse_objects", "count", "f"};
    for (size_t i = 0; i < 6; i++) put_str(&b, hs[i]);
    CHECK_INT(pprof_read_profile(b.p, b.n, &p, err, sizeof err), 0);
    CHECK(p.total == INT64_MAX && p.n == 1 && p.rows[0].flat == INT64_MAX);
    rt_profile_free(&p);
    struct rt_heap h = {0};
    CHECK_INT(pprof_read_heap(b.p, b.n, &h, err, sizeof err), 0);
    CHECK(h.n == 1 && h.rows[0].bytes == 1LL << 41);
    rt_heap_free(&h);
    free(b.p);

    /* more sample types than any profile has */
    memset(&b, 0, sizeof b);
    for (int i = 0; i < 100; i++) put_type(&b, 1, 2);
    put_str(&b, "");
    CHECK_INT(pprof_read_profile(b.p, b.n, &p, err, sizeof err), -E2BIG);
    free(b.p);
}

/* ---- the transport, against a fake agent in a thread ---- */

enum fake_mode { FAKE_OK, FAKE_HANG, FAKE_ENDLESS, FAKE_EMPTY, FAKE_RESET, FAKE_SLOW };

struct fake {
    int listen_fd, release[2];
    unsigned port;
    enum fake_mode mode;
    unsigned char got[16];
    size_t ngot;
    pthread_t thread;
};

static void *fake_run(void *arg)
{
    struct fake *f = arg;
    int c = accept(f->listen_fd, NULL, NULL);
    if (c < 0) return NULL;
    struct pollfd p = {.fd = c, .events = POLLIN};
    poll(&p, 1, 2000);
    ssize_t n = recv(c, f->got, sizeof f->got, 0);
    f->ngot = n > 0 ? (size_t)n : 0;
    struct pollfd rel = {.fd = f->release[0], .events = POLLIN};
    switch (f->mode) {
    case FAKE_OK: send(c, "ok", 2, MSG_NOSIGNAL); break;
    case FAKE_SLOW:
        poll(&rel, 1, 600);
        send(c, "ok", 2, MSG_NOSIGNAL);
        break;
    case FAKE_HANG: poll(&rel, 1, 10000); break;
    case FAKE_ENDLESS: {
        static const char junk[65536];
        while (send(c, junk, sizeof junk, MSG_NOSIGNAL) > 0) {}
        break;
    }
    case FAKE_EMPTY: break;
    case FAKE_RESET: {
        struct linger l = {1, 0};
        setsockopt(c, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        break;
    }
    }
    close(c);
    return NULL;
}

static void fake_start(struct fake *f, enum fake_mode mode)
{
    memset(f, 0, sizeof *f);
    f->mode = mode;
    f->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    bind(f->listen_fd, (struct sockaddr *)&sa, sizeof sa);
    listen(f->listen_fd, 4);
    getsockname(f->listen_fd, (struct sockaddr *)&sa, &sl);
    f->port = ntohs(sa.sin_port);
    if (pipe(f->release) < 0) abort();
    pthread_create(&f->thread, NULL, fake_run, f);
}

static void fake_stop(struct fake *f)
{
    if (write(f->release[1], "x", 1) < 0) {}
    pthread_join(f->thread, NULL);
    close(f->listen_fd);
    close(f->release[0]);
    close(f->release[1]);
}

static struct gops_exchange exchange_to(const struct fake *f, const unsigned char *cmd, size_t n)
{
    return (struct gops_exchange){.agent = {.family = AF_INET, .addr = {127, 0, 0, 1}, .port = f->port},
                                  .cmd = cmd, .cmdlen = n, .timeout = 0.5, .max_reply = 1u << 20};
}

static void client_reads_until_eof(void)
{
    struct fake f;
    fake_start(&f, FAKE_OK);
    unsigned char cmd[16];
    size_t n = gops_encode_setgc(100, cmd);
    struct gops_exchange x = exchange_to(&f, cmd, n);
    struct gops_reply r;
    char err[256] = "";
    CHECK_INT(gops_client_exchange(&x, &r, err, sizeof err), 0);
    CHECK_INT(r.len, 2);
    CHECK_STR((char *)r.data, "ok");
    CHECK(r.ms >= 0);
    gops_reply_free(&r);
    fake_stop(&f);
    CHECK_INT(f.ngot, 3); /* exactly the command, nothing more */
    CHECK(f.got[0] == 0x10 && f.got[1] == 0xc8 && f.got[2] == 0x01);

    fake_start(&f, FAKE_EMPTY); /* an unknown command: empty reply, clean close */
    x = exchange_to(&f, (const unsigned char *)"\x99", 1);
    CHECK_INT(gops_client_exchange(&x, &r, err, sizeof err), 0);
    CHECK_INT(r.len, 0);
    gops_reply_free(&r);
    fake_stop(&f);
}

static void client_times_out_on_a_hung_agent(void)
{
    struct fake f;
    fake_start(&f, FAKE_HANG);
    struct gops_exchange x = exchange_to(&f, (const unsigned char *)"\x03", 1);
    struct gops_reply r;
    char err[256] = "";
    double t0 = clock_monotonic_seconds();
    CHECK_INT(gops_client_exchange(&x, &r, err, sizeof err), -ETIMEDOUT);
    double took = clock_monotonic_seconds() - t0;
    CHECK(took >= 0.45 && took < 2.0);
    CHECK(strstr(err, "no reply") && strstr(err, "within 0.5 s"));
    CHECK(r.data == NULL);
    fake_stop(&f);
}

static volatile sig_atomic_t cancel_flag;

static void *cancel_later(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    cancel_flag = 1;
    return NULL;
}

static void client_cancels_promptly(void)
{
    struct fake f;
    fake_start(&f, FAKE_HANG);
    struct gops_exchange x = exchange_to(&f, (const unsigned char *)"\x06", 1);
    x.takes = 30;
    cancel_flag = 0;
    x.cancel = &cancel_flag;
    pthread_t t;
    pthread_create(&t, NULL, cancel_later, NULL);
    struct gops_reply r;
    char err[256] = "";
    double t0 = clock_monotonic_seconds();
    CHECK_INT(gops_client_exchange(&x, &r, err, sizeof err), -ECANCELED);
    CHECK(clock_monotonic_seconds() - t0 < 1.5);
    CHECK_STR(err, "cancelled");
    pthread_join(t, NULL);
    fake_stop(&f);
}

static void client_caps_endless_replies(void)
{
    struct fake f;
    fake_start(&f, FAKE_ENDLESS);
    struct gops_exchange x = exchange_to(&f, (const unsigned char *)"\x01", 1);
    x.timeout = 10;
    struct gops_reply r;
    char err[256] = "";
    CHECK_INT(gops_client_exchange(&x, &r, err, sizeof err), -EMSGSIZE);
    CHECK(strstr(err, "exceeds 1 MiB") != NULL);
    fake_stop(&f);
}

static void client_refused_and_reset(void)
{
    struct fake f;
    fake_start(&f, FAKE_OK);
    unsigned port = f.port;
    struct gops_exchange x = exchange_to(&f, (const unsigned char *)"\x02", 1);
    struct gops_reply r;
    char err[256] = "";
    CHECK_INT(gops_client_exchange(&x, &r, err, sizeof err), 0);
    gops_reply_free(&r);
    fake_stop(&f); /* the port is free now */
    x.agent.port = port;
    CHECK_INT(gops_client_exchange(&x, &r, err, sizeof err), -ECONNREFUSED);
    CHECK(strstr(err, "refused") != NULL);
    char at[32];
    snprintf(at, sizeof at, "127.0.0.1:%u", port);
    CHECK(strstr(err, at) != NULL); /* the message says where */
    x.agent = (struct inet_endpoint){.family = AF_INET6, .addr = {[15] = 1}, .port = port}; /* [::1] */
    CHECK_INT(gops_client_exchange(&x, &r, err, sizeof err), -ECONNREFUSED);
    snprintf(at, sizeof at, "[::1]:%u", port);
    CHECK(strstr(err, at) != NULL);

    fake_start(&f, FAKE_RESET);
    x = exchange_to(&f, (const unsigned char *)"\x02", 1);
    CHECK_INT(gops_client_exchange(&x, &r, err, sizeof err), -ECONNRESET);
    CHECK(strstr(err, "without replying") != NULL);
    fake_stop(&f);
}

static void progress_seen(void *arg, double fraction)
{
    double *last = arg;
    if (fraction >= *last && fraction <= 1.0) *last = fraction;
    else *last = -1; /* going backwards, or out of range */
}

static void client_reports_progress_while_waiting(void)
{
    struct fake f;
    fake_start(&f, FAKE_SLOW);
    struct gops_exchange x = exchange_to(&f, (const unsigned char *)"\x06", 1);
    x.takes = 1.0;
    double last = 0;
    x.progress = progress_seen;
    x.progress_arg = &last;
    struct gops_reply r;
    char err[256] = "";
    CHECK_INT(gops_client_exchange(&x, &r, err, sizeof err), 0);
    CHECK(last > 0.2 && last <= 1.0);
    gops_reply_free(&r);
    fake_stop(&f);
}

/* ---- saved files and the provider's own checks ---- */

static void saved_files_never_overwrite(void)
{
    char dir[] = "/tmp/diagtop-test-saved.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char *a = NULL, *b = NULL, err[256] = "";
    CHECK_INT(saved_file_write(getpid(), dir, "heap", ".pb.gz", "abc", 3, &a, err, sizeof err), 0);
    CHECK_INT(saved_file_write(getpid(), dir, "heap", ".pb.gz", "defg", 4, &b, err, sizeof err), 0);
    CHECK(a && b && strcmp(a, b) != 0);
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s/heap.test_gops.%d.", dir, (int)getpid());
    CHECK(a && strncmp(a, prefix, strlen(prefix)) == 0 && strstr(a, ".pb.gz"));
    struct stat st;
    CHECK(a && stat(a, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_size == 3);
    CHECK(b && stat(b, &st) == 0 && st.st_size == 4);
    if (a) unlink(a);
    if (b) unlink(b);
    free(a);
    free(b);
    CHECK(rmdir(dir) == 0); /* nothing else (no partial file) was left */
    char *c = NULL;
    CHECK(saved_file_write(getpid(), "/nonexistent/dir", "cpu", ".pb.gz", "x", 1, &c, err, sizeof err) < 0);
    CHECK(c == NULL && strstr(err, "/nonexistent/dir"));
}

/* runtime_gops_port on a /proc-shaped tree: PID/environ, PID/root/<dir>/PID, PID/net/tcp{,6}, PID/fd/N. */
static void put_file(const char *root, const char *rel, const void *data, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(data, 1, len, f);
    fclose(f);
}

static void port_file_is_trusted_only_when_listened_on(void)
{
    char root[] = "/tmp/diagtop-test-proc.XXXXXX", cmd[600], why[512];
    CHECK(mkdtemp(root) != NULL);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/4242/root/cfg %s/4242/net %s/4242/fd %s/4242/root/home/u/.config/gops",
             root, root, root, root);
    CHECK(system(cmd) == 0);
    int procfd = open(root, O_RDONLY | O_DIRECTORY);
    const char header[] = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
    char tcp[512];
    /* port 40001 = 0x9C41 in LISTEN (0A) with inode 777; 40002 only ESTABLISHED (01) */
    snprintf(tcp, sizeof tcp, "%s   0: 0100007F:9C41 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 777 1\n"
             "   1: 0100007F:9C42 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 778 1\n", header);
    put_file(root, "4242/net/tcp", tcp, strlen(tcp));
    put_file(root, "4242/net/tcp6", header, strlen(header));
    struct inet_endpoint agent;

    CHECK_INT(runtime_gops_port(procfd, 4243, 0, &agent, why, sizeof why), -ENOENT);
    CHECK_STR(why, "no process 4243");

    const char env[] = "HOME=/home/u\0GOPS_CONFIG_DIR=/cfg\0";
    put_file(root, "4242/environ", env, sizeof env - 1);
    CHECK_INT(runtime_gops_port(procfd, 4242, 0, &agent, why, sizeof why), -ENOENT);
    CHECK_STR(why, "no gops port file in /cfg (no gops agent, or one with its own ConfigDir)");

    put_file(root, "4242/root/cfg/4242", "40001", 5);
    CHECK_INT(runtime_gops_port(procfd, 4242, 0, &agent, why, sizeof why), -ESTALE); /* nobody holds inode 777 */
    CHECK(strstr(why, "names port 40001, which this process does not LISTEN on (stale") != NULL);
    snprintf(cmd, sizeof cmd, "%s/4242/fd/3", root);
    CHECK(symlink("socket:[777]", cmd) == 0);
    CHECK_INT(runtime_gops_port(procfd, 4242, 0, &agent, why, sizeof why), 0);
    CHECK_INT(agent.port, 40001);
    char at[64];
    sockets_format_endpoint(&agent, at, sizeof at);
    CHECK_STR(at, "127.0.0.1:40001");

    put_file(root, "4242/root/cfg/4242", " 40002\n", 7); /* trimmed, but only ESTABLISHED there */
    CHECK_INT(runtime_gops_port(procfd, 4242, 0, &agent, why, sizeof why), -ESTALE);
    CHECK_INT(agent.port, 0);
    put_file(root, "4242/root/cfg/4242", "70000", 5);
    CHECK_INT(runtime_gops_port(procfd, 4242, 0, &agent, why, sizeof why), -EINVAL);
    CHECK(strstr(why, "does not hold a port number") != NULL);
    put_file(root, "4242/root/cfg/4242", "\x1b[2J", 4);
    CHECK_INT(runtime_gops_port(procfd, 4242, 0, &agent, why, sizeof why), -EINVAL);

    /* without GOPS_CONFIG_DIR: $HOME/.config/gops, in the target's root; the directory shown is sanitized */
    const char env2[] = "HOME=/home/u\0";
    put_file(root, "4242/environ", env2, sizeof env2 - 1);
    put_file(root, "4242/root/home/u/.config/gops/4242", "40001", 5);
    CHECK_INT(runtime_gops_port(procfd, 4242, 0, &agent, why, sizeof why), 0);
    const char env3[] = "XDG_CONFIG_HOME=/x\x1b[2J\0HOME=/home/u\0";
    put_file(root, "4242/environ", env3, sizeof env3 - 1);
    CHECK_INT(runtime_gops_port(procfd, 4242, 0, &agent, why, sizeof why), -ENOENT);
    CHECK(strstr(why, "/x?[2J/gops") != NULL && strchr(why, '\x1b') == NULL);

    /* an agent listening on [::] (Go's ":port") is dialled on [::1]; one on a given address, there */
    snprintf(tcp, sizeof tcp, "%s   0: 00000000000000000000000000000000:9C43 00000000000000000000000000000000:0000 0A "
             "00000000:00000000 00:00000000 00000000     0        0 779 1\n", header);
    put_file(root, "4242/net/tcp6", tcp, strlen(tcp));
    snprintf(cmd, sizeof cmd, "%s/4242/fd/4", root);
    CHECK(symlink("socket:[779]", cmd) == 0);
    put_file(root, "4242/environ", env2, sizeof env2 - 1);
    put_file(root, "4242/root/home/u/.config/gops/4242", "40003", 5);
    CHECK_INT(runtime_gops_port(procfd, 4242, 0, &agent, why, sizeof why), 0);
    sockets_format_endpoint(&agent, at, sizeof at);
    CHECK_STR(at, "[::1]:40003");
    snprintf(tcp, sizeof tcp, "%s   0: 0A00000A:9C41 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0 "
             "       0 777 1\n", header);
    put_file(root, "4242/net/tcp", tcp, strlen(tcp));
    put_file(root, "4242/root/home/u/.config/gops/4242", "40001", 5);
    CHECK_INT(runtime_gops_port(procfd, 4242, 0, &agent, why, sizeof why), 0);
    sockets_format_endpoint(&agent, at, sizeof at);
    CHECK_STR(at, "10.0.0.10:40001");
    close(procfd);
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    CHECK(system(cmd) == 0);
}

static void provider_refuses_what_is_not_go(void)
{
    char why[256] = "";
    CHECK_INT(gops_provider.probe(getpid(), why, sizeof why), -ENOTSUP);
    CHECK(strstr(why, "not a Go program") != NULL);
    CHECK_INT(gops_provider.probe(999999999, why, sizeof why), -ESRCH);
    CHECK_STR(gops_provider.name, "gops");
    CHECK_STR(gops_provider.speaks, "Go");
    CHECK(gops_provider.heap_dump == NULL);
    CHECK(provider_offers(&gops_provider, OP_PROFILE) && provider_offers(&gops_provider, OP_HEAP));
}

int main(void)
{
    check_suite = "gops";
    RUN(varints_round_trip);
    RUN(malformed_varints_and_fields_fail);
    RUN(packed_and_unpacked_repeated);
    RUN(zigzag);
    RUN(setgc_is_a_zigzag_varint);
    RUN(goroutine_dump_of_the_go_target);
    RUN(goroutine_dump_forms);
    RUN(goroutine_dump_garbage);
    RUN(memstats_new_names);
    RUN(memstats_old_names);
    RUN(memstats_value_forms);
    RUN(field_keys_are_snake_case);
    RUN(go_durations);
    RUN(stats_and_version);
    RUN(cpu_profile_of_the_go_target);
    RUN(heap_profile_of_the_go_target);
    RUN(truncated_and_corrupt_profiles_fail_cleanly);
    RUN(gzip_bombs_are_refused);
    RUN(hostile_references_are_skipped);
    RUN(heap_sites_group_by_stack);
    RUN(deep_and_wide_profiles_are_capped);
    RUN(client_reads_until_eof);
    RUN(client_times_out_on_a_hung_agent);
    RUN(client_cancels_promptly);
    RUN(client_caps_endless_replies);
    RUN(client_refused_and_reset);
    RUN(client_reports_progress_while_waiting);
    RUN(saved_files_never_overwrite);
    RUN(port_file_is_trusted_only_when_listened_on);
    RUN(provider_refuses_what_is_not_go);
    CHECK_EXIT();
}
