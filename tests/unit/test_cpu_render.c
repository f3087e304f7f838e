/* The CPU profile renderers on a synthetic report with known stacks: top functions, callers and callees, folded
 * stacks, the text icicle, the SVG flame graph (parsed by python3's xml.etree), pprof (read back by `go tool
 * pprof` and by diagtop's own reader) and JSON (cJSON and python3's json). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actions/profile/cpu_report.h"
#include "actions/runtimes/go/pprof_read.h"
#include "check.h"
#include "render/cpu_json.h"
#include "render/cpu_top.h"
#include "render/flame.h"
#include "render/pprof_write.h"

#define HOSTILE_FN "<&>\"evil\033]0;x\007\377"
#define HOSTILE_SHOWN "<&>\"evil?]0;x??" /* text_sanitize_display of HOSTILE_FN */
#define HOSTILE_MOD "lib<&>.so"
#define HOSTILE_THREAD "evil\033[2J\377"

static char tmpdir[] = "/tmp/diagtop-test-cpu.XXXXXX";

struct fr {
    unsigned long long pc;
    int inlined;
    const char *fn;
    unsigned long long off;
    const char *mod, *file;
    int line;
};

enum { MAIN_A, MAIN_B, MAIN_Q, MAIN_R, MAIN_X, A, B, HOT1, HOT2, QSORT, CMP, REC, TSTART, INL, WORK, JIT, NOMOD, EVIL };

static const struct fr frames[] = {
    [MAIN_A] = {0x401105, 0, "main", 0x5, "app", "main.c", 20},
    [MAIN_B] = {0x40110a, 0, "main", 0xa, "app", "main.c", 21},
    [MAIN_Q] = {0x40110f, 0, "main", 0xf, "app", "main.c", 22},
    [MAIN_R] = {0x401114, 0, "main", 0x14, "app", "main.c", 23},
    [MAIN_X] = {0x401119, 0, "main", 0x19, "app", "main.c", 24},
    [A] = {0x401205, 0, "a", 0x5, "app", "a.c", 5},
    [B] = {0x401305, 0, "b", 0x5, "app", "b.c", 6},
    [HOT1] = {0x401400, 0, "hot", 0x0, "app", "hot.c", 3},
    [HOT2] = {0x401410, 0, "hot", 0x10, "app", "hot.c", 4},
    [QSORT] = {0x7f0000001234, 0, "qsort", 0x34, "libc.so.6", NULL, 0},
    [CMP] = {0x401500, 0, "cmp", 0x0, "app", "cmp.c", 7},
    [REC] = {0x401705, 0, "rec", 0x5, "app", "rec.c", 9},
    [TSTART] = {0x401805, 0, "thread_start", 0x5, "app", "t.c", 30},
    [INL] = {0x401600, 1, "inl_helper", 0, "app", "util.h", 5},
    [WORK] = {0x401600, 0, "work", 0x20, "app", "work.c", 12},
    [JIT] = {0x7f0000000099, 0, NULL, 0x99, "libjit.so", NULL, 0},
    [NOMOD] = {0xdead000, 0, NULL, 0, NULL, NULL, 0},
    [EVIL] = {0x401900, 0, HOSTILE_FN, 0x1, HOSTILE_MOD, "evil<&>.c", 1},
};

struct st {
    int tid;
    long long samples;
    int truncated, n, f[6];
    int no_cpu_ns; /* leave cpu_ns 0: samples * period_ns stands in */
};

/* main -> a -> hot (30, at two pcs of hot), main -> b -> hot (10), main -> qsort -> cmp (20), main -> rec -> rec ->
 * hot (10) in thread 100; thread_start -> work -> inl_helper (inlined into work) (20) and a truncated stack of a
 * frame without a function and one without a module (5) in thread 101; main -> hostile (5) in thread 102. */
static const struct st stacks[] = {
    {100, 25, 0, 3, {HOT1, A, MAIN_A}, 0},
    {100, 5, 0, 3, {HOT2, A, MAIN_A}, 0},
    {100, 10, 0, 3, {HOT2, B, MAIN_B}, 0},
    {100, 20, 0, 3, {CMP, QSORT, MAIN_Q}, 0},
    {101, 20, 0, 3, {INL, WORK, TSTART}, 0},
    {101, 5, 1, 2, {NOMOD, JIT}, 1},
    {102, 5, 0, 2, {EVIL, MAIN_X}, 0},
    {100, 10, 0, 4, {HOT1, REC, REC, MAIN_R}, 0},
};

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static void make_report(struct cpu_report *r)
{
    memset(r, 0, sizeof *r);
    r->pid = 4242;
    snprintf(r->comm, sizeof r->comm, "app");
    snprintf(r->method, sizeof r->method, "perf");
    r->hz = 100;
    r->seconds = 1.0;
    r->period_ns = 10000000;
    r->lost = 3;
    r->target_cost_percent = 0.4;
    r->nframes = (int)(sizeof frames / sizeof frames[0]);
    r->frames = calloc((size_t)r->nframes, sizeof *r->frames);
    for (int i = 0; i < r->nframes; i++) {
        struct cpu_frame *f = &r->frames[i];
        f->pc = frames[i].pc;
        f->inlined = frames[i].inlined;
        f->function = dup_or_null(frames[i].fn);
        f->offset = frames[i].off;
        f->module = dup_or_null(frames[i].mod);
        f->file = dup_or_null(frames[i].file);
        f->line = frames[i].line;
    }
    r->nstacks = (int)(sizeof stacks / sizeof stacks[0]);
    r->stacks = calloc((size_t)r->nstacks, sizeof *r->stacks);
    for (int i = 0; i < r->nstacks; i++) {
        struct cpu_stack *s = &r->stacks[i];
        s->nframes = stacks[i].n;
        s->frames = malloc((size_t)s->nframes * sizeof *s->frames);
        memcpy(s->frames, stacks[i].f, (size_t)s->nframes * sizeof *s->frames);
        s->truncated = stacks[i].truncated;
        s->tid = stacks[i].tid;
        s->samples = stacks[i].samples;
        s->cpu_ns = stacks[i].no_cpu_ns ? 0 : s->samples * r->period_ns;
        r->samples += s->samples;
    }
    r->nthreads = 3;
    r->threads = calloc(3, sizeof *r->threads);
    r->threads[0] = (struct cpu_thread){.tid = 100, .samples = 70};
    snprintf(r->threads[0].name, sizeof r->threads[0].name, "app");
    r->threads[1] = (struct cpu_thread){.tid = 101, .samples = 25};
    snprintf(r->threads[1].name, sizeof r->threads[1].name, "worker");
    r->threads[2] = (struct cpu_thread){.tid = 102, .samples = 5};
    snprintf(r->threads[2].name, sizeof r->threads[2].name, "%s", HOSTILE_THREAD);
}

/* Runs a shell command; returns its exit status and its standard output (malloc'd) in *out. */
static int run(const char *cmd, char **out)
{
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, p)) > 0) {
        n += got;
        if (n + 1 == cap) buf = realloc(buf, cap *= 2);
    }
    buf[n] = '\0';
    int st = pclose(p);
    if (out) *out = buf;
    else free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, len, f);
    return fclose(f) == 0 && w == len ? 0 : -1;
}

static int has_byte(const struct text_lines *tl, char c)
{
    for (size_t i = 0; i < tl->n; i++)
        if (strchr(tl->lines[i], c)) return 1;
    return 0;
}

static int cols(const char *s)
{
    int n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static const struct cpu_top_row *row_named(const struct cpu_top *t, const char *name)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->rows[i].name, name) == 0) return &t->rows[i];
    return NULL;
}

/* ---- top ---- */

static void top_by_own_counts_own_and_total(void)
{
    struct cpu_report r;
    make_report(&r);
    struct cpu_top t;
    struct cpu_top_opts o = {.sort = CPU_TOP_BY_OWN};
    CHECK_INT(cpu_top_build(&r, &o, &t), 0);
    CHECK_INT(t.samples, 100);
    CHECK_INT(t.cpu_ns, 1000000000LL);
    CHECK_INT(t.nfunctions, 13);
    CHECK_INT(t.n, 13);
    static const char *order[] = {"hot", "cmp", "inl_helper", "0xdead000", HOSTILE_FN, "main", "a", "qsort",
                                  "thread_start", "work", "b", "rec", "libjit.so+0x99"};
    static const long long own[] = {50, 20, 20, 5, 5, 0, 0, 0, 0, 0, 0, 0, 0};
    static const long long total[] = {50, 20, 20, 5, 5, 75, 30, 20, 20, 20, 10, 10, 5};
    for (int i = 0; i < 13 && i < t.n; i++) {
        CHECK_STR(t.rows[i].name, order[i]);
        CHECK_INT(t.rows[i].own, own[i]);
        CHECK_INT(t.rows[i].total, total[i]);
        CHECK_INT(t.rows[i].own_ns, own[i] * 10000000);
        CHECK_INT(t.rows[i].total_ns, total[i] * 10000000);
    }
    /* the two pcs of hot and the five return addresses in main are one function each */
    CHECK_STR(row_named(&t, "hot")->module, "app");
    CHECK_STR(row_named(&t, "qsort")->module, "libc.so.6");
    CHECK(row_named(&t, "0xdead000")->module == NULL);
    CHECK_STR(row_named(&t, "libjit.so+0x99")->module, "libjit.so");
    CHECK_STR(row_named(&t, HOSTILE_FN)->module, HOSTILE_MOD);
    /* recursion: rec is twice on its stack, counted once */
    CHECK_INT(row_named(&t, "rec")->total, 10);
    cpu_top_free(&t);

    o.sort = CPU_TOP_BY_TOTAL;
    o.limit = 4;
    CHECK_INT(cpu_top_build(&r, &o, &t), 0);
    CHECK_INT(t.n, 4);
    CHECK_INT(t.nfunctions, 13);
    CHECK_STR(t.rows[0].name, "main");
    CHECK_STR(t.rows[1].name, "hot");
    CHECK_STR(t.rows[2].name, "a");
    CHECK_STR(t.rows[3].name, "cmp"); /* total 20 like four others: own 20 first, then the name */
    cpu_top_free(&t);

    o.sort = CPU_TOP_BY_NAME;
    o.limit = 0;
    CHECK_INT(cpu_top_build(&r, &o, &t), 0);
    CHECK_STR(t.rows[0].name, "0xdead000");
    CHECK_STR(t.rows[1].name, HOSTILE_FN);
    CHECK_STR(t.rows[2].name, "a");
    CHECK_STR(t.rows[12].name, "work");
    cpu_top_free(&t);
    cpu_report_free(&r);
}

static void top_filters_one_thread(void)
{
    struct cpu_report r;
    make_report(&r);
    struct cpu_top t;
    struct cpu_top_opts o = {.sort = CPU_TOP_BY_OWN, .tid = 101};
    CHECK_INT(cpu_top_build(&r, &o, &t), 0);
    CHECK_INT(t.samples, 25);
    CHECK_INT(t.n, 5);
    CHECK_STR(t.rows[0].name, "inl_helper"); /* an inlined call is a function of its own */
    CHECK_INT(t.rows[0].own, 20);
    CHECK_STR(t.rows[1].name, "0xdead000");
    CHECK_INT(t.rows[1].own, 5);
    CHECK_INT(t.rows[1].own_ns, 50000000); /* cpu_ns 0: samples * period */
    CHECK_STR(t.rows[2].name, "thread_start");
    CHECK_INT(t.rows[2].total, 20);
    CHECK(row_named(&t, "main") == NULL);
    struct text_lines tl = {0};
    CHECK_INT(cpu_top_text(&t, 0, &tl), 0);
    CHECK_STR(tl.lines[0], "PID 4242 \"app\": 100 samples in 1.00 s at 100 Hz (perf), 3 lost, target slowed by 0.4%; "
                           "thread 101 \"worker\": 25 samples");
    CHECK_STR(tl.lines[2], "  200ms  80.0%  80.0%   200ms  80.0%  inl_helper      app");
    text_lines_free(&tl);
    cpu_top_free(&t);
    cpu_report_free(&r);
}

static void top_text_is_sanitized_and_fits(void)
{
    struct cpu_report r;
    make_report(&r);
    snprintf(r.method, sizeof r.method, "ptrace");
    snprintf(r.method_why, sizeof r.method_why, "perf_event_open refused: \033[31mEACCES");
    r.target_cost_percent = -1;
    struct cpu_top t;
    struct cpu_top_opts o = {.sort = CPU_TOP_BY_OWN};
    CHECK_INT(cpu_top_build(&r, &o, &t), 0);
    struct text_lines tl = {0};
    CHECK_INT(cpu_top_text(&t, 0, &tl), 0);
    CHECK_INT(tl.n, 15);
    CHECK_STR(tl.lines[0], "PID 4242 \"app\": 100 samples in 1.00 s at 100 Hz (ptrace: perf_event_open refused: "
                           "?[31mEACCES), 3 lost");
    /* pprof -top's columns, each starting at the same place on every line */
    CHECK_STR(tl.lines[1], "   flat  flat%   sum%     cum   cum%  function         module");
    CHECK_STR(tl.lines[2], "  500ms  50.0%  50.0%   500ms  50.0%  hot              app");
    CHECK_STR(tl.lines[5], "   50ms   5.0%  95.0%    50ms   5.0%  0xdead000        -");
    CHECK_STR(tl.lines[6], "   50ms   5.0% 100.0%    50ms   5.0%  " HOSTILE_SHOWN "  " HOSTILE_MOD);
    CHECK_STR(tl.lines[7], "      0   0.0% 100.0%   750ms  75.0%  main             app");
    for (size_t i = 2; i < 2 + (size_t)t.n; i++) CHECK_INT(cols(tl.lines[i]) - cols(strrchr(tl.lines[i], ' ')),
                                                          cols(tl.lines[1]) - cols(strrchr(tl.lines[1], ' ')));
    CHECK(!has_byte(&tl, '\033'));
    CHECK(!has_byte(&tl, '\007'));
    text_lines_free(&tl);

    /* 62 columns: 36 of numbers, the module column as wide as the longest module (9), the function the rest */
    CHECK_INT(cpu_top_text(&t, 62, &tl), 0);
    for (size_t i = 1; i < tl.n; i++) CHECK_INT(cols(tl.lines[i]), 62);
    CHECK_STR(tl.lines[6], "   50ms   5.0% 100.0%    50ms   5.0%  <&>\"evil?]0..  lib<&>.so");
    CHECK_STR(tl.lines[9], "      0   0.0% 100.0%   200ms  20.0%  qsort          libc.so.6");
    text_lines_free(&tl);
    cpu_top_free(&t);

    o.limit = 2;
    CHECK_INT(cpu_top_build(&r, &o, &t), 0);
    CHECK_INT(cpu_top_text(&t, 0, &tl), 0);
    CHECK_INT(tl.n, 5);
    CHECK_STR(tl.lines[4], "(11 more functions)");
    text_lines_free(&tl);
    cpu_top_free(&t);
    cpu_report_free(&r);
}

static void peek_shows_callers_and_callees(void)
{
    struct cpu_report r;
    make_report(&r);
    struct cpu_peek p;
    CHECK_INT(cpu_top_peek(&r, "hot", "app", 0, &p), 0);
    CHECK_INT(p.total, 50);
    CHECK_INT(p.own, 50);
    CHECK_INT(p.ncallers, 3);
    CHECK_STR(p.callers[0].name, "a");
    CHECK_INT(p.callers[0].samples, 30);
    CHECK_STR(p.callers[1].name, "b");
    CHECK_INT(p.callers[1].samples, 10);
    CHECK_STR(p.callers[2].name, "rec");
    CHECK_INT(p.callers[2].samples, 10);
    CHECK_INT(p.ncallees, 1);
    CHECK_STR(p.callees[0].name, CPU_PEEK_SELF);
    CHECK_INT(p.callees[0].samples, 50);
    cpu_top_peek_free(&p);

    /* direct recursion: rec calls itself and is called by itself, once per stack */
    CHECK_INT(cpu_top_peek(&r, "rec", "app", 0, &p), 0);
    CHECK_INT(p.total, 10);
    CHECK_INT(p.ncallers, 2);
    CHECK_STR(p.callers[0].name, "main");
    CHECK_INT(p.callers[0].samples, 10);
    CHECK_STR(p.callers[1].name, "rec");
    CHECK_INT(p.callers[1].samples, 10);
    CHECK_INT(p.ncallees, 2);
    CHECK_STR(p.callees[0].name, "hot");
    CHECK_STR(p.callees[1].name, "rec");
    cpu_top_peek_free(&p);

    CHECK_INT(cpu_top_peek(&r, "main", "app", 0, &p), 0);
    CHECK_INT(p.ncallers, 1);
    CHECK_STR(p.callers[0].name, CPU_PEEK_ROOT);
    CHECK_INT(p.callers[0].samples, 75);
    CHECK_INT(p.ncallees, 5);
    CHECK_STR(p.callees[0].name, "a");
    CHECK_STR(p.callees[1].name, "qsort");
    CHECK_STR(p.callees[4].name, HOSTILE_FN);
    CHECK_INT(p.callees[4].samples, 5);
    cpu_top_peek_free(&p);

    CHECK_INT(cpu_top_peek(&r, "libjit.so+0x99", "libjit.so", 101, &p), 0);
    CHECK_STR(p.callers[0].name, CPU_PEEK_TRUNCATED);
    CHECK_STR(p.callees[0].name, "0xdead000");
    CHECK(p.callees[0].module == NULL);
    cpu_top_peek_free(&p);

    CHECK_INT(cpu_top_peek(&r, "hot", "app", 101, &p), -ENOENT);
    CHECK_INT(cpu_top_peek(&r, "hot", NULL, 0, &p), -ENOENT); /* the module is part of the name */
    CHECK_INT(cpu_top_peek(&r, "nothing", "app", 0, &p), -ENOENT);

    struct text_lines tl = {0};
    CHECK_INT(cpu_top_callers(&r, "hot", "app", 0, 0, &tl), 0);
    CHECK_INT(tl.n, 9);
    CHECK_STR(tl.lines[0], "hot [app]: 50 samples total (50.0%), 50 own (50.0%)");
    CHECK_STR(tl.lines[1], "Callers:");
    CHECK_STR(tl.lines[2], "   Samples   %All  %Func  Function  Module");
    CHECK_STR(tl.lines[3], "        30  30.0%  60.0%  a  app");
    CHECK_STR(tl.lines[6], "Callees:");
    CHECK_STR(tl.lines[7], "   Samples   %All  %Func  Function  Module");
    CHECK_STR(tl.lines[8], "        50  50.0% 100.0%  (self)  -");
    text_lines_free(&tl);
    CHECK_INT(cpu_top_callers(&r, HOSTILE_FN, HOSTILE_MOD, 0, 0, &tl), 0);
    CHECK_STR(tl.lines[0], HOSTILE_SHOWN " [" HOSTILE_MOD "]: 5 samples total (5.0%), 5 own (5.0%)");
    CHECK(!has_byte(&tl, '\033'));
    text_lines_free(&tl);
    cpu_report_free(&r);
}

/* ---- flame ---- */

static void folded_stacks_merge_by_name(void)
{
    struct cpu_report r;
    make_report(&r);
    struct text_lines tl = {0};
    CHECK_INT(flame_folded(&r, 0, &tl), 0);
    static const char *want[] = {
        "libjit.so+0x99;0xdead000 5", "main;<&>\"evil?]0?x?? 5", "main;a;hot 30", "main;b;hot 10",
        "main;qsort;cmp 20", "main;rec;rec;hot 10", "thread_start;work;inl_helper 20",
    };
    CHECK_INT(tl.n, 7); /* the two stacks through a -> hot at different pcs are one line */
    long long sum = 0;
    for (size_t i = 0; i < tl.n && i < 7; i++) {
        CHECK_STR(tl.lines[i], want[i]);
        sum += atoll(strrchr(tl.lines[i], ' ') + 1);
    }
    CHECK_INT(sum, r.samples);
    text_lines_free(&tl);
    CHECK_INT(flame_folded(&r, 101, &tl), 0);
    CHECK_INT(tl.n, 2);
    CHECK_STR(tl.lines[0], "libjit.so+0x99;0xdead000 5");
    CHECK_STR(tl.lines[1], "thread_start;work;inl_helper 20");
    text_lines_free(&tl);
    cpu_report_free(&r);
}

/* A block of w columns as the icicle draws it. */
static void block(char *dst, const char *name, int w)
{
    char *p = dst + strlen(dst);
    int room = w - 1, n = (int)strlen(name);
    if (n > room) n = room >= 3 ? room - 2 : room;
    p += sprintf(p, "%.*s%s", n, name, n < (int)strlen(name) && room >= 3 ? ".." : "");
    for (int used = n + (n < (int)strlen(name) && room >= 3 ? 2 : 0); used < room; used++) *p++ = ' ';
    *p++ = '|';
    *p = '\0';
}

static void icicle_blocks_are_proportional(void)
{
    struct cpu_report r;
    make_report(&r);
    struct text_lines tl = {0};
    /* 100 columns for 100 samples: one column per sample, children under their parents */
    CHECK_INT(flame_icicle(&r, 0, 100, 0, &tl), 0);
    CHECK_INT(tl.n, 4);
    char want[512] = "";
    block(want, "libjit.so+0x99", 5);
    block(want, "main", 75);
    block(want, "thread_start", 20);
    CHECK_STR(tl.lines[0], want);
    want[0] = '\0';
    block(want, "0xdead000", 5);
    block(want, HOSTILE_SHOWN, 5);
    block(want, "a", 30);
    block(want, "b", 10);
    block(want, "qsort", 20);
    block(want, "rec", 10);
    block(want, "work", 20);
    CHECK_STR(tl.lines[1], want);
    snprintf(want, sizeof want, "%10s", "");
    block(want, "hot", 30);
    block(want, "hot", 10);
    block(want, "cmp", 20);
    block(want, "rec", 10);
    block(want, "inl_helper", 20);
    CHECK_STR(tl.lines[2], want);
    snprintf(want, sizeof want, "%70s", "");
    block(want, "hot", 10);
    CHECK_STR(tl.lines[3], want);
    for (size_t i = 0; i < 3; i++) CHECK_INT(cols(tl.lines[i]), 100);
    text_lines_free(&tl);

    /* 40 columns, 2 lines: block edges at floor(sample * 40 / 100) */
    CHECK_INT(flame_icicle(&r, 0, 40, 2, &tl), 0);
    CHECK_INT(tl.n, 2);
    want[0] = '\0';
    block(want, "libjit.so+0x99", 2); /* 0-2, 2-32, 32-40 */
    block(want, "main", 30);
    block(want, "thread_start", 8);
    CHECK_STR(tl.lines[0], want);
    CHECK_STR(want, "l|main                         |threa..|");
    CHECK_INT(cols(tl.lines[1]), 40);
    CHECK(strstr(tl.lines[1], "|a          |") != NULL); /* 4-16 */
    text_lines_free(&tl);

    /* one thread (25 samples); a block narrower than a column is left out */
    CHECK_INT(flame_icicle(&r, 101, 10, 0, &tl), 0);
    CHECK_INT(tl.n, 3);
    CHECK_STR(tl.lines[0], "l|threa..|");
    text_lines_free(&tl);
    CHECK_INT(flame_icicle(&r, 101, 5, 0, &tl), 0);
    CHECK_STR(tl.lines[0], "|t..|"); /* 0-1 (libjit: 5 of 25), 1-5 */
    CHECK_STR(tl.lines[1], "|w..|");
    CHECK_STR(tl.lines[2], " i..|");
    text_lines_free(&tl);
    CHECK_INT(flame_icicle(&r, 101, 4, 0, &tl), 0);
    CHECK_STR(tl.lines[0], "t..|"); /* libjit would be 0.8 columns */
    text_lines_free(&tl);
    CHECK_INT(flame_icicle(&r, 0, 0, 0, &tl), -EINVAL);
    cpu_report_free(&r);
}

static void svg_is_well_formed_and_escaped(void)
{
    struct cpu_report r;
    make_report(&r);
    char *svg;
    size_t len;
    struct flame_svg_opts o = {.title = "profile <of> \"app\" & \033[2J friends"};
    CHECK_INT(flame_svg(&r, &o, &svg, &len), 0);
    CHECK_INT(strlen(svg), len);
    CHECK(strncmp(svg, "<?xml", 5) == 0);
    CHECK(strstr(svg, "&lt;&amp;&gt;&quot;evil?]0;x??") != NULL);
    CHECK(strstr(svg, HOSTILE_FN) == NULL);
    CHECK(strchr(svg, '\033') == NULL);
    CHECK(strstr(svg, "lib&lt;&amp;&gt;.so") != NULL);
    CHECK(strstr(svg, "<script") != NULL);
    CHECK(strstr(svg, "href") == NULL); /* nothing external */
    char path[512], cmd[1200], *out = NULL;
    snprintf(path, sizeof path, "%s/flame.svg", tmpdir);
    CHECK_INT(write_file(path, svg, len), 0);
    /* Every frame: a <g> with a title naming it; widths add up under each parent. */
    snprintf(cmd, sizeof cmd,
             "python3 -c '\n"
             "import sys, xml.etree.ElementTree as E\n"
             "ns = \"{http://www.w3.org/2000/svg}\"\n"
             "root = E.parse(sys.argv[1]).getroot()\n"
             "gs = [g for g in root.iter(ns + \"g\") if g.get(\"class\") == \"f\"]\n"
             "names = [g.find(ns + \"title\").text.split(chr(10))[0] for g in gs]\n"
             "w = {n: 0.0 for n in names}\n"
             "for n, g in zip(names, gs): w[n] += float(g.find(ns + \"rect\").get(\"width\"))\n"
             "title = root.find(ns + \"text\").text\n"
             "print(len(gs), names[0], int(round(w[\"all\"])), int(round(w[\"hot\"])), int(round(w[\"main\"])),\n"
             "      \"<&>\\\"evil?]0;x??\" in names, title)\n"
             "' %s",
             path);
    CHECK_INT(run(cmd, &out), 0);
    /* 17 blocks (16 nodes and "all"); 1180 px of plot: hot is 50% of it, main 75% */
    CHECK_STR(out, "17 all 1180 590 885 True profile <of> \"app\" & ?[2J friends\n");
    free(out);
    free(svg);

    o = (struct flame_svg_opts){.tid = 101, .width = 600, .color_by_module = 1};
    CHECK_INT(flame_svg(&r, &o, &svg, &len), 0);
    CHECK(strstr(svg, "inl_helper") != NULL);
    CHECK(strstr(svg, ">main<") == NULL);
    CHECK(strstr(svg, "CPU profile of PID 4242 (app)") != NULL);
    snprintf(path, sizeof path, "%s/flame-thread.svg", tmpdir);
    CHECK_INT(write_file(path, svg, len), 0);
    snprintf(cmd, sizeof cmd, "python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' %s", path);
    CHECK_INT(run(cmd, NULL), 0);
    free(svg);
    cpu_report_free(&r);
}

/* ---- pprof ---- */

/* The tokens of the line of `go tool pprof` output that ends in name, joined by single spaces. */
static int pprof_line(const char *out, const char *name, char *dst, size_t n)
{
    for (const char *line = out; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[1024], joined[1024] = "", *save = NULL;
        snprintf(buf, sizeof buf, "%.*s", (int)len, line);
        for (char *tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
            if (joined[0]) strcat(joined, " ");
            strncat(joined, tok, sizeof joined - strlen(joined) - 2);
        }
        size_t jl = strlen(joined), nl = strlen(name);
        if (jl > nl && strcmp(joined + jl - nl, name) == 0 && joined[jl - nl - 1] == ' ') {
            snprintf(dst, n, "%s", joined);
            return 0;
        }
        line = end ? end + 1 : NULL;
    }
    snprintf(dst, n, "(no line for %s)", name);
    return -1;
}

static void pprof_reads_back(void)
{
    struct cpu_report r;
    make_report(&r);
    unsigned char *pb;
    size_t len;
    char err[256] = "";
    CHECK_INT(pprof_write_cpu(&r, &pb, &len, err, sizeof err), 0);
    CHECK(len > 20 && pb[0] == 0x1f && pb[1] == 0x8b);

    /* diagtop's own reader: flat and cumulative CPU time per function */
    struct rt_profile p;
    memset(&p, 0, sizeof p);
    CHECK_INT(pprof_read_profile(pb, len, &p, err, sizeof err), 0);
    CHECK_STR(p.unit, "nanoseconds");
    CHECK_INT(p.total, 1000000000LL);
    CHECK(p.seconds > 0.999 && p.seconds < 1.001);
    CHECK(p.n >= 13);
    if (p.n >= 1) {
        CHECK_STR(p.rows[0].function, "hot");
        CHECK_INT(p.rows[0].flat, 500000000);
        CHECK_INT(p.rows[0].cum, 500000000);
    }
    for (int i = 0; i < p.n; i++) {
        if (strcmp(p.rows[i].function, "main") == 0) CHECK_INT(p.rows[i].cum, 750000000);
        if (strcmp(p.rows[i].function, "rec") == 0) CHECK_INT(p.rows[i].cum, 100000000);
        if (strcmp(p.rows[i].function, "inl_helper") == 0) {
            CHECK_INT(p.rows[i].flat, 200000000);
            CHECK_STR(p.rows[i].file, "util.h");
        }
    }
    rt_profile_free(&p);

    /* go tool pprof, offline, without the binaries */
    char path[512], cmd[1200], *out = NULL, line[1024];
    snprintf(path, sizeof path, "%s/cpu.pb.gz", tmpdir);
    CHECK_INT(write_file(path, pb, len), 0);
    snprintf(cmd, sizeof cmd, "cd %s && HOME=%s go tool pprof -top -symbolize=none %s 2>&1", tmpdir,
             tmpdir, path);
    CHECK_INT(run(cmd, &out), 0);
    CHECK(strstr(out, "Type: cpu") != NULL);
    CHECK(strstr(out, "Duration: 1s, Total samples = 1000ms (  100%)") != NULL);
    pprof_line(out, "hot", line, sizeof line);
    CHECK_STR(line, "500ms 50.00% 50.00% 500ms 50.00% hot");
    pprof_line(out, "main", line, sizeof line);
    CHECK_STR(line, "0 0% 100% 750ms 75.00% main");
    pprof_line(out, "inl_helper (inline)", line, sizeof line);
    CHECK_STR(line, "200ms 20.00% 90.00% 200ms 20.00% inl_helper (inline)");
    pprof_line(out, "0xdead000", line, sizeof line);
    CHECK_STR(line, "50ms 5.00% 95.00% 50ms 5.00% 0xdead000");
    CHECK(strstr(out, "failed") == NULL);
    free(out);

    snprintf(cmd, sizeof cmd, "cd %s && HOME=%s go tool pprof -top -sample_index=samples -symbolize=none %s 2>&1",
             tmpdir, tmpdir, path);
    CHECK_INT(run(cmd, &out), 0);
    pprof_line(out, "hot", line, sizeof line);
    CHECK_STR(line, "50 50.00% 50.00% 50 50.00% hot");
    pprof_line(out, "cmp", line, sizeof line);
    CHECK_STR(line, "20 20.00% 70.00% 20 20.00% cmp");
    free(out);

    /* -traces: each stack innermost first, the inlined call above the function it was inlined into, labels */
    snprintf(cmd, sizeof cmd, "cd %s && HOME=%s go tool pprof -traces -symbolize=none %s 2>&1", tmpdir, tmpdir, path);
    CHECK_INT(run(cmd, &out), 0);
    const char *inl = strstr(out, "inl_helper (inline)\n");
    CHECK(inl && strstr(inl, "work\n") && strstr(inl, "thread_start\n"));
    if (inl) {
        char *work = strstr(inl, "work\n"), *ts = strstr(inl, "thread_start\n");
        CHECK(work && ts && work < ts && strstr(inl, "-----------") > ts);
    }
    CHECK(strstr(out, "thread_name:  worker\n thread_id:  101\n     200ms   inl_helper (inline)\n") != NULL);
    CHECK(strstr(out, "\033") == NULL); /* the hostile thread and function names were sanitized */
    CHECK(strstr(out, HOSTILE_SHOWN) != NULL);
    free(out);

    /* as raw protobuf, string_table[0] is "" (pprof -raw prints what it decoded) */
    snprintf(cmd, sizeof cmd, "cd %s && HOME=%s go tool pprof -raw -symbolize=none %s 2>&1", tmpdir, tmpdir, path);
    CHECK_INT(run(cmd, &out), 0);
    CHECK(strstr(out, "PeriodType: cpu nanoseconds") != NULL);
    CHECK(strstr(out, "Period: 10000000") != NULL);
    CHECK(strstr(out, "samples/count cpu/nanoseconds") != NULL);
    CHECK(strstr(out, "libc.so.6") != NULL); /* a mapping per module */
    free(out);
    free(pb);
    cpu_report_free(&r);
}

/* Many distinct frames and stacks: the interning tables grow, ids stay consistent. */
static void pprof_many_functions(void)
{
    struct cpu_report r;
    memset(&r, 0, sizeof r);
    snprintf(r.method, sizeof r.method, "perf");
    r.period_ns = 1000000;
    r.hz = 1000;
    r.seconds = 2;
    r.target_cost_percent = -1;
    r.nframes = 5000;
    r.frames = calloc(5000, sizeof *r.frames);
    for (int i = 0; i < 5000; i++) {
        r.frames[i].pc = 0x10000 + (unsigned long long)i * 16;
        char name[32];
        snprintf(name, sizeof name, "fn%d", i % 2500); /* two pcs per function */
        r.frames[i].function = strdup(name);
        r.frames[i].module = strdup(i % 3 ? "big" : "other.so");
    }
    r.nstacks = 3000;
    r.stacks = calloc(3000, sizeof *r.stacks);
    for (int i = 0; i < 3000; i++) {
        struct cpu_stack *s = &r.stacks[i];
        s->nframes = 8;
        s->frames = malloc(8 * sizeof *s->frames);
        for (int k = 0; k < 8; k++) s->frames[k] = (i * 7 + k * 613) % 5000;
        s->samples = 1 + i % 5;
        s->tid = 1 + i % 4;
        r.samples += s->samples;
    }
    unsigned char *pb;
    size_t len;
    char err[256];
    CHECK_INT(pprof_write_cpu(&r, &pb, &len, err, sizeof err), 0);
    struct rt_profile p;
    memset(&p, 0, sizeof p);
    CHECK_INT(pprof_read_profile(pb, len, &p, err, sizeof err), 0);
    CHECK_INT(p.total, r.samples * 1000000);
    long long flat = 0;
    for (int i = 0; i < p.n; i++) flat += p.rows[i].flat;
    CHECK_INT(flat, p.total);
    /* the innermost frame's function of stack 0 is frame 0: fn0 */
    struct cpu_top t;
    struct cpu_top_opts o = {.sort = CPU_TOP_BY_OWN};
    CHECK_INT(cpu_top_build(&r, &o, &t), 0);
    CHECK(p.n > 0 && t.n > 0 && strcmp(p.rows[0].function, t.rows[0].name) == 0);
    CHECK_INT(p.n > 0 ? p.rows[0].flat : 0, t.n > 0 ? t.rows[0].own_ns : -1);
    cpu_top_free(&t);
    rt_profile_free(&p);
    free(pb);
    cpu_report_free(&r);
}

/* ---- JSON ---- */

static const cJSON *get(const cJSON *o, const char *name) { return cJSON_GetObjectItemCaseSensitive(o, name); }

static void json_is_exact_and_valid(void)
{
    struct cpu_report r;
    make_report(&r);
    char *text = cpu_json(&r, NULL);
    CHECK(text != NULL);
    cJSON *doc = cJSON_Parse(text);
    CHECK(doc != NULL);
    CHECK_INT(get(doc, "pid")->valueint, 4242);
    CHECK_STR(get(doc, "method")->valuestring, "perf");
    CHECK(cJSON_IsNull(get(doc, "method_why")));
    CHECK_INT(get(doc, "samples")->valueint, 100);
    CHECK_INT(get(doc, "lost")->valueint, 3);
    CHECK_INT(get(doc, "period_ns")->valueint, 10000000);
    CHECK(strstr(text, "\"target_cost_percent\":0.40") != NULL);
    CHECK(strstr(text, "\"seconds\":1.000") != NULL);
    CHECK(strstr(text, "\"cpu_ns\":1000000000,") != NULL);
    const cJSON *threads = get(doc, "threads");
    CHECK_INT(cJSON_GetArraySize(threads), 3);
    CHECK_STR(get(cJSON_GetArrayItem(threads, 2), "name")->valuestring, "evil\033[2J\xef\xbf\xbd");
    const cJSON *fns = get(doc, "functions");
    CHECK_INT(cJSON_GetArraySize(fns), 13);
    const cJSON *hot = cJSON_GetArrayItem(fns, 0);
    CHECK_STR(get(hot, "name")->valuestring, "hot");
    CHECK_STR(get(hot, "module")->valuestring, "app");
    CHECK_INT(get(hot, "own_samples")->valueint, 50);
    CHECK_INT(get(hot, "total_samples")->valueint, 50);
    CHECK_STR(get(cJSON_GetArrayItem(fns, 4), "name")->valuestring, "<&>\"evil\033]0;x\007\xef\xbf\xbd");
    CHECK(cJSON_IsNull(get(cJSON_GetArrayItem(fns, 3), "module")));
    const cJSON *sts = get(doc, "stacks");
    CHECK_INT(cJSON_GetArraySize(sts), 8);
    const cJSON *s4 = cJSON_GetArrayItem(sts, 4);
    CHECK_INT(get(s4, "tid")->valueint, 101);
    CHECK_INT(get(s4, "samples")->valueint, 20);
    const cJSON *inl = cJSON_GetArrayItem(get(s4, "frames"), 0), *work = cJSON_GetArrayItem(get(s4, "frames"), 1);
    CHECK_STR(get(inl, "function")->valuestring, "inl_helper");
    CHECK(cJSON_IsTrue(get(inl, "inlined")));
    CHECK_STR(get(inl, "file")->valuestring, "util.h");
    CHECK_INT(get(inl, "line")->valueint, 5);
    CHECK_STR(get(inl, "pc")->valuestring, "0x401600");
    CHECK(cJSON_IsFalse(get(work, "inlined")));
    CHECK_STR(get(work, "offset")->valuestring, "0x20");
    const cJSON *s5 = cJSON_GetArrayItem(sts, 5);
    CHECK(cJSON_IsTrue(get(s5, "truncated")));
    CHECK_INT(get(s5, "cpu_ns")->valueint, 50000000);
    const cJSON *nomod = cJSON_GetArrayItem(get(s5, "frames"), 0), *jit = cJSON_GetArrayItem(get(s5, "frames"), 1);
    CHECK(cJSON_IsNull(get(nomod, "function")));
    CHECK(cJSON_IsNull(get(nomod, "module")));
    CHECK(cJSON_IsNull(get(nomod, "line")));
    CHECK_STR(get(jit, "module_offset")->valuestring, "0x99");
    cJSON_Delete(doc);

    /* strict parsers agree: the document is valid UTF-8 JSON */
    char path[512], cmd[700];
    snprintf(path, sizeof path, "%s/cpu.json", tmpdir);
    CHECK_INT(write_file(path, text, strlen(text)), 0);
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import json, sys; d = json.load(open(sys.argv[1], encoding=\"utf-8\")); "
             "sys.exit(d[\"functions\"][0][\"own_samples\"] != 50)' %s",
             path);
    CHECK_INT(run(cmd, NULL), 0);
    free(text);

    struct cpu_json_opts o = {.tid = 101, .functions = 2, .no_stacks = 1};
    text = cpu_json(&r, &o);
    doc = cJSON_Parse(text);
    CHECK(doc != NULL);
    CHECK_INT(get(doc, "samples")->valueint, 25);
    CHECK_INT(get(doc, "tid")->valueint, 101);
    CHECK_INT(cJSON_GetArraySize(get(doc, "threads")), 1);
    CHECK_INT(cJSON_GetArraySize(get(doc, "functions")), 2);
    CHECK_INT(cJSON_GetArraySize(get(doc, "stacks")), 0);
    CHECK_STR(get(cJSON_GetArrayItem(get(doc, "functions"), 0), "name")->valuestring, "inl_helper");
    cJSON_Delete(doc);
    free(text);
    cpu_report_free(&r);
}

/* ---- an empty profile: every renderer says so without failing ---- */

static void empty_report(void)
{
    struct cpu_report r;
    memset(&r, 0, sizeof r);
    snprintf(r.method, sizeof r.method, "perf");
    r.hz = 100;
    r.period_ns = 10000000;
    r.target_cost_percent = -1;
    struct cpu_top t;
    struct cpu_top_opts o = {0};
    CHECK_INT(cpu_top_build(&r, &o, &t), 0);
    CHECK_INT(t.n, 0);
    struct text_lines tl = {0};
    CHECK_INT(cpu_top_text(&t, 80, &tl), 0);
    CHECK_STR(tl.lines[tl.n - 1], "(no samples)");
    text_lines_free(&tl);
    cpu_top_free(&t);
    CHECK_INT(flame_folded(&r, 0, &tl), 0);
    CHECK_INT(tl.n, 0);
    CHECK_INT(flame_icicle(&r, 0, 80, 10, &tl), 0);
    CHECK_INT(tl.n, 0);
    char *svg;
    size_t len;
    CHECK_INT(flame_svg(&r, NULL, &svg, &len), 0);
    CHECK(strstr(svg, "</svg>") != NULL);
    free(svg);
    unsigned char *pb;
    char err[128];
    CHECK_INT(pprof_write_cpu(&r, &pb, &len, err, sizeof err), 0);
    struct rt_profile p;
    memset(&p, 0, sizeof p);
    CHECK_INT(pprof_read_profile(pb, len, &p, err, sizeof err), 0);
    CHECK_INT(p.n, 0);
    rt_profile_free(&p);
    free(pb);
    char *text = cpu_json(&r, NULL);
    CHECK(text && strstr(text, "\"samples\":0") && strstr(text, "\"target_cost_percent\":null"));
    free(text);
    struct cpu_peek pk;
    CHECK_INT(cpu_top_peek(&r, "main", NULL, 0, &pk), -ENOENT);
}

int main(void)
{
    check_suite = "cpu_render";
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    RUN(top_by_own_counts_own_and_total);
    RUN(top_filters_one_thread);
    RUN(top_text_is_sanitized_and_fits);
    RUN(peek_shows_callers_and_callees);
    RUN(folded_stacks_merge_by_name);
    RUN(icicle_blocks_are_proportional);
    RUN(svg_is_well_formed_and_escaped);
    RUN(pprof_reads_back);
    RUN(pprof_many_functions);
    RUN(json_is_exact_and_valid);
    RUN(empty_report);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (getenv("KEEP_TEST_FILES")) printf("  files kept in %s\n", tmpdir); /* to look at the SVG or pprof */
    else if (system(cmd) != 0) printf("  could not remove %s\n", tmpdir);
    CHECK_EXIT();
}
