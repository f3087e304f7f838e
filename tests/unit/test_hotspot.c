/* HotSpot attach replies (captured from OpenJDK 17 and 25 running tests/targets/Leaky.java) parsed by
 * hotspot_parse, odd and hostile replies, and the refusals of hotspot_attach that need no JVM. */
#include <errno.h>
#include <unistd.h>

#include "actions/runtimes/jvm/hotspot_attach.h"
#include "actions/runtimes/jvm/hotspot_parse.h"
#include "actions/runtimes/provider.h"
#include "check.h"

/* A fixture's status line and text, as hotspot_attach hands them over. */
static char *reply(const char *name, int *status, size_t *len)
{
    size_t n, off = 0;
    char *buf = fixture(name, &n);
    if (hotspot_parse_status(buf, n, status, &off) < 0) {
        printf("  %s has no status line\n", name);
        exit(2);
    }
    memmove(buf, buf + off, n - off + 1);
    *len = n - off;
    return buf;
}

static const struct rt_thread *thread_named(const struct rt_stack *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (s->threads[i].name && strcmp(s->threads[i].name, name) == 0) return &s->threads[i];
    return NULL;
}

static const struct rt_heap_row *row_named(const struct rt_heap *h, const char *name)
{
    for (int i = 0; i < h->n; i++)
        if (strcmp(h->rows[i].name, name) == 0) return &h->rows[i];
    return NULL;
}

static unsigned long long field_u(const struct rt_fields *fs, const char *key)
{
    const struct rt_field *f = rt_fields_find(fs, key);
    if (!f) printf("  no field %s\n", key);
    return f ? f->u : 0xdeadULL;
}

/* ---- status line ---- */

static void status_lines(void)
{
    int st = 99;
    size_t off = 0;
    CHECK_INT(hotspot_parse_status("0\ntext", 6, &st, &off), 0);
    CHECK_INT(st, 0);
    CHECK_INT(off, 2);
    CHECK_INT(hotspot_parse_status("-1\nOperation x not recognized!", 29, &st, &off), 0);
    CHECK_INT(st, -1);
    CHECK_INT(hotspot_parse_status("101\n", 4, &st, &off), 0);
    CHECK_INT(st, 101);
    CHECK_INT(hotspot_parse_status("0", 1, &st, &off), 0); /* a status and EOF */
    CHECK_INT(off, 1);
    CHECK_INT(hotspot_parse_status("", 0, &st, &off), -EPROTO);
    CHECK_INT(hotspot_parse_status("HTTP/1.1 200\n", 13, &st, &off), -EPROTO);
    CHECK_INT(hotspot_parse_status(" 0\n", 3, &st, &off), -EPROTO);
    CHECK_INT(hotspot_parse_status("0 \n", 3, &st, &off), -EPROTO);
    CHECK_INT(hotspot_parse_status("-\n", 2, &st, &off), -EPROTO);
    CHECK_INT(hotspot_parse_status("1234567890\n", 11, &st, &off), -EPROTO); /* no 10-digit statuses */
    CHECK_INT(hotspot_parse_status("0\0\n", 3, &st, &off), -EPROTO);
}

static void errors_after_status_zero(void)
{
    int st;
    size_t n;
    char line[128];
    char *t = reply("hotspot_heap_dump_exists.txt", &st, &n);
    CHECK_INT(st, 0);
    CHECK_INT(hotspot_parse_error(t, n, line, sizeof line), 1);
    CHECK_STR(line, "Unable to create /tmp/hd-fixture.hprof.gz: File exists");
    free(t);
    t = reply("hotspot_nmt_disabled.txt", &st, &n);
    CHECK_INT(hotspot_parse_error(t, n, line, sizeof line), 1);
    CHECK_STR(line, "Native memory tracking is not enabled");
    free(t);
    t = reply("hotspot_unknown_command.txt", &st, &n);
    CHECK_INT(st, -1);
    CHECK_INT(hotspot_parse_error(t, n, line, sizeof line), 1);
    CHECK_STR(line, "java.lang.IllegalArgumentException: Unknown diagnostic command");
    free(t);
    t = reply("hotspot_heap_info_g1.txt", &st, &n);
    CHECK_INT(hotspot_parse_error(t, n, line, sizeof line), 0);
    CHECK_STR(line, "");
    free(t);
    CHECK_INT(hotspot_parse_error("", 0, line, sizeof line), 0); /* GC.run says nothing */
    const char *jfr = "Could not find nope.\n\nUse JFR.check without options to see list of all available recordings.\n";
    CHECK_INT(hotspot_parse_error(jfr, strlen(jfr), line, 8), 1);
    CHECK_STR(line, "Could n"); /* bounded */
}

/* ---- thread dumps ---- */

static void threaddump_jdk17(void)
{
    int st;
    size_t n;
    char *t = reply("hotspot_threaddump.txt", &st, &n);
    struct rt_stack s = {0};
    CHECK_INT(hotspot_parse_threaddump(t, n, &s), 0);
    CHECK_INT(s.n, 28);
    const struct rt_thread *th = thread_named(&s, "main");
    CHECK(th != NULL);
    if (th) {
        CHECK_INT(th->id, 1);
        CHECK_INT(th->daemon, 0);
        CHECK_INT(th->os_tid, 0x7c76);
        CHECK_STR(th->state, "WAITING (on object monitor)");
        CHECK_INT(th->nframes, 4); /* the lock lines are not frames */
        CHECK_STR(th->frames[0].function, "java.lang.Object.wait");
        CHECK(th->frames[0].file == NULL); /* Native Method */
        CHECK_STR(th->frames[1].function, "java.lang.Thread.join");
        CHECK_STR(th->frames[1].file, "Thread.java"); /* module@version/ dropped */
        CHECK_INT(th->frames[1].line, 1313);
        CHECK_STR(th->frames[3].function, "Leaky.main");
        CHECK_STR(th->frames[3].file, "Leaky.java");
        CHECK_INT(th->frames[3].line, 89);
        CHECK_INT(th->wait_seconds, -1);
        CHECK(th->created_by == NULL);
    }
    th = thread_named(&s, "leaky-sleeper");
    CHECK(th != NULL);
    if (th) {
        CHECK_INT(th->id, 12);
        CHECK_INT(th->daemon, 0);
        CHECK_STR(th->state, "TIMED_WAITING (sleeping)");
        CHECK_STR(th->frames[1].function, "Leaky.sleeperLoop");
        CHECK_INT(th->frames[1].line, 24);
        CHECK_STR(th->frames[2].function, "Leaky$$Lambda$1/0x00007f0138000c08.run");
        CHECK(th->frames[2].file == NULL); /* Unknown Source */
        CHECK_INT(th->frames[2].line, 0);
    }
    th = thread_named(&s, "leaky-waiter");
    CHECK(th && th->daemon && !strcmp(th->state, "WAITING (on object monitor)") && th->nframes >= 3 &&
          !strcmp(th->frames[2].function, "Leaky.waiterLoop"));
    th = thread_named(&s, "leaky-blocked");
    CHECK(th && !strcmp(th->state, "BLOCKED (on object monitor)") && !strcmp(th->frames[0].function, "Leaky.blockedLoop"));
    th = thread_named(&s, "odd \"name\" #7 \xc3\xbcn\xc3\xaf"); /* quotes and a #N inside the name */
    CHECK(th != NULL);
    if (th) {
        CHECK_INT(th->id, 16);
        CHECK_INT(th->daemon, 1);
        CHECK_INT(th->os_tid, 0x7c8c);
    }
    th = thread_named(&s, "GC Thread#0"); /* a VM thread: no #id, no Java state, no frames */
    CHECK(th != NULL);
    if (th) {
        CHECK_INT(th->id, -1);
        CHECK_STR(th->state, "runnable");
        CHECK_INT(th->nframes, 0);
        CHECK_INT(th->os_tid, 0x7c77);
    }
    th = thread_named(&s, "C2 CompilerThread0"); /* "No compile task" is not a frame */
    CHECK(th && th->nframes == 0 && !strcmp(th->state, "RUNNABLE"));
    rt_stack_free(&s);
    free(t);
}

static void threaddump_jdk25(void)
{
    int st;
    size_t n;
    char *t = reply("hotspot25_threaddump.txt", &st, &n);
    struct rt_stack s = {0};
    CHECK_INT(hotspot_parse_threaddump(t, n, &s), 0);
    CHECK(s.n >= 20);
    const struct rt_thread *th = thread_named(&s, "main");
    CHECK(th && th->id == 3 && th->os_tid == 32579); /* "#3 [32579] ... nid=32579": decimal */
    th = thread_named(&s, "GC Thread#0");
    CHECK(th && th->id == -1 && th->os_tid == 32580 && th->nframes == 0);
    th = thread_named(&s, "leaky-sleeper");
    int found = 0;
    for (int i = 0; th && i < th->nframes; i++)
        found |= !strcmp(th->frames[i].function, "Leaky.sleeperLoop") && th->frames[i].line == 24;
    CHECK(found);
    rt_stack_free(&s);
    free(t);
}

static void threaddump_hostile(void)
{
    struct rt_stack s = {0};
    CHECK_INT(hotspot_parse_threaddump("", 0, &s), -EPROTO);
    CHECK_INT(hotspot_parse_threaddump("hello\nworld\n", 12, &s), -EPROTO);
    CHECK_INT(s.n, 0);
    /* A name with a newline, a header cut short, NUL bytes, an "at" with nothing, a frame with no parentheses,
     * a line number too large, a frame before any thread. */
    static const char odd[] = "\tat orphan.frame(X.java:1)\n"
                              "Full thread dump test:\n\n"
                              "\"two\nlines\" #5 daemon prio=5 nid=0x10 runnable\n"
                              "   java.lang.Thread.State: RUNNABLE\n"
                              "\tat a.b(A.java:99999999999999999999)\n"
                              "\tat \n"
                              "\tat no.parens\n"
                              "\tat x.y(:12)\n"
                              "\"nul\0byte\" #6 nid=0xZZ\n"
                              "\tat c.d(C.java:7)\n"
                              "\"cut";
    CHECK_INT(hotspot_parse_threaddump(odd, sizeof odd - 1, &s), 0);
    CHECK_INT(s.n, 2);
    if (s.n == 2) {
        CHECK_STR(s.threads[0].name, "two\nlines");
        CHECK_INT(s.threads[0].id, 5);
        CHECK_INT(s.threads[0].os_tid, 16);
        CHECK_INT(s.threads[0].nframes, 3); /* "\tat " alone is no frame */
        if (s.threads[0].nframes == 3) {
            CHECK_STR(s.threads[0].frames[0].function, "a.b");
            CHECK_STR(s.threads[0].frames[0].file, "A.java:99999999999999999999"); /* not a line: kept as text */
            CHECK_INT(s.threads[0].frames[0].line, 0);
            CHECK_STR(s.threads[0].frames[1].function, "no.parens");
            CHECK(s.threads[0].frames[1].file == NULL);
            CHECK_STR(s.threads[0].frames[2].function, "x.y");
            CHECK(s.threads[0].frames[2].file == NULL);
            CHECK_INT(s.threads[0].frames[2].line, 12);
        }
        CHECK_STR(s.threads[1].name, "nul"); /* NUL ends the string */
        CHECK_INT(s.threads[1].os_tid, 0);   /* nid=0xZZ is no number */
        CHECK_INT(s.threads[1].nframes, 1);
    }
    rt_stack_free(&s);
    /* Bounds: 5000 frames keep 4096; a 5000-byte name keeps 1024. */
    size_t cap = 5000 * 32 + 6000;
    char *big = malloc(cap);
    size_t o = (size_t)snprintf(big, cap, "Full thread dump:\n\"");
    memset(big + o, 'n', 5000);
    o += 5000;
    o += (size_t)snprintf(big + o, cap - o, "\" #1 nid=0x1 runnable\n");
    for (int i = 0; i < 5000; i++) o += (size_t)snprintf(big + o, cap - o, "\tat f.g%d(F.java:%d)\n", i, i);
    CHECK_INT(hotspot_parse_threaddump(big, o, &s), 0);
    CHECK_INT(s.n, 1);
    if (s.n == 1) {
        CHECK_INT(s.threads[0].nframes, 4096);
        CHECK_INT(strlen(s.threads[0].name), 1024);
    }
    rt_stack_free(&s);
    free(big);
}

/* ---- class histograms ---- */

static void histogram_jdk17(void)
{
    int st;
    size_t n;
    char *t = reply("hotspot_histogram.txt", &st, &n);
    struct rt_heap h = {0};
    CHECK_INT(hotspot_parse_histogram(t, n, &h), 0);
    CHECK_INT(h.n, 640);
    rt_heap_finish(&h);
    CHECK_INT(h.total_count, 898703); /* what the JVM's own "Total" line says */
    CHECK_INT(h.total_bytes, 34151248);
    const struct rt_heap_row *r = row_named(&h, "LeakedThing");
    CHECK(r && r->count == 206000 && r->bytes == 4944000 && r->alloc_count == -1 && r->alloc_bytes == -1 && !r->stack);
    r = row_named(&h, "java.util.HashMap$Node"); /* " (java.base@17.0.15)" dropped */
    CHECK(r && r->count == 209962 && r->bytes == 6718784);
    CHECK(row_named(&h, "[B") != NULL);
    CHECK(row_named(&h, "[[B") != NULL);
    CHECK(h.rows[0].bytes >= h.rows[1].bytes); /* sorted by rt_heap_finish */
    rt_heap_free(&h);
    free(t);
}

static void histogram_jdk25(void)
{
    int st;
    size_t n;
    char *t = reply("hotspot25_histogram.txt", &st, &n);
    struct rt_heap h = {0};
    CHECK_INT(hotspot_parse_histogram(t, n, &h), 0);
    CHECK_INT(h.n, 307);
    rt_heap_finish(&h);
    CHECK_INT(h.total_count, 558227);
    CHECK_INT(h.total_bytes, 20393176);
    CHECK(row_named(&h, "LeakedThing") != NULL);
    rt_heap_free(&h);
    free(t);
}

static void histogram_hostile(void)
{
    struct rt_heap h = {0};
    CHECK_INT(hotspot_parse_histogram("", 0, &h), -EPROTO);
    CHECK_INT(hotspot_parse_histogram("Heap inspection failed\n", 23, &h), -EPROTO);
    static const char odd[] = " num     #instances         #bytes  class name (module)\n"
                              "-------------------------------------------------------\n"
                              "   1:        12        340  a.B (mod@1)\n"
                              "   2: 99999999999999999999 5  too.Big\n"
                              "   3:         1\n"
                              "   4:         1          2  \n"
                              "   5:         7          8  weird (name with) spaces\n"
                              "   6:         9         10  [Lx.Y; (jdk.proxy1)\n"
                              "x7:           1          2  not.A.Row\n"
                              "Total        29        360\n";
    CHECK_INT(hotspot_parse_histogram(odd, sizeof odd - 1, &h), 0);
    CHECK_INT(h.n, 3);
    CHECK(row_named(&h, "a.B") && row_named(&h, "a.B")->count == 12);
    CHECK(row_named(&h, "weird (name with) spaces") != NULL); /* not a module: kept */
    CHECK(row_named(&h, "[Lx.Y;") != NULL);
    rt_heap_free(&h);
}

/* ---- GC.heap_info of every collector ---- */

static void heap_info(const char *name, long long want_used, long long want_committed, const char *collector,
                      struct rt_fields *fs)
{
    int st;
    size_t n;
    char *t = reply(name, &st, &n);
    long long used = 0, committed = 0;
    memset(fs, 0, sizeof *fs);
    CHECK_INT(hotspot_parse_heap_info(t, n, fs, &used, &committed), 0);
    CHECK_INT(used, want_used);
    CHECK_INT(committed, want_committed);
    CHECK_INT(field_u(fs, "heap_used"), want_used);
    CHECK_INT(field_u(fs, "heap_committed"), want_committed);
    const struct rt_field *c = rt_fields_find(fs, "collector");
    CHECK(c && c->unit == RT_TEXT && !strcmp(c->text, collector));
    for (int i = 0; i < fs->n; i++) CHECK_STR(fs->f[i].section, "heap");
    CHECK_STR(fs->f[0].key, "heap_used"); /* the sums lead */
    CHECK_STR(fs->f[0].label, "heap-used");
    free(t);
}

static void heap_info_g1(void)
{
    struct rt_fields fs;
    heap_info("hotspot_heap_info_g1.txt", 36630LL << 10, 225280LL << 10, "G1", &fs);
    CHECK_INT(field_u(&fs, "garbage_first_heap_region_size"), 4096LL << 10);
    CHECK_INT(field_u(&fs, "garbage_first_heap_young"), 3);
    CHECK_INT(field_u(&fs, "garbage_first_heap_young_bytes"), 12288LL << 10);
    CHECK_INT(field_u(&fs, "garbage_first_heap_survivors"), 1);
    CHECK_INT(field_u(&fs, "metaspace_used"), 3847LL << 10);
    CHECK_INT(field_u(&fs, "metaspace_committed"), 3968LL << 10);
    CHECK_INT(field_u(&fs, "metaspace_reserved"), 1114112LL << 10);
    CHECK_INT(field_u(&fs, "class_space_used"), 388LL << 10);
    CHECK_INT(rt_fields_find(&fs, "garbage_first_heap_young")->unit, RT_COUNT);
    CHECK_INT(rt_fields_find(&fs, "metaspace_used")->unit, RT_BYTES);
    rt_fields_free(&fs);
    heap_info("hotspot25_heap_info_g1.txt", 19686LL << 10, 393216LL << 10, "G1", &fs); /* "total reserved ..." */
    CHECK_INT(field_u(&fs, "garbage_first_heap_reserved"), 6172672LL << 10);
    CHECK_INT(field_u(&fs, "garbage_first_heap_region_size"), 4096LL << 10);
    rt_fields_free(&fs);
}

static void heap_info_other_collectors(void)
{
    struct rt_fields fs;
    /* Serial and Parallel: the generations add up. */
    heap_info("hotspot_heap_info_serial.txt", 14461LL << 10, (116160LL + 258048LL) << 10, "Serial", &fs);
    CHECK_INT(field_u(&fs, "eden_space_size"), 103296LL << 10);
    const struct rt_field *f = rt_fields_find(&fs, "eden_space_used_ratio");
    CHECK(f && f->is_double && f->d > 0.139 && f->d < 0.141);
    CHECK_INT(field_u(&fs, "tenured_generation_used"), 0);
    rt_fields_free(&fs);
    heap_info("hotspot_heap_info_parallel.txt", 11673LL << 10, (113152LL + 258048LL) << 10, "Parallel", &fs);
    CHECK_INT(field_u(&fs, "paroldgen_total"), 258048LL << 10);
    CHECK_INT(field_u(&fs, "object_space_size"), 258048LL << 10);
    rt_fields_free(&fs);
    heap_info("hotspot_heap_info_z.txt", 42LL << 20, 378LL << 20, "Z", &fs);
    CHECK_INT(field_u(&fs, "zheap_max_capacity"), 6028LL << 20);
    rt_fields_free(&fs);
    heap_info("hotspot_heap_info_shenandoah.txt", 14336LL << 10, 378LL << 20, "Shenandoah", &fs);
    CHECK_INT(field_u(&fs, "shenandoah_heap_max"), 6028LL << 20);
    CHECK_INT(field_u(&fs, "shenandoah_heap_soft_max"), 6028LL << 20);
    CHECK_INT(field_u(&fs, "shenandoah_heap_regions"), 3014);
    CHECK_INT(field_u(&fs, "shenandoah_heap_region_size"), 2048LL << 10);
    CHECK_INT(field_u(&fs, "metaspace_used"), 235LL << 10);
    rt_fields_free(&fs);
}

static void heap_info_hostile(void)
{
    struct rt_fields fs = {0};
    long long used = 0, committed = 0;
    CHECK_INT(hotspot_parse_heap_info("", 0, &fs, &used, &committed), -EPROTO);
    CHECK_INT(hotspot_parse_heap_info("Status: fine\n - [0x1, 0x2)\n", 27, &fs, &used, NULL), -EPROTO);
    CHECK_INT(used, -1);
    static const char odd[] = " my heap total 99999999999999999999K, used 2T, used -4K, used 1G\n"
                              " x y z w v u t s r q p o n m l k j i h g f e d c b a 1K\n"
                              ",,,,\n";
    CHECK_INT(hotspot_parse_heap_info(odd, sizeof odd - 1, &fs, &used, &committed), 0);
    CHECK_INT(used, 1LL << 30); /* only "used 1G" is a figure */
    CHECK_INT(committed, -1);
    CHECK(rt_fields_find(&fs, "heap_committed") == NULL);
    rt_fields_free(&fs);
}

/* ---- what needs no JVM ---- */

static void probe_refuses_non_jvms(void)
{
    char why[256] = "";
    CHECK_INT(hotspot_provider.probe(getpid(), why, sizeof why), -ENOTSUP);
    CHECK(strstr(why, "not a JVM") != NULL);
    CHECK_INT(hotspot_provider.probe(0x3FFFFFF0, why, sizeof why), -ESRCH);
    CHECK_STR(hotspot_provider.name, "hotspot");
    CHECK_STR(hotspot_provider.speaks, "Java");
    CHECK(hotspot_provider.stack && hotspot_provider.memstats && hotspot_provider.gc && hotspot_provider.heap &&
          hotspot_provider.profile && hotspot_provider.heap_dump);
}

static void requests_beyond_the_protocol_are_refused(void)
{
    struct hotspot_target t = {.pid = getpid(), .nspid = getpid()};
    struct hotspot_reply r;
    char err[256], arg[1100];
    memset(arg, 'a', sizeof arg - 1);
    arg[sizeof arg - 1] = '\0';
    CHECK_INT(hotspot_attach_request(&t, "jcmd", arg, 1.0, NULL, &r, err, sizeof err), -EINVAL);
    CHECK_INT(hotspot_attach_request(&t, "a-command-longer-than-16", NULL, 1.0, NULL, &r, err, sizeof err), -EINVAL);
    CHECK_INT(hotspot_attach_request(&t, "", NULL, 1.0, NULL, &r, err, sizeof err), -EINVAL);
    t.start_ticks = 1; /* not this process's start time: never sent */
    CHECK_INT(hotspot_attach_request(&t, "threaddump", NULL, 1.0, NULL, &r, err, sizeof err), -ESRCH);
}

/* `test_hotspot --probe PID`: the probe's verdict, for the end-to-end tests of cases the CLI reports on its own
 * terms (another user's JVM, which diagtop cannot even classify without privilege). */
static int probe_main(const char *pid)
{
    char why[512] = "";
    int rc = hotspot_provider.probe(atoi(pid), why, sizeof why);
    printf("probe %d: %s\n", rc, rc == 0 ? "ok" : why);
    return rc == 0 ? 0 : 1;
}

static int index_named(const struct rt_stack *s, const char *name)
{
    const struct rt_thread *t = thread_named(s, name);
    return t ? (int)(t - s->threads) : -2;
}

/* tests/targets/Locks.java under OpenJDK 17, `threaddump -l`: two deadlocks (monitors, ReentrantLocks), a pool
 * blocked on a monitor, three threads parked on a ReentrantLock. */
static void threaddump_locks(void)
{
    int st;
    size_t n;
    char *t = reply("hotspot_locks_threaddump.txt", &st, &n);
    struct rt_stack s = {0};
    CHECK_INT(hotspot_parse_threaddump(t, n, &s), 0);
    int dla = 0;
    for (int i = 0; i < s.n; i++) dla += s.threads[i].name && strcmp(s.threads[i].name, "dl-a") == 0;
    CHECK_INT(dla, 1); /* the deadlock report's "dl-a": and its stacks are not threads */
    const struct rt_thread *th = thread_named(&s, "dl-a");
    CHECK(th != NULL);
    if (th) {
        CHECK_STR(th->wait_how, "waiting to lock");
        CHECK_STR(th->waits_for.address, "0x000000069ec1abb0");
        CHECK_STR(th->waits_for.class_name, "java.lang.Object");
        CHECK_INT(th->held_by, index_named(&s, "dl-b"));
        CHECK_INT(th->nholds, 1);
        if (th->nholds) CHECK_STR(th->holds[0].address, "0x000000069ec1aba0");
        CHECK(th->cpu_ms > 0.829 && th->cpu_ms < 0.831);
        CHECK(th->elapsed_s > 1.78 && th->elapsed_s < 1.80);
        CHECK_INT(th->nframes, 4); /* lock lines are not frames */
    }
    for (int k = 0; k < 10; k++) {
        char name[24];
        snprintf(name, sizeof name, "pool-%d", k);
        th = thread_named(&s, name);
        CHECK(th && th->held_by == index_named(&s, "holder"));
    }
    th = thread_named(&s, "juc-0");
    CHECK(th && strcmp(th->wait_how, "parking to wait for") == 0 && th->held_by == index_named(&s, "juc-holder"));
    th = thread_named(&s, "juc-holder");
    CHECK(th && th->nholds == 1 && strstr(th->holds[0].class_name, "ReentrantLock$NonfairSync"));
    th = thread_named(&s, "holder");
    CHECK(th && th->nholds == 1 && th->waits_for.address == NULL && th->held_by == -1);
    th = thread_named(&s, "Finalizer"); /* in Object.wait(): the monitor it waits on was released */
    CHECK(th && th->waits_for.address && th->nholds == 0 && th->held_by == -1);
    CHECK_INT(s.ndeadlocks, 2);
    if (s.ndeadlocks == 2) {
        CHECK_INT(s.deadlocks[0].n, 2);
        const struct rt_deadlock_edge *e = &s.deadlocks[0].edges[0];
        CHECK_STR(e->thread, "dl-a");
        CHECK_STR(e->how, "waiting to lock monitor");
        CHECK_STR(e->lock.address, "0x000000069ec1abb0");
        CHECK_STR(e->lock.class_name, "java.lang.Object");
        CHECK_STR(e->held_by, "dl-b");
        CHECK_INT(s.deadlocks[1].n, 2);
        e = &s.deadlocks[1].edges[0];
        CHECK_STR(e->thread, "jdl-a");
        CHECK_STR(e->how, "waiting for ownable synchronizer");
        CHECK_STR(e->lock.address, "0x000000069ec1ad88");
        CHECK_STR(e->lock.class_name, "java.util.concurrent.locks.ReentrantLock$NonfairSync");
        CHECK_STR(e->held_by, "jdl-b");
    }
    rt_stack_free(&s);
    free(t);
}

/* Lock lines and deadlock reports cut short or lying: no crash, nothing invented. */
static void threaddump_locks_hostile(void)
{
    static const char odd[] = "Full thread dump\n"
                               "\"a\" #1 prio=5 cpu=xms elapsed=-3s nid=0x1 waiting\n"
                               "\tat X.y(X.java:1)\n"
                               "\t- waiting to lock <0x\n"
                               "\t- waiting to lock <0x12\n"
                               "\t- locked <0x34> (a \n"
                               "\t- parking to wait for <no object reference available>\n"
                               "\t- waiting on <0x56> (a B)\n"
                               "\"b\" #2 nid=0x2 waiting\n"
                               "\t- locked <0x56> (a B)\n"
                               "   Locked ownable synchronizers:\n"
                               "\t- <0x\n"
                               "JNI global refs: 1\n"
                               "Found one Java-level deadlock:\n"
                               "\"\":\n"
                               "  which is held by \"\n"
                               "  waiting to lock monitor (\n"
                               "  waiting for ownable synchronizer 0x, (\n"
                               "\"c\":\n"
                               "  which is held by \"d\"\n"
                               "Found one Java-level deadlock:\n";
    struct rt_stack s = {0};
    CHECK_INT(hotspot_parse_threaddump(odd, sizeof odd - 1, &s), 0);
    CHECK_INT(s.n, 2);
    if (s.n == 2) {
        CHECK(s.threads[0].cpu_ms == -1 && s.threads[0].elapsed_s == -1);
        CHECK_STR(s.threads[0].wait_how, "waiting on"); /* the first well-formed wait */
        CHECK_STR(s.threads[0].waits_for.address, "0x56");
        CHECK_INT(s.threads[0].held_by, -1); /* "waiting on": not a holder's lock */
        CHECK_INT(s.threads[0].nholds, 1);
        CHECK_INT(s.threads[1].nholds, 1);
    }
    CHECK_INT(s.ndeadlocks, 2);
    if (s.ndeadlocks == 2) {
        CHECK_INT(s.deadlocks[0].n, 2);
        if (s.deadlocks[0].n == 2) CHECK_STR(s.deadlocks[0].edges[1].held_by, "d");
        CHECK_INT(s.deadlocks[1].n, 0);
    }
    rt_stack_free(&s);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--probe") == 0) return probe_main(argv[2]);
    check_suite = "hotspot";
    RUN(status_lines);
    RUN(errors_after_status_zero);
    RUN(threaddump_jdk17);
    RUN(threaddump_jdk25);
    RUN(threaddump_hostile);
    RUN(threaddump_locks);
    RUN(threaddump_locks_hostile);
    RUN(histogram_jdk17);
    RUN(histogram_jdk25);
    RUN(histogram_hostile);
    RUN(heap_info_g1);
    RUN(heap_info_other_collectors);
    RUN(heap_info_hostile);
    RUN(probe_refuses_non_jvms);
    RUN(requests_beyond_the_protocol_are_refused);
    CHECK_EXIT();
}
