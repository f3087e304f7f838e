/* cpuprof: a CPU profile from inside. Each thread gets a POSIX timer on its own CPU-time clock that sends it
 * SIGPROF every 1/hz s of CPU it uses; the handler unwinds the interrupted context (unwind_context: no lock, no
 * allocation) into a slot of a bounded ring claimed with a compare-and-swap, and the listener thread drains the
 * ring into distinct (thread, stack) counts. Threads started during the profile are found by listing
 * /proc/self/task every 100 ms. The listener's own thread is not profiled.
 *
 * Exec: a thread that execs while profiled takes no SIGPROF with it into the new image (where it is fatal): the
 * kernel deletes POSIX timers at exec and flushes the signals they queued (flush_itimer_signals); fork's child has
 * neither. tests/e2e/agent_stress.sh has a program exec itself under a 1000 Hz profile. */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

#define CPU_SLOTS 4096
#define MAX_THREADS 4096
#define AGG_MAX 16384           /* distinct (thread, stack) pairs */
#define AGG_PCS (AGG_MAX * 24)

struct agent_cpu_slot {
    uint64_t seq;  /* index + 1 once written */
    int32_t tid;
    uint32_t weight;
    uint32_t depth, pad;
    uintptr_t pcs[AGENT_MAX_FRAMES];
};

static void on_sigprof(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    int saved = errno;
    if (__atomic_load_n(&agent_g.cpu_active, __ATOMIC_ACQUIRE) && agent_g.cpu_slots) {
        uint64_t head = __atomic_load_n(&agent_g.cpu_head, __ATOMIC_RELAXED);
        for (;;) {
            if (head - __atomic_load_n(&agent_g.cpu_tail, __ATOMIC_ACQUIRE) >= agent_g.cpu_nslots) {
                __atomic_add_fetch(&agent_g.cpu_lost, 1, __ATOMIC_RELAXED);
                goto out;
            }
            if (__atomic_compare_exchange_n(&agent_g.cpu_head, &head, head + 1, 1, __ATOMIC_ACQ_REL,
                                            __ATOMIC_RELAXED))
                break;
        }
        struct agent_cpu_slot *s = &agent_g.cpu_slots[head % agent_g.cpu_nslots];
        s->tid = (int32_t)syscall(SYS_gettid);
        s->weight = 1 + (uint32_t)(si->si_overrun > 0 ? si->si_overrun : 0);
        s->depth = (uint32_t)unwind_context(uc, s->pcs, AGENT_MAX_FRAMES);
        __atomic_store_n(&s->seq, head + 1, __ATOMIC_RELEASE);
    }
out:
    errno = saved;
}

/* ---- the listener's side ---- */

struct agg_entry {
    uint64_t hash, count;
    int32_t tid;
    uint32_t off, depth;
};

struct agent_cpu_timer {
    pid_t tid;
    int timer; /* kernel timer id */
    char name[16];
};

struct profile {
    uint32_t *slots; /* entry + 1 */
    struct agg_entry *e;
    uint32_t n;
    uintptr_t *pcs;
    size_t npcs;
    uint64_t lost;
    struct agent_cpu_timer *threads;
    int nthreads;
    long period_ns;
    size_t bytes;
    unsigned char *map;
};

static uint64_t hash_sample(int tid, const uintptr_t *pcs, uint32_t n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)(uint32_t)tid;
    for (uint32_t i = 0; i < n; i++) h = (h ^ pcs[i]) * 0x100000001b3ull, h ^= h >> 29;
    return h ? h : 1;
}

static void count(struct profile *p, const struct agent_cpu_slot *s)
{
    uint32_t depth = s->depth > AGENT_MAX_FRAMES ? AGENT_MAX_FRAMES : s->depth;
    uint64_t h = hash_sample(s->tid, s->pcs, depth);
    uint32_t mask = 2 * AGG_MAX - 1, i = (uint32_t)(h >> 20) & mask;
    for (;; i = (i + 1) & mask) {
        uint32_t v = p->slots[i];
        if (!v) break;
        struct agg_entry *e = &p->e[v - 1];
        if (e->hash == h && e->tid == s->tid && e->depth == depth &&
            !memcmp(p->pcs + e->off, s->pcs, depth * sizeof *s->pcs)) {
            e->count += s->weight;
            return;
        }
    }
    if (p->n >= AGG_MAX || p->npcs + depth > AGG_PCS) {
        p->lost += s->weight;
        return;
    }
    struct agg_entry *e = &p->e[p->n];
    *e = (struct agg_entry){h, s->weight, s->tid, (uint32_t)p->npcs, depth};
    memcpy(p->pcs + p->npcs, s->pcs, depth * sizeof *s->pcs);
    p->npcs += depth;
    p->slots[i] = ++p->n;
}

static void drain(struct profile *p)
{
    for (;;) {
        uint64_t tail = __atomic_load_n(&agent_g.cpu_tail, __ATOMIC_RELAXED);
        if (tail == __atomic_load_n(&agent_g.cpu_head, __ATOMIC_ACQUIRE)) return;
        struct agent_cpu_slot *s = &agent_g.cpu_slots[tail % agent_g.cpu_nslots];
        if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != tail + 1) return; /* a handler still writing it */
        count(p, s);
        __atomic_store_n(&agent_g.cpu_tail, tail + 1, __ATOMIC_RELEASE);
    }
}

/* The CPU-time clock of thread tid (the kernel's encoding, as pthread_getcpuclockid makes it). */
static clockid_t thread_clock(pid_t tid) { return (clockid_t)((~(unsigned)tid) << 3) | 6; }

static int timer_for(struct profile *p, pid_t tid)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev._sigev_un._tid = tid;
    int id;
    if (syscall(SYS_timer_create, thread_clock(tid), &sev, &id) < 0) return -errno;
    struct itimerspec its = {{0, p->period_ns}, {0, p->period_ns}};
    if (syscall(SYS_timer_settime, id, 0, &its, NULL) < 0) {
        int e = errno;
        syscall(SYS_timer_delete, id);
        return -e;
    }
    struct agent_cpu_timer *t = &p->threads[p->nthreads];
    t->tid = tid;
    t->timer = id;
    p->nthreads++;
    char path[64], name[32];
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
    ssize_t n = agent_read_file(path, name, sizeof name);
    if (n > 0 && name[n - 1] == '\n') name[n - 1] = '\0';
    if (n <= 0) snprintf(name, sizeof name, "?");
    name[sizeof t->name - 1] = '\0';
    memcpy(t->name, name, sizeof t->name);
    for (char *c = t->name; *c; c++)
        if (*c == ' ' || *c == '\n' || (unsigned char)*c < 0x20) *c = '_';
    return 0;
}

/* Timers for the threads not seen yet. */
static void scan_threads(struct profile *p)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d)) && p->nthreads < MAX_THREADS) {
        pid_t tid = (pid_t)atoi(de->d_name);
        if (tid <= 0 || tid == agent_g.listener_tid) continue;
        int known = 0;
        for (int i = 0; i < p->nthreads && !known; i++) known = p->threads[i].tid == tid;
        if (!known) timer_for(p, tid);
    }
    closedir(d);
}

/* Our handler in place; 0, or -EBUSY when the program has its own. */
static int install_handler(void)
{
    struct sigaction old, sa;
    if (sigaction(SIGPROF, NULL, &old) < 0) return -errno;
    if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == on_sigprof) return 0;
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) return -EBUSY;
    if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction) return -EBUSY;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigprof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGPROF, &sa, NULL) < 0) return -errno;
    agent_g.cpu_handler_installed = 1;
    return 0;
}

/* A client while the profile runs: its request read (up to 0.2 s), "busy", closed without a reset. */
static void busy(int lfd)
{
    int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) return;
    struct pollfd p = {c, POLLIN, 0};
    char req[256];
    if (poll(&p, 1, 200) > 0) {
        ssize_t r = recv(c, req, sizeof req, MSG_DONTWAIT);
        (void)r;
    }
    static const char msg[] = "diagtop-agent 1 error 16 busy: a CPU profile is running\n";
    ssize_t w = send(c, msg, sizeof msg - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)w;
    listener_finish(c);
}

/* The profile's tables in one mapping, and the ring of slots the first time. 0, or -ENOMEM. */
static int profile_open(struct profile *p, int hz)
{
    if (!agent_g.cpu_slots) {
        agent_g.cpu_slots = agent_map(CPU_SLOTS * sizeof(struct agent_cpu_slot));
        if (!agent_g.cpu_slots) return -ENOMEM;
        agent_g.cpu_nslots = CPU_SLOTS;
    }
    memset(p, 0, sizeof *p);
    size_t sb = 2 * AGG_MAX * sizeof(uint32_t), eb = AGG_MAX * sizeof(struct agg_entry);
    size_t pb = AGG_PCS * sizeof(uintptr_t), tb = MAX_THREADS * sizeof(struct agent_cpu_timer);
    p->bytes = sb + eb + pb + tb;
    if (!(p->map = agent_map(p->bytes))) return -ENOMEM;
    p->slots = (uint32_t *)p->map;
    p->e = (struct agg_entry *)(p->map + sb);
    p->pcs = (uintptr_t *)(p->map + sb + eb);
    p->threads = (struct agent_cpu_timer *)(p->map + sb + eb + pb);
    p->period_ns = 1000000000L / hz;
    return 0;
}

/* Samples until end (CLOCK_MONOTONIC ns), the client hangs up or the listener stops: threads not seen yet get a
 * timer every 100 ms, other clients are told "busy", the ring is drained as it fills. */
static void profile_collect(struct profile *p, int client, int lfd, int64_t end)
{
    int64_t last_scan = 0;
    int hung_up = 0;
    for (;;) {
        int64_t now = agent_now_ns(CLOCK_MONOTONIC);
        if (now >= end || hung_up || !__atomic_load_n(&agent_g.listening, __ATOMIC_RELAXED)) break;
        if (now - last_scan >= 100000000) {
            scan_threads(p);
            last_scan = now;
        }
        struct pollfd pf[2] = {{client, POLLIN, 0}, {lfd, POLLIN, 0}};
        int left_ms = (int)((end - now) / 1000000) + 1;
        int n = poll(pf, 2, left_ms < 100 ? left_ms : 100);
        if (n > 0 && (pf[0].revents & (POLLIN | POLLHUP | POLLERR))) {
            char b;
            if (recv(client, &b, 1, MSG_DONTWAIT) <= 0) hung_up = 1; /* EOF or error: the client went away */
        }
        if (n > 0 && (pf[1].revents & POLLIN)) busy(lfd);
        if (n > 0 && (pf[1].revents & (POLLHUP | POLLERR | POLLNVAL))) break; /* stopped */
        drain(p);
    }
}

/* Sampling off and the timers deleted; what the handlers still write drained. */
static void profile_stop(struct profile *p)
{
    __atomic_store_n(&agent_g.cpu_active, 0, __ATOMIC_RELEASE);
    for (int i = 0; i < p->nthreads; i++) syscall(SYS_timer_delete, p->threads[i].timer);
    /* Handlers that claimed a slot before the flag went down finish within microseconds. */
    for (int i = 0; i < 50 && __atomic_load_n(&agent_g.cpu_tail, __ATOMIC_ACQUIRE) !=
                                 __atomic_load_n(&agent_g.cpu_head, __ATOMIC_ACQUIRE); i++) {
        drain(p);
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    drain(p);
}

/* The reply: totals, the threads profiled, then each distinct (thread, stack) with its count. */
static void profile_reply(const struct profile *p, int hz, double took, struct reply *r)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < p->n; i++) total += p->e[i].count;
    reply_u64(r, "hz", (uint64_t)hz);
    reply_f64(r, "seconds", took);
    reply_u64(r, "period_ns", (uint64_t)p->period_ns);
    reply_u64(r, "samples", total);
    reply_u64(r, "lost", p->lost + __atomic_load_n(&agent_g.cpu_lost, __ATOMIC_RELAXED));
    reply_u64(r, "threads_profiled", (uint64_t)p->nthreads);
    for (int i = 0; i < p->nthreads; i++) reply_add(r, "thread %d %s\n", (int)p->threads[i].tid, p->threads[i].name);
    for (uint32_t i = 0; i < p->n && !r->truncated; i++) {
        reply_add(r, "sample %d %llu", (int)p->e[i].tid, (unsigned long long)p->e[i].count);
        reply_pcs(r, p->pcs + p->e[i].off, (int)p->e[i].depth);
    }
}

int cpuprof_run(int client, int lfd, double seconds, int hz, struct reply *r, char *why, size_t whylen)
{
    if (seconds <= 0 || seconds > 3600 || hz < 1 || hz > 1000) {
        snprintf(why, whylen, "profile wants 0 < SECONDS <= 3600 and 1 <= HZ <= 1000");
        return -EINVAL;
    }
    int rc = install_handler();
    if (rc < 0) {
        snprintf(why, whylen, rc == -EBUSY ? "the program has a SIGPROF handler of its own (its own profiler?)"
                                           : "cannot install a SIGPROF handler: %s", strerror(-rc));
        return rc;
    }
    struct profile p;
    if ((rc = profile_open(&p, hz)) < 0) {
        snprintf(why, whylen, "out of memory");
        return rc;
    }
    /* the ring emptied (slots of an earlier profile are skipped), then sampling on */
    __atomic_store_n(&agent_g.cpu_tail, __atomic_load_n(&agent_g.cpu_head, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
    __atomic_store_n(&agent_g.cpu_lost, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&agent_g.cpu_active, 1, __ATOMIC_RELEASE);
    int64_t t0 = agent_now_ns(CLOCK_MONOTONIC);
    profile_collect(&p, client, lfd, t0 + (int64_t)(seconds * 1e9));
    profile_stop(&p);
    profile_reply(&p, hz, (double)(agent_now_ns(CLOCK_MONOTONIC) - t0) / 1e9, r);
    agent_unmap(p.map, p.bytes);
    return 0;
}

void cpuprof_after_fork_child(void)
{
    /* Timers are not inherited; a slot claimed by a thread that does not exist here would never be written. */
    agent_g.cpu_active = 0;
    agent_g.cpu_tail = agent_g.cpu_head; /* slots of an earlier lap never match a later index */
    for (size_t i = 0; i < sizeof agent_g.scratch_busy / sizeof agent_g.scratch_busy[0]; i++)
        agent_g.scratch_busy[i] = 0;
}
