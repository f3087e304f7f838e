#include "perf_sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/fileio.h"
#include "util/tasks.h"

#define RING_PAGES 64 /* data pages per CPU: 256 KiB, about 15 samples of 16 KiB; halved while mmap is refused */
#define MAX_CPUS 1024

struct ring {
    int fd;
    struct perf_event_mmap_page *meta;
    unsigned char *data;
    size_t size; /* data bytes, a power of two */
    size_t mapped;
};

struct perf_sampler {
    int pid;
    struct ring *rings; /* one per CPU: the first event opened on it owns the buffer */
    int n;
    int *cpus;          /* the CPU of each ring */
    int *fds;           /* every other event, writing into its CPU's ring (PERF_EVENT_IOC_SET_OUTPUT) */
    int nfds, capfds;
    int *tids;          /* the threads with events of their own (later ones inherit them) */
    int ntids, captids;
    unsigned char *record; /* a record that wraps around the end of a ring, made contiguous */
    size_t record_cap;
};

static void explain(int e, int pid, char *err, size_t errlen)
{
    char text[32] = "";
    int paranoid = fileio_read_at(AT_FDCWD, "/proc/sys/kernel/perf_event_paranoid", text, sizeof text) > 0
                       ? atoi(text) : -100;
    if (e == EACCES || e == EPERM)
        snprintf(err, errlen,
                 "perf_event_open refused for %d: kernel.perf_event_paranoid = %d (a process of your own needs it "
                 "<= 2; another user's needs CAP_PERFMON or CAP_SYS_ADMIN)", pid, paranoid);
    else if (e == ESRCH)
        snprintf(err, errlen, "no process %d", pid);
    else if (e == ENOENT || e == ENODEV || e == EOPNOTSUPP)
        snprintf(err, errlen, "perf_event_open: this kernel has no cpu-clock sampling (%s)", strerror(e));
    else
        snprintf(err, errlen, "perf_event_open: %s", strerror(e));
}

static int open_event(int pid, int cpu, int hz)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE; /* no hardware counters in most VMs; the CPU clock serves */
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.sample_period = 1000000000ULL / (unsigned)hz;
    a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    a.sample_regs_user = arch_perf_regs_mask();
    a.sample_stack_user = PERF_SAMPLER_STACK;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.exclude_callchain_kernel = 1;
    a.inherit = 1; /* threads (and children) created later are sampled too */
    a.disabled = 1;
    a.watermark = 1;
    a.wakeup_watermark = RING_PAGES * 4096 / 4;
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
    return (int)syscall(SYS_perf_event_open, &a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int map_ring(struct ring *r)
{
    long page = sysconf(_SC_PAGESIZE);
    /* An unprivileged user may lock only perf_event_mlock_kb (516 KiB) plus RLIMIT_MEMLOCK: smaller rings then. */
    for (size_t pages = RING_PAGES; pages >= 4; pages /= 2) {
        size_t len = (pages + 1) * (size_t)page;
        void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
        if (m == MAP_FAILED) {
            if (errno == EPERM || errno == ENOMEM) continue;
            return -errno;
        }
        r->meta = m;
        r->data = (unsigned char *)m + page;
        r->size = pages * (size_t)page;
        r->mapped = len;
        return 0;
    }
    return -EPERM;
}

void perf_sampler_close(struct perf_sampler *s)
{
    if (!s) return;
    for (int i = 0; i < s->nfds; i++) close(s->fds[i]);
    for (int i = 0; i < s->n; i++) {
        if (s->rings[i].meta) munmap(s->rings[i].meta, s->rings[i].mapped);
        if (s->rings[i].fd >= 0) close(s->rings[i].fd);
    }
    free(s->rings);
    free(s->cpus);
    free(s->fds);
    free(s->tids);
    free(s->record);
    free(s);
}

static int grow(int **a, int *cap, int n)
{
    if (n < *cap) return 0;
    int c = *cap ? *cap * 2 : 64;
    int *b = realloc(*a, (size_t)c * sizeof *b);
    if (!b) return -ENOMEM;
    *a = b;
    *cap = c;
    return 0;
}

static int has_tid(const struct perf_sampler *s, int tid)
{
    for (int i = 0; i < s->ntids; i++)
        if (s->tids[i] == tid) return 1;
    return 0;
}

/* Events of one thread on every CPU. A perf event follows one task, and inherit only reaches the threads it
 * creates afterwards: the threads that exist are each opened. */
static int open_thread(struct perf_sampler *s, int tid, int ncpus, int hz, char *err, size_t errlen)
{
    for (int cpu = 0; cpu < ncpus; cpu++) {
        int fd = open_event(tid, cpu, hz);
        if (fd < 0) {
            if (errno == ENODEV || errno == EINVAL) continue; /* an offline CPU */
            if (errno == ESRCH && tid != s->pid) return 0;   /* the thread exited meanwhile */
            int e = errno;
            explain(e, s->pid, err, errlen);
            return -e;
        }
        int r = 0;
        while (r < s->n && s->cpus[r] != cpu) r++;
        if (r == s->n) { /* the first event on this CPU: its ring */
            struct ring *ring = &s->rings[s->n];
            ring->fd = fd;
            s->cpus[s->n++] = cpu;
            int rc = map_ring(ring);
            if (rc < 0) {
                snprintf(err, errlen, "cannot map perf's ring buffer: %s (perf_event_mlock_kb, RLIMIT_MEMLOCK)",
                         strerror(-rc));
                return rc;
            }
            continue;
        }
        if (grow(&s->fds, &s->capfds, s->nfds) < 0) {
            close(fd);
            return -ENOMEM;
        }
        s->fds[s->nfds++] = fd;
        if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->rings[r].fd) < 0) {
            int e = errno;
            snprintf(err, errlen, "cannot share perf's ring buffer: %s", strerror(e));
            return -e;
        }
    }
    if (grow(&s->tids, &s->captids, s->ntids) < 0) return -ENOMEM;
    s->tids[s->ntids++] = tid;
    return 0;
}

/* Every thread of the process not yet opened. */
static int open_threads(struct perf_sampler *s, int ncpus, int hz, char *err, size_t errlen)
{
    struct tasks it;
    if (tasks_open(&it, AT_FDCWD, s->pid) < 0) {
        snprintf(err, errlen, "no process %d", s->pid);
        return -ESRCH;
    }
    int rc = 0, tid;
    while (rc == 0 && (tid = tasks_next(&it)))
        if (!has_tid(s, tid)) rc = open_thread(s, tid, ncpus, hz, err, errlen);
    tasks_close(&it);
    return rc;
}

int perf_sampler_open(struct perf_sampler **out, int pid, int hz, char *err, size_t errlen)
{
    *out = NULL;
    long ncpus = sysconf(_SC_NPROCESSORS_CONF);
    if (ncpus < 1 || ncpus > MAX_CPUS) ncpus = ncpus < 1 ? 1 : MAX_CPUS;
    struct perf_sampler *s = calloc(1, sizeof *s);
    if (s) {
        s->rings = calloc((size_t)ncpus, sizeof *s->rings);
        s->cpus = calloc((size_t)ncpus, sizeof *s->cpus);
    }
    if (!s || !s->rings || !s->cpus) {
        if (s) free(s->rings);
        free(s);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    s->pid = pid;
    int rc = open_threads(s, (int)ncpus, hz, err, errlen);
    /* Threads created while the others were being opened, by a thread not yet opened, inherited nothing. */
    if (rc == 0) rc = open_threads(s, (int)ncpus, hz, err, errlen);
    if (rc == 0 && s->n == 0) {
        rc = -ENODEV;
        snprintf(err, errlen, "perf_event_open: no CPU accepted the event");
    }
    for (int i = 0; rc == 0 && i < s->n + s->nfds; i++) {
        int fd = i < s->n ? s->rings[i].fd : s->fds[i - s->n];
        if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
            rc = -errno;
            snprintf(err, errlen, "cannot enable the perf event: %s", strerror(errno));
        }
    }
    if (rc < 0) {
        perf_sampler_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

/* ---- reading the rings ---- */

static const unsigned char *take(const unsigned char **p, const unsigned char *end, size_t n)
{
    if ((size_t)(end - *p) < n) return NULL;
    const unsigned char *at = *p;
    *p += n;
    return at;
}

static int u64_at(const unsigned char **p, const unsigned char *end, unsigned long long *v)
{
    const unsigned char *at = take(p, end, 8);
    if (at) memcpy(v, at, 8);
    return at ? 0 : -1;
}

/* A PERF_RECORD_SAMPLE: pid, tid; time; abi, regs; size, data, dyn_size (the layout sample_type asked for). */
static int parse_sample(const unsigned char *p, const unsigned char *end, struct perf_sample *out)
{
    unsigned int ids[2];
    const unsigned char *at = take(&p, end, 8);
    if (!at) return -1;
    memcpy(ids, at, 8);
    out->pid = (int)ids[0];
    out->tid = (int)ids[1];
    unsigned long long abi, perf_regs[ARCH_PERF_REGS], size = 0, dyn = 0;
    if (u64_at(&p, end, &out->time_ns) < 0 || u64_at(&p, end, &abi) < 0) return -1;
    if (abi == PERF_SAMPLE_REGS_ABI_NONE) return -1; /* no user registers: a kernel thread's sample */
    for (int i = 0; i < ARCH_PERF_REGS; i++)
        if (u64_at(&p, end, &perf_regs[i]) < 0) return -1;
    arch_perf_regs_dwarf(perf_regs, out->regs);
    if (u64_at(&p, end, &size) < 0) return -1;
    const unsigned char *data = take(&p, end, (size_t)size);
    if (!data || (size && u64_at(&p, end, &dyn) < 0)) return -1;
    out->stack = data;
    out->stack_len = (size_t)(dyn < size ? dyn : size);
    return 0;
}

/* The record at offset off of the ring, contiguous (copied when it wraps around the end). */
static const unsigned char *record_at(struct perf_sampler *s, const struct ring *r, unsigned long long off,
                                      size_t len)
{
    size_t start = (size_t)(off & (r->size - 1));
    if (start + len <= r->size) return r->data + start;
    if (len > s->record_cap) {
        unsigned char *b = realloc(s->record, len);
        if (!b) return NULL;
        s->record = b;
        s->record_cap = len;
    }
    size_t first = r->size - start;
    memcpy(s->record, r->data + start, first);
    memcpy(s->record + first, r->data, len - first);
    return s->record;
}

static int drain(struct perf_sampler *s, struct ring *r, void (*on_sample)(void *, const struct perf_sample *),
                 void *arg, long long *lost)
{
    unsigned long long head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE), tail = r->meta->data_tail;
    int n = 0;
    while (tail + sizeof(struct perf_event_header) <= head) {
        struct perf_event_header h;
        const unsigned char *hp = record_at(s, r, tail, sizeof h);
        if (!hp) break;
        memcpy(&h, hp, sizeof h);
        if (h.size < sizeof h || tail + h.size > head) break;
        const unsigned char *rec = record_at(s, r, tail, h.size);
        if (!rec) break;
        const unsigned char *body = rec + sizeof h, *end = rec + h.size;
        struct perf_sample sample;
        unsigned long long v[2];
        if (h.type == PERF_RECORD_SAMPLE && parse_sample(body, end, &sample) == 0) {
            if (sample.pid == s->pid) { /* inheritance also follows children it forks: not this profile's */
                on_sample(arg, &sample);
                n++;
            }
        } else if (h.type == PERF_RECORD_LOST && end - body >= 16) {
            memcpy(v, body, 16);
            *lost += (long long)v[1];
        } else if (h.type == PERF_RECORD_LOST_SAMPLES && end - body >= 8) {
            memcpy(v, body, 8);
            *lost += (long long)v[0];
        }
        tail += h.size;
    }
    __atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
    return n;
}

int perf_sampler_read(struct perf_sampler *s, int timeout_ms, void (*on_sample)(void *arg, const struct perf_sample *),
                      void *arg, long long *lost)
{
    struct pollfd pfd[MAX_CPUS];
    for (int i = 0; i < s->n; i++) pfd[i] = (struct pollfd){s->rings[i].fd, POLLIN, 0};
    if (poll(pfd, (nfds_t)s->n, timeout_ms) < 0 && errno != EINTR) return -errno;
    int n = 0;
    for (int i = 0; i < s->n; i++) n += drain(s, &s->rings[i], on_sample, arg, lost);
    return n;
}
