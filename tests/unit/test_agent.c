/* diagtop's side of the native agent: the parsers of its replies (memstats, heap sites, CPU samples; replies
 * captured from libdiagtop-agent.so, and hostile ones), the transport against in-process fake agents on a Unix
 * socket (a whole reply, the agent's own error, no end line, NUL bytes, a hung agent, cancel, a socket path longer
 * than sockaddr_un holds), the socket's listening inode in /proc/net/unix text, and the pprof written for a heap
 * snapshot read back by diagtop's pprof reader. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "actions/runtimes/agent/agent_client.h"
#include "actions/runtimes/agent/agent_pprof.h"
#include "actions/runtimes/go/pprof_read.h"
#include "actions/stack/symbolize.h"
#include "check.h"
#include "collect/runtime.h"
#include "util/clock.h"

static struct agent_reply body(const char *text)
{
    struct agent_reply r = {strdup(text), strlen(text), 0, 0};
    r.truncated = strstr(text, "truncated 1\n") != NULL;
    return r;
}

/* ---- memstats ---- */

static const char memstats_reply[] = /* libdiagtop-agent's, with its status and end lines taken off */
    "allocator glibc-2.36\nheap_system 9502720\nin_use 8700992\nfree 801728\nfree_chunks 1346\nfastbin_free 0\n"
    "fastbin_chunks 0\nmmapped 0\nmmapped_blocks 0\nreleasable_top 129728\narenas 3\nsystem_max 9637888\n"
    "aspace 9637888\nmmapped_chunks 0\nrss 11390976\nmallocs 85994\nfrees 81895\nallocated_bytes 177947312\n"
    "uptime_ns 594041000\nrate_seconds 0.594\nmallocs_per_second 144761.5\nfrees_per_second 137861.000\n"
    "bytes_per_second 299554000.125\nheap_profile 1\ninterval 32768\nsamples_live 254\nsamples_dropped 0\n"
    "stacks_dropped 0\ntable_bytes 1114208\ntable_cap 33554432\nfuture_field -1\n";

static void test_memstats(void)
{
    struct agent_reply r = body(memstats_reply);
    struct rt_fields fs = {0};
    char err[256];
    CHECK_INT(agent_parse_memstats(&r, &fs, err, sizeof err), 0);
    const struct rt_field *f = rt_fields_find(&fs, "in_use");
    CHECK(f && f->unit == RT_BYTES && f->u == 8700992 && !strcmp(f->section, "malloc"));
    f = rt_fields_find(&fs, "allocator");
    CHECK(f && f->unit == RT_TEXT && !strcmp(f->text, "glibc-2.36"));
    f = rt_fields_find(&fs, "free_chunks");
    CHECK(f && f->unit == RT_COUNT && f->u == 1346);
    f = rt_fields_find(&fs, "uptime"); /* _ns is the unit's */
    CHECK(f && f->unit == RT_NANOSECONDS && f->u == 594041000 && !strcmp(f->section, "agent"));
    f = rt_fields_find(&fs, "mallocs_per_second");
    CHECK(f && f->is_double && f->d > 144761.4 && f->d < 144761.6);
    f = rt_fields_find(&fs, "heap_profile");
    CHECK(f && f->unit == RT_BOOL && f->u == 1);
    f = rt_fields_find(&fs, "interval");
    CHECK(f && f->unit == RT_BYTES && f->u == 32768 && !strcmp(f->section, "agent"));
    CHECK(rt_fields_find(&fs, "rss") == NULL); /* the kernel's section has it */
    f = rt_fields_find(&fs, "future_field");    /* not a number: kept as the agent wrote it */
    CHECK(f && f->unit == RT_TEXT && !strcmp(f->text, "-1"));
    rt_fields_free(&fs);
    agent_reply_free(&r);
    r = body("site 1 2 3 4 7f00\n");
    CHECK_INT(agent_parse_memstats(&r, &fs, err, sizeof err), -EBADMSG);
    rt_fields_free(&fs);
    agent_reply_free(&r);
}

/* ---- heap ---- */

static void test_heap(void)
{
    struct agent_reply r = body("time_ns 1796294477559742341\ninterval 524288\nsamples_live 240\nsamples_total 256\n"
                                "samples_dropped 2\nstacks_dropped 0\ntable_bytes 1081800\n"
                                "site 118881 122804293 118881 122804293 5064f4 6342fc 7fc780df624a\n"
                                "site 0 0 66 6307007.5 510a2c\n"
                                "site 1 1 1 1\n");
    struct agent_heap h;
    char err[256];
    CHECK_INT(agent_parse_heap(&r, &h, err, sizeof err), 0);
    CHECK_INT(h.n, 3);
    CHECK_INT(h.interval, 524288);
    CHECK_INT(h.samples_dropped, 2);
    CHECK(h.taken_at > 1796294477.5 && h.taken_at < 1796294477.6);
    CHECK(h.sites[0].inuse_bytes == 122804293 && h.sites[0].npcs == 3 && h.sites[0].pcs[2] == 0x7fc780df624aull);
    CHECK(h.sites[1].alloc_bytes == 6307007.5 && h.sites[1].inuse_objects == 0);
    CHECK_INT(h.sites[2].npcs, 0);
    agent_heap_free(&h);
    agent_reply_free(&r);

    /* 70 frames: cut at 64, the innermost kept */
    char line[2048] = "time_ns 1\ninterval 4096\nsite 1 1 1 1";
    for (int i = 0; i < 70; i++) snprintf(line + strlen(line), sizeof line - strlen(line), " %x", 0x1000 + i);
    strcat(line, "\n");
    r = body(line);
    CHECK_INT(agent_parse_heap(&r, &h, err, sizeof err), 0);
    CHECK(h.n == 1 && h.sites[0].npcs == AGENT_MAX_PCS && h.sites[0].pcs[0] == 0x1000);
    agent_heap_free(&h);
    agent_reply_free(&r);

    static const char *const bad[] = {
        "time_ns 1\ninterval 4096\nsite 1 1 1 1 7fzz\n",              /* not hex */
        "time_ns 1\ninterval 4096\nsite -1 1 1 1 7f00\n",             /* a sign */
        "time_ns 1\ninterval 4096\nsite 1 1 1 7f00\n",                /* a value missing */
        "time_ns 1\ninterval 4096\nsite 1 1 1 1e9 7f00\n",            /* an exponent */
        "time_ns 1\ninterval 4096\nsite 1 1 1 1  7f00\n",             /* two spaces */
        "time_ns 1\ninterval 4096\nsite 1 1 1 1 11112222333344445\n", /* 17 hex digits */
        "interval 4096\nsite 1 1 1 1 7f00\n",                         /* not a heap reply */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = body(bad[i]);
        int rc = agent_parse_heap(&r, &h, err, sizeof err);
        if (rc != -EBADMSG) printf("  bad heap reply %zu: %d\n", i, rc);
        CHECK_INT(rc, -EBADMSG);
        CHECK(h.sites == NULL && h.n == 0);
        agent_reply_free(&r);
    }

    /* more sites than diagtop takes */
    size_t cap = 100001 * 16 + 64, off = 0;
    char *many = malloc(cap);
    off += (size_t)snprintf(many, cap, "time_ns 1\ninterval 4096\n");
    for (int i = 0; i < 100001; i++) off += (size_t)snprintf(many + off, cap - off, "site 1 1 1 1\n");
    r = body(many);
    free(many);
    CHECK_INT(agent_parse_heap(&r, &h, err, sizeof err), -E2BIG);
    CHECK(strstr(err, "more than 100000 sites") != NULL);
    agent_reply_free(&r);
}

/* ---- profile ---- */

static void test_profile(void)
{
    struct agent_reply r = body("hz 100\nseconds 2.000\nperiod_ns 10000000\nsamples 125\nlost 3\nthreads_profiled 2\n"
                                "thread 2913 hotspots\nthread 2916 burn worker\n"
                                "sample 2916 64 55d369c0f2af 55d369c0f3c9 7ff6953738ec\n"
                                "sample 2916 61 55d369c0f30e 7ff6952a9bf4\n");
    struct agent_profile p;
    char err[256];
    CHECK_INT(agent_parse_profile(&r, &p, err, sizeof err), 0);
    CHECK_INT(p.hz, 100);
    CHECK_INT(p.period_ns, 10000000);
    CHECK_INT(p.lost, 3);
    CHECK_INT(p.samples, 125); /* the sum of the rows */
    CHECK(p.seconds > 1.99 && p.seconds < 2.01);
    CHECK_INT(p.nthreads, 2);
    CHECK_STR(p.threads[1].name, "burn worker");
    CHECK(p.n == 2 && p.stacks[0].tid == 2916 && p.stacks[0].count == 64 && p.stacks[0].npcs == 3);
    agent_profile_free(&p);
    agent_reply_free(&r);
    static const char *const bad[] = {
        "hz 100\nperiod_ns 10000000\nsample 0 1 7f00\n",       /* tid 0 */
        "hz 100\nperiod_ns 10000000\nsample 5 x 7f00\n",       /* count */
        "hz 100\nperiod_ns 10000000\nthread abc name\n",       /* tid */
        "hz 0\nperiod_ns 10000000\n",                          /* rate */
        "hz 100\n",                                            /* no period */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = body(bad[i]);
        CHECK_INT(agent_parse_profile(&r, &p, err, sizeof err), -EBADMSG);
        agent_reply_free(&r);
    }
}

/* ---- the transport, against fake agents ---- */

struct fake {
    int lfd;
    const char *reply; /* NULL: hang */
    size_t len;
    char got[256];
};

static void *fake_serve(void *arg)
{
    struct fake *f = arg;
    int c = accept(f->lfd, NULL, NULL);
    if (c < 0) return NULL;
    ssize_t n = recv(c, f->got, sizeof f->got - 1, 0);
    f->got[n > 0 ? n : 0] = '\0';
    if (f->reply) send(c, f->reply, f->len, MSG_NOSIGNAL);
    else sleep(2);
    shutdown(c, SHUT_WR);
    char buf[64];
    while (recv(c, buf, sizeof buf, 0) > 0)
        ;
    close(c);
    return NULL;
}

static int fake_listen(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (strlen(path) < sizeof sa.sun_path) {
        strcpy(sa.sun_path, path);
        unlink(path);
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) return -1;
    } else { /* bind a long path from inside its directory */
        char dir[4096];
        snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(path, '/') - path), path);
        int cwd = open(".", O_RDONLY | O_DIRECTORY);
        if (chdir(dir) < 0) return -1;
        strcpy(sa.sun_path, strrchr(path, '/') + 1);
        int rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
        if (fchdir(cwd) < 0) rc = -1;
        close(cwd);
        if (rc < 0) return -1;
    }
    listen(fd, 4);
    return fd;
}

static double exchange_seconds; /* how long the last exchange_with's exchange took (not the fake's wait) */

/* One exchange with a fake that answers reply (NULL: never). */
static int exchange_with(const char *path, const char *reply, double timeout, const volatile sig_atomic_t *cancel,
                         struct agent_reply *out, char *err, size_t errlen, char *got)
{
    struct fake f = {fake_listen(path), reply, reply ? strlen(reply) : 0, ""};
    if (reply && !strcmp(reply, "NUL")) {
        f.reply = "diagtop-agent 1 ok\na\0b\nend\n";
        f.len = 27;
    }
    pthread_t t;
    pthread_create(&t, NULL, fake_serve, &f);
    struct agent_exchange x = {.path = path, .request = "heap", .timeout = timeout, .max_reply = 1 << 20,
                               .cancel = cancel};
    double t0 = clock_monotonic_seconds();
    int rc = agent_client_exchange(&x, out, err, errlen);
    exchange_seconds = clock_monotonic_seconds() - t0;
    pthread_join(t, NULL);
    close(f.lfd);
    unlink(path);
    if (got) strcpy(got, f.got);
    return rc;
}

static volatile sig_atomic_t cancel_flag;
static void *set_cancel(void *arg)
{
    (void)arg;
    clock_sleep(0.3, NULL);
    cancel_flag = 1;
    return NULL;
}

static void test_transport(void)
{
    char dir[] = "/tmp/diagtop-unit-agent.XXXXXX", path[4200], err[512], got[256];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/agent.1.sock", dir);
    struct agent_reply r;
    CHECK_INT(exchange_with(path, "diagtop-agent 1 ok\ntime_ns 5\ninterval 4096\nend\n", 2, NULL, &r, err, sizeof err,
                            got), 0);
    CHECK_STR(got, "heap\n");
    CHECK_STR(r.data, "time_ns 5\ninterval 4096\n");
    unsigned long long v;
    CHECK(agent_reply_u64(&r, "interval", &v) == 0 && v == 4096);
    CHECK_INT(agent_reply_u64(&r, "nothing", &v), -ENOENT);
    agent_reply_free(&r);
    CHECK_INT(exchange_with(path, "diagtop-agent 1 ok\nend\n", 2, NULL, &r, err, sizeof err, NULL), 0);
    CHECK_INT(r.len, 0);
    agent_reply_free(&r);
    CHECK_INT(exchange_with(path, "diagtop-agent 1 error 95 heap profiling is off\x1b[2J\n", 2, NULL, &r, err,
                            sizeof err, NULL), -95);
    CHECK(strstr(err, "the agent says: heap profiling is off?[2J") != NULL);
    CHECK_INT(exchange_with(path, "diagtop-agent 1 ok\ntime_ns 5\n", 2, NULL, &r, err, sizeof err, NULL), -EPROTO);
    CHECK(strstr(err, "incomplete") != NULL);
    CHECK_INT(exchange_with(path, "diagtop-agent 1 ok\nxend\n", 2, NULL, &r, err, sizeof err, NULL), -EPROTO);
    CHECK_INT(exchange_with(path, "NUL", 2, NULL, &r, err, sizeof err, NULL), -EPROTO);
    CHECK(strstr(err, "NUL") != NULL);
    CHECK_INT(exchange_with(path, "SSH-2.0-OpenSSH\r\n", 2, NULL, &r, err, sizeof err, NULL), -EPROTO);
    CHECK_INT(exchange_with(path, NULL, 0.3, NULL, &r, err, sizeof err, NULL), -ETIMEDOUT);
    CHECK(exchange_seconds > 0.25 && exchange_seconds < 1.5);
    pthread_t t;
    cancel_flag = 0;
    pthread_create(&t, NULL, set_cancel, NULL);
    CHECK_INT(exchange_with(path, NULL, 10, &cancel_flag, &r, err, sizeof err, NULL), -ECANCELED);
    CHECK(exchange_seconds < 1.0);
    pthread_join(t, NULL);
    /* nothing listens */
    struct agent_exchange x = {.path = path, .request = "hello", .timeout = 1, .max_reply = 1024};
    CHECK_INT(agent_client_exchange(&x, &r, err, sizeof err), -ENOENT);
    x.request = "two\nlines";
    CHECK_INT(agent_client_exchange(&x, &r, err, sizeof err), -EINVAL);
    /* a path longer than sockaddr_un: through the directory's descriptor */
    char deep[4096];
    snprintf(deep, sizeof deep, "%s/%s", dir, "a-directory-whose-name-makes-the-path-far-longer-than-a-unix-socket-address-can-hold");
    CHECK(mkdir(deep, 0700) == 0);
    snprintf(path, sizeof path, "%s/agent.2.sock", deep);
    CHECK(strlen(path) > 108);
    CHECK_INT(exchange_with(path, "diagtop-agent 1 ok\nend\n", 2, NULL, &r, err, sizeof err, NULL), 0);
    agent_reply_free(&r);
    rmdir(deep);
    rmdir(dir);
}

/* ---- /proc/net/unix ---- */

static void test_unix_inode(void)
{
    static const char net_unix[] =
        "Num       RefCount Protocol Flags    Type St Inode Path\n"
        "0000000000000000: 00000002 00000000 00010000 0001 01 23456 /run/user/1000/diagtop/agent.12.sock\n"
        "0000000000000000: 00000002 00000000 00000000 0001 03 23457 /run/user/1000/diagtop/agent.1.sock\n"
        "0000000000000000: 00000002 00000000 00010000 0002 01 23458 /run/user/1000/diagtop/agent.1.sock\n"
        "0000000000000000: 00000002 00000000 00010000 0001 01 23459 /run/user/1000/diagtop/agent.1.sock.old\n"
        "0000000000000000: 00000002 00000000 00010000 0001 01 23460\n"
        "0000000000000000: 00000002 00000000 00010000 0001 01 23461 /run/user/1000/diagtop/agent.1.sock\n";
    CHECK_INT(runtime_unix_listen_inode(net_unix, "/run/user/1000/diagtop/agent.1.sock"), 23461);
    CHECK_INT(runtime_unix_listen_inode(net_unix, "/run/user/1000/diagtop/agent.12.sock"), 23456);
    CHECK_INT(runtime_unix_listen_inode(net_unix, "/run/user/1000/diagtop/agent.2.sock"), 0);
    CHECK_INT(runtime_unix_listen_inode("Num RefCount\n", "/x"), 0);
}

/* ---- pprof of a heap snapshot, read back ---- */

static void test_pprof_roundtrip(void)
{
    static const char *const types[][2] = {
        {"alloc_objects", "count"}, {"alloc_space", "bytes"}, {"inuse_objects", "count"}, {"inuse_space", "bytes"}};
    struct agent_pprof *p = agent_pprof_new(types, 4, "space", "bytes", 524288, 0);
    CHECK(p != NULL);
    struct stack_frame leaf[2] = {
        {.pc = 0x1000, .inlined = 1, .function = "inlined_helper", .file = "a.c", .line = 7, .module = "prog"},
        {.pc = 0x1000, .function = "leak\x1b[31mer", .file = "a.c", .line = 40, .module = "prog"}};
    struct stack_frame caller = {.pc = 0x2000, .function = "main", .file = "a.c", .line = 90, .module = "prog"};
    struct stack_frame anon = {.pc = 0x3000, .offset = 0x30, .module = "libx.so"};
    unsigned long long l1 = agent_pprof_location(p, 0x1000, 1, leaf, 2);
    unsigned long long l2 = agent_pprof_location(p, 0x2000, 1, &caller, 1);
    unsigned long long l3 = agent_pprof_location(p, 0x3000, 1, &anon, 1);
    CHECK(l1 && l2 && l3 && agent_pprof_location(p, 0x1000, 1, leaf, 2) == l1);
    unsigned long long s1[] = {l1, l2}, s2[] = {l3, l2};
    long long v1[] = {10, 1000, 4, 400}, v2[] = {3, 30, 0, 0};
    CHECK_INT(agent_pprof_sample(p, s1, 2, v1, NULL, 0), 0);
    CHECK_INT(agent_pprof_sample(p, s2, 2, v2, NULL, 0), 0);
    CHECK_INT(agent_pprof_comment(p, "a comment"), 0);
    unsigned char *gz;
    size_t len;
    char err[256];
    CHECK_INT(agent_pprof_finish(p, &gz, &len, err, sizeof err), 0);
    struct rt_heap h = {0};
    CHECK_INT(pprof_read_heap(gz, len, &h, err, sizeof err), 0);
    free(gz);
    /* the second site has nothing in use but was allocated: kept (pprof lists it for alloc_space) */
    CHECK_INT(h.n, 2);
    CHECK(h.n >= 1 && h.rows[0].bytes == 400 && h.rows[0].count == 4 && h.rows[0].alloc_bytes == 1000 &&
          h.rows[0].alloc_count == 10);
    CHECK(h.n >= 1 && h.rows[0].nstack == 3);
    if (h.n >= 1 && h.rows[0].nstack == 3) {
        CHECK_STR(h.rows[0].stack[0].function, "inlined_helper");
        CHECK_STR(h.rows[0].stack[1].function, "leak?[31mer"); /* sanitized */
        CHECK_INT(h.rows[0].stack[1].line, 40);
        CHECK_STR(h.rows[0].stack[2].function, "main");
    }
    CHECK(h.n >= 2 && h.rows[1].stack && !strcmp(h.rows[1].stack[0].function, "libx.so+0x30"));
    rt_heap_free(&h);
}

int main(void)
{
    check_suite = "agent";
    RUN(test_memstats);
    RUN(test_heap);
    RUN(test_profile);
    RUN(test_transport);
    RUN(test_unix_inode);
    RUN(test_pprof_roundtrip);
    return check_failed_tests ? 1 : 0;
}
