/* listener: the agent's one thread. Idle, it is blocked in accept(2); a connection is one request, served to the
 * end before the next is accepted (a CPU profile answers "busy" to others meanwhile). The thread runs with every
 * signal blocked (the program's signals are not for it) and inside the agent (its own allocations are never
 * sampled). The program may close or reuse the listening descriptor (daemons close everything): before each
 * accept the descriptor must still be the socket we made, else the thread ends without touching it. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

#define REQUEST_MAX 256
#define SMALL_REPLY (64 * 1024)
#define BIG_REPLY (32u << 20)

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1; /* SO_SNDTIMEO: a client that does not read is given up on */
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void send_error(int fd, int err, const char *why)
{
    char line[512];
    int n = snprintf(line, sizeof line, "diagtop-agent %d error %d %s\n", AGENT_PROTOCOL, err, why);
    for (int i = 0; i < n - 1; i++)
        if (line[i] == '\n') line[i] = ' ';
    send_all(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* One line ending in '\n' within the receive timeout. Returns its length, or -1. */
static int read_request(int fd, char *buf, size_t n)
{
    size_t len = 0;
    while (len + 1 < n) {
        ssize_t r = recv(fd, buf + len, n - 1 - len, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        len += (size_t)r;
        char *nl = memchr(buf, '\n', len);
        if (nl) {
            *nl = '\0';
            return (int)(nl - buf);
        }
    }
    return -1;
}

/* The end of a connection: what the peer sent and we did not read would make close() reset the connection and the
 * peer lose our reply, so the reply is followed by a FIN and a short drain. */
void listener_finish(int c)
{
    shutdown(c, SHUT_WR);
    char buf[4096];
    for (int i = 0; i < 16; i++) {
        struct pollfd p = {c, POLLIN, 0};
        if (poll(&p, 1, 200) <= 0 || recv(c, buf, sizeof buf, MSG_DONTWAIT) <= 0) break;
    }
    close(c);
}

static int by_inuse(const void *a, const void *b)
{
    const struct agent_site *x = a, *y = b;
    if (x->inuse_bytes != y->inuse_bytes) return x->inuse_bytes > y->inuse_bytes ? -1 : 1;
    if (x->alloc_bytes != y->alloc_bytes) return x->alloc_bytes > y->alloc_bytes ? -1 : 1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int heap_reply(struct reply *r, char *why, size_t whylen)
{
    if (!agent_g.heap_on) {
        snprintf(why, whylen, "heap profiling is off in this process (DIAGTOP_AGENT_HEAP=0, or no memory for it)");
        return -EOPNOTSUPP;
    }
    struct agent_heap_snapshot s;
    if (heapprof_snapshot(&s) < 0) {
        snprintf(why, whylen, "out of memory");
        return -ENOMEM;
    }
    reply_u64(r, "time_ns", (uint64_t)agent_now_ns(CLOCK_REALTIME));
    reply_u64(r, "interval", agent_g.interval);
    reply_u64(r, "samples_live", s.live_samples);
    reply_u64(r, "samples_total", s.samples_total);
    reply_u64(r, "samples_dropped", s.samples_dropped);
    reply_u64(r, "stacks_dropped", s.stacks_dropped);
    reply_u64(r, "table_bytes", s.table_bytes);
    if (s.nsites) qsort(s.sites, s.nsites, sizeof *s.sites, by_inuse);
    for (size_t i = 0; i < s.nsites && !r->truncated; i++) {
        const struct agent_site *site = &s.sites[i];
        if (site->inuse_bytes <= 0 && site->alloc_bytes <= 0) continue;
        const uintptr_t *pcs = NULL;
        int depth = heapprof_stack(site->stack, &pcs);
        reply_add(r, "site %.0f %.0f %.0f %.0f", site->inuse_objects, site->inuse_bytes, site->alloc_objects,
                  site->alloc_bytes);
        reply_pcs(r, pcs, depth);
    }
    heapprof_snapshot_free(&s);
    return 0;
}

/* The request's reply body into r. Returns 0, or -errno with why. */
static int dispatch(int c, int lfd, const char *req, struct reply *r, char *why, size_t whylen)
{
    if (!strcmp(req, "hello")) {
        reply_u64(r, "pid", (uint64_t)getpid());
        reply_u64(r, "protocol", AGENT_PROTOCOL);
        reply_u64(r, "heap_profile", (uint64_t)agent_g.heap_on);
        reply_u64(r, "interval", agent_g.interval);
        reply_u64(r, "uptime_ns", (uint64_t)(agent_now_ns(CLOCK_MONOTONIC) - agent_g.start_ns));
        return 0;
    }
    if (!strcmp(req, "memstats")) {
        malloc_stats_reply(r);
        return 0;
    }
    if (!strcmp(req, "trim")) {
        malloc_trim_reply(r);
        return 0;
    }
    if (!strcmp(req, "heap")) return heap_reply(r, why, whylen);
    double seconds;
    int hz;
    char extra;
    if (sscanf(req, "profile %lf %d %c", &seconds, &hz, &extra) == 2)
        return cpuprof_run(c, lfd, seconds, hz, r, why, whylen);
    snprintf(why, whylen, "unknown request (hello, memstats, trim, heap, profile SECONDS HZ)");
    return -EINVAL;
}

static void serve(int c, int lfd)
{
    struct timeval rcv = {2, 0}, snd = {5, 0};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &rcv, sizeof rcv);
    setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof snd);
    uid_t uid = (uid_t)-1;
    if (!endpoint_peer_allowed(c, &uid)) {
        char why[128];
        snprintf(why, sizeof why, "peer uid %u is not allowed: same uid (%u) or root only", (unsigned)uid,
                 (unsigned)geteuid());
        send_error(c, EACCES, why);
        return;
    }
    char req[REQUEST_MAX];
    if (read_request(c, req, sizeof req) < 0) {
        send_error(c, EPROTO, "no request line within 2 s (or longer than 255 bytes)");
        return;
    }
    struct reply r;
    int big = !strcmp(req, "heap") || !strncmp(req, "profile", 7);
    if (reply_init(&r, big ? BIG_REPLY : SMALL_REPLY) < 0) {
        send_error(c, ENOMEM, "out of memory");
        return;
    }
    char why[256] = "";
    int rc = dispatch(c, lfd, req, &r, why, sizeof why);
    if (rc < 0) {
        send_error(c, -rc, why);
    } else {
        char head[64];
        int n = snprintf(head, sizeof head, "diagtop-agent %d ok\n", AGENT_PROTOCOL);
        if (r.truncated) {
            r.truncated = 0;
            r.max += 64; /* room for the last lines */
            reply_add(&r, "truncated 1\n");
        }
        reply_add(&r, "end\n");
        if (send_all(c, head, (size_t)n) == 0) send_all(c, r.buf, r.len);
    }
    reply_free(&r);
}

static int still_ours(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == agent_g.listen_dev &&
           st.st_ino == agent_g.listen_ino;
}

static void *listener_main(void *arg)
{
    (void)arg;
    struct agent_thread *t = &agent_tls;
    t->guard = 1;
    t->left = t->drawn = INT64_MAX / 2;
    agent_g.listener_tid = (pid_t)syscall(SYS_gettid);
    pthread_setname_np(pthread_self(), "diagtop-agent");
    int lfd = agent_g.listen_fd;
    while (__atomic_load_n(&agent_g.listening, __ATOMIC_ACQUIRE) && still_ours(lfd)) {
        int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                struct timespec ts = {0, 100000000};
                nanosleep(&ts, NULL);
                continue;
            }
            break; /* shut down by diagtop_agent_stop, or no longer a socket */
        }
        serve(c, lfd);
        listener_finish(c);
    }
    return NULL;
}

int listener_start(char *why, size_t whylen)
{
    char path[sizeof agent_g.path];
    int fd = endpoint_open(path, sizeof path, why, whylen);
    if (fd < 0) return fd;
    struct stat st;
    fstat(fd, &st);
    agent_g.listen_dev = st.st_dev;
    agent_g.listen_ino = st.st_ino;
    agent_g.listen_fd = fd;
    memcpy(agent_g.path, path, sizeof path);
    agent_g.owner = getpid();
    __atomic_store_n(&agent_g.listening, 1, __ATOMIC_RELEASE);

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&agent_g.listener, &attr, listener_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        snprintf(why, whylen, "cannot start the listener thread: %s", strerror(rc));
        agent_g.listening = 0;
        close(fd);
        agent_g.listen_fd = -1;
        unlink(agent_g.path);
        return -rc;
    }
    return 0;
}

void listener_stop(void)
{
    if (!agent_g.listening || agent_g.owner != getpid()) return;
    __atomic_store_n(&agent_g.listening, 0, __ATOMIC_RELEASE);
    shutdown(agent_g.listen_fd, SHUT_RDWR); /* wakes accept (EINVAL) and a profile's poll */
    pthread_join(agent_g.listener, NULL);
    if (still_ours(agent_g.listen_fd)) close(agent_g.listen_fd);
    agent_g.listen_fd = -1;
    unlink(agent_g.path);
    agent_g.path[0] = '\0';
}
