#include "dump.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "collect/procstat.h"
#include "util/clock.h"
#include "util/dump_path.h"
#include "util/fileio.h"
#include "dump_maps.h"
#include "elfcore.h"
#include "actions/target/ptrace_session.h"
#include "util/saved_file.h"
#include "snapshot.h"

#define PAGE 4096ULL
#define CHUNK_PAGES 256 /* 1 MiB per process_vm_readv */
#define PM_PAGES 4096   /* pages per pagemap read: 16 MiB of address space */
#define PM_PRESENT (1ULL << 63)
#define PM_SWAPPED (1ULL << 62)
#define PM_PFN ((1ULL << 55) - 1)

void dump_options_default(struct dump_options *o)
{
    memset(o, 0, sizeof *o);
    o->timeout = 2.0;
}

void dump_default_name(int pid, const char *dir, char *buf, size_t bufsz)
{
    saved_file_name(pid, dir, "core", "", buf, bufsz);
}

/* ---- before the stop ---- */

static int open_proc(int pid, const char *name)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", pid, name);
    return open(path, O_RDONLY | O_CLOEXEC);
}

/* smaps parsed as it is read: ~700 bytes a mapping, so 70,000 mappings are 50 MB of text not worth holding (and
 * more than any fixed limit one would pick). */
/* A fork's view of a mapping (smaps VmFlags): MADV_DONTFORK leaves it out of the child, MADV_WIPEONFORK gives the
 * child zeros. */
#define FORK_DONTFORK 1
#define FORK_WIPE 2

static int note_fork_flags(const struct dump_maps *dm, const char *line, size_t len, unsigned char **ff, int *ffcap)
{
    if (len < 8 || memcmp(line, "VmFlags:", 8) != 0 || dm->n == 0) return 0;
    if (dm->n > *ffcap) {
        int cap = dm->cap;
        unsigned char *f = realloc(*ff, (size_t)cap);
        if (!f) return -ENOMEM;
        memset(f + *ffcap, 0, (size_t)(cap - *ffcap));
        *ff = f;
        *ffcap = cap;
    }
    char flags[256]; /* " rd wr mr ...": two letters each */
    snprintf(flags, sizeof flags, "%.*s ", (int)(len - 8 < 250 ? len - 8 : 250), line + 8);
    (*ff)[dm->n - 1] = (strstr(flags, " dc ") ? FORK_DONTFORK : 0) | (strstr(flags, " wf ") ? FORK_WIPE : 0);
    return 0;
}

static int read_smaps(int pid, struct dump_maps *dm, unsigned char **ff, char *err, size_t errlen)
{
    enum { BUF = 1 << 20 };
    int fd = open_proc(pid, "smaps"), rc = 0, ffcap = 0;
    char *buf = fd >= 0 ? malloc(BUF) : NULL;
    if (fd < 0) rc = -errno;
    else if (!buf) rc = -ENOMEM;
    size_t have = 0;
    while (rc == 0) {
        ssize_t r = read(fd, buf + have, BUF - have);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            rc = -errno;
            break;
        }
        char *line = buf, *end = buf + have + r, *nl;
        while (rc == 0 && (nl = memchr(line, '\n', (size_t)(end - line)))) {
            rc = dump_maps_parse_line(dm, line, (size_t)(nl - line));
            if (rc == 0 && ff) rc = note_fork_flags(dm, line, (size_t)(nl - line), ff, &ffcap);
            line = nl + 1;
        }
        if (rc == 0 && r == 0 && line < end) rc = dump_maps_parse_line(dm, line, (size_t)(end - line));
        if (r == 0) break;
        have = (size_t)(end - line);
        memmove(buf, line, have);
        if (have == BUF) have = 0; /* a megabyte without a newline is not smaps: dropped */
    }
    free(buf);
    if (fd >= 0) close(fd);
    if (rc == 0 && ff && ffcap < dm->n) { /* every mapping gets its entry, flags line or not */
        unsigned char *f = realloc(*ff, (size_t)dm->n + 1);
        if (!f) rc = -ENOMEM;
        else {
            memset(f + ffcap, 0, (size_t)(dm->n + 1 - ffcap));
            *ff = f;
        }
    }
    if (rc == -EACCES || rc == -EPERM) ptrace_session_explain_eperm(pid, err, errlen);
    else if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
    else if (rc < 0) snprintf(err, errlen, "cannot read /proc/%d/smaps: %s", pid, strerror(-rc));
    return rc;
}

static int load_maps(int pid, const struct dump_options *o, struct dump_maps *dm, unsigned char **ff,
                     unsigned *filter, char *err, size_t errlen)
{
    memset(dm, 0, sizeof *dm);
    int rc = read_smaps(pid, dm, ff, err, errlen);
    if (rc < 0) {
        dump_maps_free(dm);
        return rc;
    }
    *filter = 0x33; /* the kernel's default */
    char *cf = fileio_read_proc(AT_FDCWD, pid, "coredump_filter", 64, NULL);
    if (cf) *filter = (unsigned)strtoul(cf, NULL, 16);
    free(cf);
    if (o->filter_set) *filter = o->filter;
    dump_maps_decide(dm, *filter, o->full);
    return 0;
}

int dump_estimate(int pid, const struct dump_options *o, unsigned long long *bytes, char *err, size_t errlen)
{
    struct dump_maps dm;
    unsigned filter;
    int rc = load_maps(pid, o, &dm, NULL, &filter, err, errlen);
    if (rc < 0) return rc;
    /* Copied bytes are at most the resident part of what is dumped; the mapping sizes bound it. */
    *bytes = dump_maps_bytes(&dm);
    dump_maps_free(&dm);
    return 0;
}

static int load_process(int pid, struct core_process *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    char path[64], buf[1024];
    struct procstat ps;
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    /* The raw text too: pgrp and session (fields 5 and 6) are not kept by the parser. */
    ssize_t n = fileio_read_at(AT_FDCWD, path, buf, sizeof buf);
    if (n <= 0 || procstat_parse(buf, (size_t)n, &ps) < 0) {
        snprintf(err, errlen, "no process %d", pid);
        return -ESRCH;
    }
    p->pid = pid;
    p->ppid = ps.ppid;
    p->state = ps.state;
    p->nice = ps.nice;
    p->flags = ps.flags;
    snprintf(p->fname, sizeof p->fname, "%.15s", ps.comm);
    /* pgrp and session: fields 5 and 6 of stat, after the name. */
    const char *after = strrchr(buf, ')');
    if (after) sscanf(after + 2, "%*c %*d %d %d", &p->pgrp, &p->sid);
    char *status = fileio_read_proc(AT_FDCWD, pid, "status", 16384, NULL);
    const char *u = status ? strstr(status, "\nUid:") : NULL, *g = status ? strstr(status, "\nGid:") : NULL;
    if (u) p->uid = (unsigned)strtoul(u + 5, NULL, 10);
    if (g) p->gid = (unsigned)strtoul(g + 5, NULL, 10);
    free(status);
    ssize_t len = 0;
    char *cmd = fileio_read_proc(AT_FDCWD, pid, "cmdline", sizeof p->psargs, &len);
    if (cmd) {
        for (ssize_t i = 0; i < len && i < (ssize_t)sizeof p->psargs - 1; i++) p->psargs[i] = cmd[i] ? cmd[i] : ' ';
        free(cmd);
    }
    p->auxv = (unsigned char *)fileio_read_proc(AT_FDCWD, pid, "auxv", 8192, &len);
    p->auxv_len = p->auxv ? (size_t)len : 0;
    return 0;
}

/* ---- while stopped: registers and memory ---- */

/* Reading the process and writing the file overlap: the capture thread reads chunks into free slots, a writer
 * thread drops zero pages and writes the rest (process_vm_readv's copy and pwrite's copy into the page cache are
 * most of a dump's time, in about equal parts). A chunk
 * gathers pages from as many mappings as fit, so that 70,000 one-page mappings cost a few hundred reads, hand-offs
 * and writes rather than 70,000 of each. */
#define SLOTS 8
#define FALLOC_MIN (64 * PAGE)

struct seg { /* n pages at addr, for file offset off */
    unsigned long long addr, off;
    size_t n;
};

struct slot {
    unsigned char *buf; /* CHUNK_PAGES pages, the segments' pages one after the other */
    struct seg *segs;   /* CHUNK_PAGES at most: every segment has a page */
    int nseg;
    size_t npages;
};

struct copier {
    int out_fd;
    int pid, pagemap_fd, mem_fd; /* the source: the process, or its snapshot's copy */
    int vm_readv;                /* process_vm_readv (a stopped process); else /proc/PID/mem (a copy) */
    int falloc; /* fallocate before each write (until the filesystem says it cannot) */
    unsigned long long zero_pfn; /* the shared zero page's frame; 0: unknown */
    unsigned long long *pm;           /* pagemap entries of PM_PAGES pages from page pm_first */
    unsigned long long pm_first, pm_n; /* pm_n 0: nothing read yet */
    struct iovec *iov;                 /* CHUNK_PAGES remote ranges for one process_vm_readv */
    unsigned long long done, total, read, written;
    const struct dump_options *o;
    int error; /* errno of a failed write (set by the writer) */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int sync_ready; /* lock and changed initialised (and so to be destroyed) */
    struct slot slots[SLOTS];
    int head, count, finished, writer_running;
    struct slot *filling; /* the free slot the capture thread is filling, not yet queued */
    pthread_t writer;
};

static int page_is_zero(const unsigned char *p)
{
    const unsigned long long *w = (const unsigned long long *)p;
    for (size_t i = 0; i < PAGE / sizeof *w; i++)
        if (w[i]) return 0;
    return 1;
}

/* Reads a slot's segments into its buffer: one process_vm_readv for all of them, and where it stops short, the
 * rest of that segment page by page through /proc/PID/mem (PROT_NONE pages, for one, read only that way), then
 * process_vm_readv again from the next segment. Unreadable pages stay zero. */
/* A copy is read through /proc/COPY/mem: process_vm_readv would pin, so unshare and copy, every page it still
 * shares copy-on-write with the process (docs/protocols/snapshot.md: 1 GiB more memory and 20 times slower). */
static void read_slot_mem(struct copier *c, struct slot *sl)
{
    unsigned char *p = sl->buf;
    for (int s = 0; s < sl->nseg; s++) {
        size_t n = sl->segs[s].n;
        ssize_t got = pread(c->mem_fd, p, n * PAGE, (off_t)sl->segs[s].addr);
        for (size_t i = got > 0 ? (size_t)got / PAGE : 0; i < n; i++) /* the rest page by page */
            if (pread(c->mem_fd, p + i * PAGE, PAGE, (off_t)(sl->segs[s].addr + i * PAGE)) != (ssize_t)PAGE)
                memset(p + i * PAGE, 0, PAGE);
        p += n * PAGE;
    }
    c->read += sl->npages * PAGE;
}

static void read_slot(struct copier *c, struct slot *sl)
{
    if (!c->vm_readv) {
        read_slot_mem(c, sl);
        return;
    }
    size_t page = 0, in = 0; /* pages of the buffer filled; pages of segment s filled */
    int s = 0;
    while (s < sl->nseg) {
        int k = 0;
        for (int j = s; j < sl->nseg; j++, k++) {
            size_t skip = j == s ? in : 0;
            c->iov[k].iov_base = (void *)(sl->segs[j].addr + skip * PAGE);
            c->iov[k].iov_len = (sl->segs[j].n - skip) * PAGE;
        }
        struct iovec local = {sl->buf + page * PAGE, (sl->npages - page) * PAGE};
        ssize_t got = process_vm_readv(c->pid, &local, 1, c->iov, (unsigned long)k, 0);
        size_t ok = got > 0 ? (size_t)got / PAGE : 0;
        page += ok;
        while (s < sl->nseg && ok >= sl->segs[s].n - in) { /* whole segments read */
            ok -= sl->segs[s].n - in;
            s++;
            in = 0;
        }
        in += ok;
        if (s == sl->nseg) break;
        for (; in < sl->segs[s].n; in++, page++)
            if (pread(c->mem_fd, sl->buf + page * PAGE, PAGE, (off_t)(sl->segs[s].addr + in * PAGE)) != (ssize_t)PAGE)
                memset(sl->buf + page * PAGE, 0, PAGE);
        s++;
        in = 0;
    }
    c->read += sl->npages * PAGE;
}

static int write_run(struct copier *c, const unsigned char *p, size_t len, unsigned long long at)
{
    /* Long runs get their blocks first: ext4 then writes into unwritten extents instead of reserving delayed
     * allocation block by block, a third of pwrite's time; for short runs the extra call costs more than it
     * saves. Where fallocate is not supported, plain writes. */
    if (c->falloc && len >= FALLOC_MIN && fallocate(c->out_fd, 0, (off_t)at, (off_t)len) < 0) {
        if (errno == ENOSPC || errno == EDQUOT || errno == EFBIG) return -errno;
        c->falloc = 0;
    }
    int rc = fileio_pwrite_full(c->out_fd, p, len, (off_t)at);
    if (rc == 0) c->written += len;
    return rc;
}

/* Writes the non-zero pages of a slot, one pwrite per run of pages adjacent in the file (across segments too).
 * Runs in the writer thread. */
static int write_slot(struct copier *c, const struct slot *sl)
{
    const unsigned char *p = sl->buf, *run = NULL;
    unsigned long long run_at = 0;
    size_t run_len = 0;
    for (int s = 0; s < sl->nseg; s++)
        for (size_t i = 0; i < sl->segs[s].n; i++, p += PAGE) {
            unsigned long long at = sl->segs[s].off + i * PAGE;
            int zero = page_is_zero(p);
            if (run && (zero || at != run_at + run_len)) {
                int rc = write_run(c, run, run_len, run_at);
                if (rc < 0) return rc;
                run = NULL;
            }
            if (zero) continue;
            if (!run) run = p, run_at = at, run_len = 0;
            run_len += PAGE;
        }
    return run ? write_run(c, run, run_len, run_at) : 0;
}

static void *writer_main(void *arg)
{
    struct copier *c = arg;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        while (c->count == 0 && !c->finished) pthread_cond_wait(&c->changed, &c->lock);
        if (c->count == 0) break;
        struct slot *sl = &c->slots[c->head];
        pthread_mutex_unlock(&c->lock);
        int rc = c->error ? 0 : write_slot(c, sl);
        pthread_mutex_lock(&c->lock);
        if (rc < 0 && !c->error) c->error = -rc;
        c->head = (c->head + 1) % SLOTS;
        c->count--;
        pthread_cond_broadcast(&c->changed);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* Reads the slot being filled and queues it for the writer. */
static void send_slot(struct copier *c)
{
    struct slot *sl = c->filling;
    c->filling = NULL;
    if (!sl || sl->npages == 0) return;
    read_slot(c, sl); /* the slot is ours until it is queued */
    pthread_mutex_lock(&c->lock);
    c->count++;
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&c->lock);
}

/* Reads from another source from now on; what was gathered so far is read from the previous one first. */
static void copier_source(struct copier *c, int pid, int mem_fd, int pagemap_fd, int vm_readv)
{
    send_slot(c);
    c->pid = pid;
    c->mem_fd = mem_fd;
    c->pagemap_fd = pagemap_fd;
    c->vm_readv = vm_readv;
    c->pm_n = 0;
}

/* Adds n pages at addr, for file offset off, to the slot being filled, sending each slot that fills up. */
static int add_pages(struct copier *c, unsigned long long addr, size_t n, unsigned long long off)
{
    while (n > 0) {
        if (!c->filling) {
            pthread_mutex_lock(&c->lock);
            while (c->count == SLOTS && !c->error) pthread_cond_wait(&c->changed, &c->lock);
            int error = c->error;
            /* The writer moves head and count together: this index stays free until it is queued. */
            c->filling = &c->slots[(c->head + c->count) % SLOTS];
            pthread_mutex_unlock(&c->lock);
            if (error) {
                c->filling = NULL;
                return -EIO;
            }
            c->filling->nseg = 0;
            c->filling->npages = 0;
        }
        struct slot *sl = c->filling;
        size_t k = n < CHUNK_PAGES - sl->npages ? n : CHUNK_PAGES - sl->npages;
        struct seg *last = sl->nseg ? &sl->segs[sl->nseg - 1] : NULL;
        if (last && last->addr + last->n * PAGE == addr && last->off + last->n * PAGE == off) last->n += k;
        else sl->segs[sl->nseg++] = (struct seg){addr, off, k};
        sl->npages += k;
        addr += k * PAGE;
        off += k * PAGE;
        n -= k;
        if (sl->npages == CHUNK_PAGES) send_slot(c);
    }
    return 0;
}

/* Sends the last, partly filled slot, waits for the writer to empty the queue and end; returns 0 or -EIO if a
 * write failed. With flush 0 (cancel, error) the partly filled slot is dropped. */
static int finish_writes(struct copier *c, int flush)
{
    if (!c->writer_running) return 0;
    if (flush) send_slot(c);
    c->filling = NULL;
    pthread_mutex_lock(&c->lock);
    c->finished = 1;
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->writer, NULL);
    c->writer_running = 0;
    return c->error ? -EIO : 0;
}

/* The pagemap entries of n pages (n <= PM_PAGES) from addr: from the window read last when it holds them (big
 * mappings and small ones side by side share one read), else from a new window starting at addr. NULL when
 * pagemap cannot be read there (the caller then reads every page). */
static const unsigned long long *pagemap_at(struct copier *c, unsigned long long addr, size_t n)
{
    unsigned long long first = addr / PAGE;
    if (c->pm_n && first >= c->pm_first && first + n <= c->pm_first + c->pm_n) return c->pm + (first - c->pm_first);
    ssize_t got = pread(c->pagemap_fd, c->pm, PM_PAGES * 8, (off_t)(first * 8));
    c->pm_n = got > 0 ? (unsigned long long)got / 8 : 0;
    c->pm_first = first;
    return c->pm_n >= n ? c->pm : NULL;
}

/* The shared zero page's frame number, which pagemap shows only with CAP_SYS_ADMIN (0 otherwise): a page of the
 * target mapped to it was read and never written, so it is zeros and need not be read, as the kernel's own dumper
 * skips it. */
static unsigned long long zero_pfn(void)
{
    unsigned long long e = 0, pfn = 0;
    volatile unsigned char *p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 0;
    (void)p[0]; /* a read fault maps the zero page */
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && pread(fd, &e, sizeof e, (off_t)((uintptr_t)p / PAGE * 8)) == (ssize_t)sizeof e && (e & PM_PRESENT))
        pfn = e & PM_PFN;
    if (fd >= 0) close(fd);
    munmap((void *)p, PAGE);
    return pfn;
}

/* A page to read: present or swapped (else never touched), and not the shared zero page. */
static int page_wanted(const struct copier *c, unsigned long long e)
{
    if (!(e & (PM_PRESENT | PM_SWAPPED))) return 0;
    return !(c->zero_pfn && (e & PM_PRESENT) && (e & PM_PFN) == c->zero_pfn);
}

/* Copies one mapping's dumped bytes to file offset off, skipping pages never touched or mapped to the zero page
 * (pagemap). */
static int copy_mapping(struct copier *c, const struct dump_map *m, unsigned long long off)
{
    unsigned long long len = elfcore_filesz(m);
    /* A fork copies no page table entries of a mapping without private anonymous pages (they fault in from the
     * file): there the copy's pagemap shows nothing, and every page is read. */
    int by_pagemap = c->vm_readv || m->anonymous > 0;
    for (unsigned long long pos = 0; pos < len; pos += CHUNK_PAGES * PAGE) {
        if (c->o->cancel && *c->o->cancel) return -ECANCELED;
        size_t n = (size_t)((len - pos) / PAGE < CHUNK_PAGES ? (len - pos) / PAGE : CHUNK_PAGES);
        unsigned long long addr = m->start + pos;
        const unsigned long long *pm = by_pagemap ? pagemap_at(c, addr, n) : NULL;
        size_t i = 0;
        while (i < n) {
            /* A run of pages to read or to skip; without pagemap, read everything. */
            int wanted = !pm || page_wanted(c, pm[i]);
            size_t j = i + 1;
            while (j < n && (!pm || page_wanted(c, pm[j])) == wanted) j++;
            if (wanted && add_pages(c, addr + i * PAGE, j - i, off + pos + i * PAGE) < 0) return -EIO;
            i = j;
        }
        c->done += n * PAGE;
        if (c->o->progress) c->o->progress(c->o->progress_arg, c->done, c->total);
    }
    return 0;
}

/* ---- what a fork does not copy faithfully ---- */

#define HOLD_MAX (4ULL << 20) /* bytes of such regions copied from the process during the pause, at most */

/* A dumped mapping a snapshot's copy does not hold as it was at the pause: absent (MADV_DONTFORK), zeros
 * (MADV_WIPEONFORK), or shared with the process, which keeps writing it (MAP_SHARED). */
struct unfaithful {
    int map;
    enum dump_region_kind kind;
    unsigned char *held; /* copied during the pause; NULL: read from the process after it */
    size_t len;
};

struct unfaithful_set {
    struct unfaithful *u;
    int n;
    int *of_map; /* per mapping: its index in u, or -1 */
};

static void unfaithful_free(struct unfaithful_set *set)
{
    for (int i = 0; i < set->n; i++) free(set->u[i].held);
    free(set->u);
    free(set->of_map);
    memset(set, 0, sizeof *set);
}

/* Finds them and, the smallest first within HOLD_MAX, allocates their buffers before the stop. */
static int unfaithful_find(const struct dump_maps *dm, const unsigned char *ff, struct unfaithful_set *set)
{
    memset(set, 0, sizeof *set);
    set->of_map = malloc((size_t)(dm->n + 1) * sizeof *set->of_map);
    set->u = malloc((size_t)(dm->n + 1) * sizeof *set->u);
    if (!set->of_map || !set->u) return -ENOMEM;
    for (int i = 0; i < dm->n; i++) {
        const struct dump_map *m = &dm->maps[i];
        unsigned long long len = elfcore_filesz(m);
        set->of_map[i] = -1;
        /* A read-only shared mapping holds what the file holds, for the copy as for the process. */
        int shared_written = m->shared && m->perms[1] == 'w';
        if (len == 0 || !(shared_written || (ff && ff[i]))) continue;
        enum dump_region_kind k = ff && (ff[i] & FORK_DONTFORK) ? DUMP_REGION_DONTFORK
                                  : ff && (ff[i] & FORK_WIPE) ? DUMP_REGION_WIPEONFORK
                                                              : DUMP_REGION_SHARED;
        set->of_map[i] = set->n;
        set->u[set->n++] = (struct unfaithful){i, k, NULL, (size_t)len};
    }
    unsigned long long budget = HOLD_MAX;
    for (;;) { /* smallest first */
        struct unfaithful *best = NULL;
        for (int i = 0; i < set->n; i++)
            if (!set->u[i].held && set->u[i].len <= budget && (!best || set->u[i].len < best->len)) best = &set->u[i];
        if (!best) break;
        if (!(best->held = aligned_alloc(PAGE, best->len))) return -ENOMEM;
        budget -= best->len;
    }
    return 0;
}

/* During the pause: the held ones from the stopped process. */
static void unfaithful_hold(int pid, int mem_fd, struct unfaithful_set *set, const struct dump_maps *dm)
{
    for (int i = 0; i < set->n; i++) {
        struct unfaithful *u = &set->u[i];
        if (!u->held) continue;
        struct iovec local = {u->held, u->len}, remote = {(void *)dm->maps[u->map].start, u->len};
        ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
        for (size_t off = got > 0 ? (size_t)got & ~(PAGE - 1) : 0; off < u->len; off += PAGE)
            if (pread(mem_fd, u->held + off, PAGE, (off_t)(dm->maps[u->map].start + off)) != (ssize_t)PAGE)
                memset(u->held + off, 0, PAGE);
    }
}

/* After the writer is done: the held bytes at their offsets, zero pages left out. */
static int unfaithful_write(struct copier *c, const struct unfaithful_set *set, const unsigned long long *offs)
{
    for (int i = 0; i < set->n; i++) {
        const struct unfaithful *u = &set->u[i];
        for (size_t a = 0; u->held && a < u->len;) {
            if (page_is_zero(u->held + a)) {
                a += PAGE;
                continue;
            }
            size_t b = a + PAGE;
            while (b < u->len && !page_is_zero(u->held + b)) b += PAGE;
            int rc = write_run(c, u->held + a, b - a, offs[u->map] + a);
            if (rc < 0) return rc;
            c->read += b - a;
            a = b;
        }
    }
    return 0;
}

static void unfaithful_report(const struct unfaithful_set *set, const struct dump_maps *dm, struct dump_result *r)
{
    r->regions_total = set->n;
    for (int i = 0; i < set->n && r->nregions < DUMP_REGIONS_MAX; i++) {
        const struct dump_map *m = &dm->maps[set->u[i].map];
        struct dump_region *g = &r->regions[r->nregions++];
        g->start = m->start;
        g->end = m->end;
        g->bytes = set->u[i].len;
        snprintf(g->path, sizeof g->path, "%s", m->path ? m->path : "");
        g->kind = set->u[i].kind;
        g->consistent = set->u[i].held != NULL;
    }
}

/* ---- the mode ---- */

const char *dump_mode_name(enum dump_mode m)
{
    return m == DUMP_MODE_SNAPSHOT ? "snapshot" : m == DUMP_MODE_STOP ? "stop" : "auto";
}

const char *dump_region_kind_name(enum dump_region_kind k)
{
    return k == DUMP_REGION_DONTFORK ? "dontfork" : k == DUMP_REGION_WIPEONFORK ? "wipeonfork" : "shared";
}

enum dump_mode dump_mode_predict(int pid, const struct dump_options *o, char *why, size_t whylen)
{
    struct snapshot_plan plan;
    if (o->mode == DUMP_MODE_STOP) {
        snprintf(why, whylen, "asked for");
        return DUMP_MODE_STOP;
    }
    return snapshot_prepare(pid, &plan, why, whylen) == 0 ? DUMP_MODE_SNAPSHOT : DUMP_MODE_STOP;
}

static void add_pause(struct dump_result *r, double ms)
{
    if (r->npauses < 2) r->pauses_ms[r->npauses++] = ms;
    r->stopped_ms += ms;
    if (ms > r->pause_longest_ms) r->pause_longest_ms = ms;
}

/* ---- the file ---- */

static int create_temp(const char *path, char *tmp, size_t tmpsz, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) == 0) {
        snprintf(err, errlen, "%s exists: dumps never overwrite a file", path);
        return -EEXIST;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : path;
    if (slash) *slash = '\0';
    snprintf(tmp, tmpsz, "%s/.%s.partial.%d", slash ? dir : ".", base, (int)getpid());
    int fd = fileio_create_private(AT_FDCWD, tmp, O_RDWR);
    if (fd < 0) snprintf(err, errlen, "cannot create a file in %s: %s", slash ? dir : ".", strerror(-fd));
    return fd;
}

/* The copy's memory and page map, once it exists. */
static int open_copy(int copy, int *mem_fd, int *pagemap_fd, char *err, size_t errlen)
{
    *mem_fd = open_proc(copy, "mem");
    *pagemap_fd = open_proc(copy, "pagemap");
    if (*mem_fd >= 0) return 0;
    snprintf(err, errlen, "cannot open /proc/%d/mem of the copy: %s", copy, strerror(errno));
    return -errno;
}

/* ---- the steps of one dump ---- */

/* One dump_write: what its steps share, and what job_free must undo whichever step failed. */
struct dump_job {
    int pid;
    const struct dump_options *o;
    struct dump_result *r;
    double t0;
    struct core_process proc;
    struct dump_maps dm;
    unsigned char *ff; /* per mapping: FORK_* flags */
    struct core_thread *threads;
    unsigned char *regs_state; /* per thread: REGS_* */
    int nthreads, main_at; /* main_at: the main thread's index in threads, or -1 */
    struct bytes notes, head, tail;
    struct copier c;
    struct ptrace_session s;
    int stopped, guarded, snap;
    struct snapshot_plan plan;
    struct snapshot sn;
    struct snapshot_guard guard;
    struct unfaithful_set uf;
    unsigned long long *offs; /* per mapping: its file offset; then the end of the data */
    int orig_mem, orig_pagemap, copy_mem, copy_pagemap; /* the copier reads through one pair */
    char tmp[4200]; /* the temporary name while the file is ours to unlink; "" once placed or never made */
    char why[512];  /* why not a snapshot */
};

/* Everything empty and every fd -1, so that job_free can undo any part of the work. */
static void job_init(struct dump_job *j, int pid, const struct dump_options *o, struct dump_result *r, double t0)
{
    memset(j, 0, sizeof *j);
    j->pid = pid;
    j->o = o;
    j->r = r;
    j->t0 = t0;
    j->c = (struct copier){
        .pid = pid, .out_fd = -1, .pagemap_fd = -1, .mem_fd = -1, .vm_readv = 1, .falloc = 1, .o = o};
    j->orig_mem = j->orig_pagemap = j->copy_mem = j->copy_pagemap = -1;
}

/* The mode, before the stop: a snapshot where it is safe, with the buffers for what a fork does not copy. */
static int job_choose_mode(struct dump_job *j, char *err, size_t errlen)
{
    struct dump_result *r = j->r;
    if (j->o->held && !j->o->siginfo) snprintf(r->mode_reason, sizeof r->mode_reason, "the process is held at its exit");
    else if (j->o->held && snapshot_prepare(j->pid, &j->plan, j->why, sizeof j->why) < 0)
        snprintf(r->mode_reason, sizeof r->mode_reason, "held at its signal: %.400s", j->why);
    else if (j->o->held) j->snap = 1;
    else if (j->o->mode == DUMP_MODE_STOP) snprintf(r->mode_reason, sizeof r->mode_reason, "asked for");
    else if (snapshot_prepare(j->pid, &j->plan, j->why, sizeof j->why) == 0) j->snap = 1;
    else if (j->o->mode == DUMP_MODE_SNAPSHOT) {
        snprintf(err, errlen, "no snapshot: %s", j->why);
        return -EINVAL;
    } else snprintf(r->mode_reason, sizeof r->mode_reason, "%s", j->why);
    if (j->snap && unfaithful_find(&j->dm, j->ff, &j->uf) < 0) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

/* The copier's buffers, sources and lock, before the stop: nothing is allocated while the process waits. */
static int job_setup_copier(struct dump_job *j, char *err, size_t errlen)
{
    struct copier *c = &j->c;
    int slots_ok = 1;
    /* Page-aligned: copies into a buffer 16 bytes off a page boundary (malloc's) run at a third of the speed. */
    for (int i = 0; i < SLOTS; i++) {
        slots_ok &= (c->slots[i].buf = aligned_alloc(PAGE, CHUNK_PAGES * PAGE)) != NULL;
        slots_ok &= (c->slots[i].segs = malloc(CHUNK_PAGES * sizeof *c->slots[i].segs)) != NULL;
    }
    c->pm = malloc(PM_PAGES * 8);
    c->iov = malloc(CHUNK_PAGES * sizeof *c->iov);
    j->offs = malloc((size_t)(j->dm.n + 1) * sizeof *j->offs);
    c->pagemap_fd = j->orig_pagemap = open_proc(j->pid, "pagemap");
    c->zero_pfn = zero_pfn();
    c->mem_fd = j->orig_mem = open_proc(j->pid, "mem");
    if (pthread_mutex_init(&c->lock, NULL) == 0) { /* destroyed only if made: sync_ready */
        if (pthread_cond_init(&c->changed, NULL) == 0) c->sync_ready = 1;
        else pthread_mutex_destroy(&c->lock);
    }
    if (!slots_ok || !c->pm || !c->iov || !j->offs || !c->sync_ready) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

/* Before the stop: all that can be read, decided and allocated while the process runs, and the file created. */
static int job_prepare(struct dump_job *j, char *err, size_t errlen)
{
    int rc;
    if ((rc = load_process(j->pid, &j->proc, err, errlen)) < 0 ||
        (rc = load_maps(j->pid, j->o, &j->dm, &j->ff, &j->r->filter, err, errlen)) < 0)
        return rc;
    j->c.total = dump_maps_bytes(&j->dm);
    j->r->estimated_bytes = j->c.total;
    if ((rc = job_choose_mode(j, err, errlen)) < 0 || (rc = job_setup_copier(j, err, errlen)) < 0) return rc;
    int fd = create_temp(j->o->path, j->tmp, sizeof j->tmp, err, errlen);
    if (fd < 0) {
        j->tmp[0] = '\0'; /* not created: not ours to unlink */
        return fd;
    }
    j->c.out_fd = fd;
    return 0;
}

enum { REGS_UNREAD, REGS_READ, REGS_FAILED };

/* Stopped: the threads the core holds, the first thread (gdb's current one) first, and where the main thread is;
 * their registers are read next. */
static int job_list_threads(struct dump_job *j, char *err, size_t errlen)
{
    j->threads = calloc((size_t)j->s.n, sizeof *j->threads);
    j->regs_state = calloc((size_t)j->s.n, 1);
    if (!j->threads || !j->regs_state) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    int first = j->o->first_tid ? j->o->first_tid : j->pid;
    j->main_at = -1;
    for (int pass = 0; pass < 2; pass++) /* the first thread first, then the others */
        for (int i = 0; i < j->s.n; i++) {
            struct ptrace_thread *pt = &j->s.threads[i];
            if (pt->gone || !pt->stopped || (pass == 0) != (pt->tid == first)) continue;
            struct core_thread *t = &j->threads[j->nthreads];
            t->tid = pt->tid;
            t->signal = pt->pending_sig ? pt->pending_sig : SIGSTOP;
            /* Held at a signal: every thread carries it, as in the kernel's cores (gdb takes it from any) */
            if (j->o->held && j->o->siginfo) t->signal = j->o->siginfo->si_signo;
            if (pt->tid == j->pid) j->main_at = j->nthreads;
            j->nthreads++;
        }
    return 0;
}

/* Still stopped: the registers of one listed thread (at), or of every one not read yet (-1). */
static void job_read_registers(struct dump_job *j, int at)
{
    int from = at < 0 ? 0 : at, to = at < 0 ? j->nthreads : at + 1;
    for (int i = from; i < to; i++) {
        if (j->regs_state[i] != REGS_UNREAD) continue;
        int rc = arch_core_regs_read(j->threads[i].tid, &j->threads[i].regs);
        j->regs_state[i] = rc == 0 ? REGS_READ : REGS_FAILED;
    }
}

/* A snapshot's clone runs: the other threads' registers meanwhile, out of the pause. */
static void job_read_registers_during(void *arg)
{
    job_read_registers(arg, -1);
}

/* Threads whose registers could not be read are left out. */
static void job_keep_read_threads(struct dump_job *j)
{
    int n = 0;
    for (int i = 0; i < j->nthreads; i++) {
        if (j->regs_state[i] != REGS_READ) continue;
        if (i == j->main_at) j->main_at = n;
        j->threads[n] = j->threads[i];
        j->regs_state[n++] = REGS_READ;
    }
    j->nthreads = n;
}

/* The stop: every thread, under the snapshot's guard (diagtop's signals blocked) when a copy is to be made. For a
 * snapshot, only the main thread's registers now: its clone needs them; the others' are read while it runs. */
static int job_stop(struct dump_job *j, char *err, size_t errlen)
{
    if (j->snap) {
        snapshot_guard_begin(&j->guard);
        j->guarded = 1;
    }
    int rc = 0;
    if (j->o->held) j->s = *j->o->held; /* stopped already: the caller's, used and left to it */
    else if ((rc = ptrace_session_stop(&j->s, j->pid, j->o->timeout, j->o->cancel, err, errlen)) < 0) return rc;
    j->stopped = 1;
    struct timespec mono, real; /* the moment the core shows, for its DIAGTOP note */
    clock_gettime(CLOCK_MONOTONIC, &mono);
    clock_gettime(CLOCK_REALTIME, &real);
    j->proc.taken_monotonic_ns = (long long)mono.tv_sec * 1000000000LL + mono.tv_nsec;
    j->proc.taken_realtime_ns = (long long)real.tv_sec * 1000000000LL + real.tv_nsec;
    if (j->c.mem_fd < 0) j->c.mem_fd = j->orig_mem = open_proc(j->pid, "mem"); /* may need the attachment */
    if ((rc = job_list_threads(j, err, errlen)) < 0) return rc;
    job_read_registers(j, j->snap ? j->main_at : -1);
    return 0;
}

/* Still stopped: the copy is made and the process runs again at once; without a copy it stays stopped until its
 * memory is copied. */
static int job_snapshot_or_stay(struct dump_job *j, char *err, size_t errlen)
{
    struct dump_result *r = j->r;
    if (j->snap && (j->main_at < 0 || j->regs_state[j->main_at] != REGS_READ)) {
        j->snap = 0;
        snprintf(j->why, sizeof j->why, "the main thread is gone");
    } else if (j->snap) {
        unfaithful_hold(j->pid, j->orig_mem, &j->uf, &j->dm);
        if (snapshot_take(&j->sn, &j->plan, &j->s, &j->threads[j->main_at].regs, job_read_registers_during, j,
                          j->why, sizeof j->why) < 0)
            j->snap = 0;
    }
    if (!j->snap && j->sn.others_released) { /* its threads ran on: copying it now would mix instants */
        snprintf(err, errlen, "the snapshot failed after the process ran again: %s", j->why);
        return -EAGAIN;
    }
    if (!j->snap && j->o->mode == DUMP_MODE_SNAPSHOT) {
        snprintf(err, errlen, "no snapshot: %s", j->why);
        return -EAGAIN;
    }
    if (!j->snap) {
        job_read_registers(j, -1); /* no clone read the others' */
        job_keep_read_threads(j);
        r->mode = DUMP_MODE_STOP;
        if (!r->mode_reason[0]) snprintf(r->mode_reason, sizeof r->mode_reason, "%s", j->why);
        unfaithful_free(&j->uf); /* stopped throughout: everything is as it was */
        return 0;
    }
    /* the copy exists: the process runs again (of a held one, all but the thread holding its signal) */
    if (j->o->held) ptrace_session_release_others(&j->s, 0);
    else ptrace_session_detach(&j->s, 0.5);
    add_pause(r, ptrace_session_stopped_ms(&j->s));
    snapshot_guard_end(&j->guard);
    j->guarded = 0;
    job_keep_read_threads(j);
    int rc;
    if ((rc = snapshot_hold(&j->sn, 2.0, err, errlen)) < 0 ||
        (rc = open_copy(j->sn.copy, &j->copy_mem, &j->copy_pagemap, err, errlen)) < 0)
        return rc;
    copier_source(&j->c, j->sn.copy, j->copy_mem, j->copy_pagemap, 0);
    r->mode = DUMP_MODE_SNAPSHOT;
    return 0;
}

/* Where everything goes in the file: the notes (they need the registers) first, then each mapping's bytes. */
static int job_layout(struct dump_job *j, char *err, size_t errlen)
{
    j->proc.siginfo = j->o->held ? j->o->siginfo : NULL;
    if (elfcore_notes(&j->notes, &j->proc, j->threads, j->nthreads, &j->dm) < 0) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    j->offs[0] = elfcore_data_offset(&j->dm, j->notes.n);
    for (int i = 1; i <= j->dm.n; i++) j->offs[i] = j->offs[i - 1] + elfcore_filesz(&j->dm.maps[i - 1]);
    return 0;
}

/* The writer thread, with every signal blocked: they are the capture's to see. */
static int copier_start(struct copier *c, char *err, size_t errlen)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    c->writer_running = pthread_create(&c->writer, NULL, writer_main, c) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (c->writer_running) return 0;
    snprintf(err, errlen, "cannot start a writer thread");
    return -EAGAIN;
}

/* The copy's memory (or the stopped process's); then, for a snapshot, what the copy does not hold as it was,
 * from the process. */
static int job_copy_mappings(struct dump_job *j)
{
    int rc = 0;
    for (int i = 0; rc == 0 && i < j->dm.n; i++) {
        const struct dump_map *m = &j->dm.maps[i];
        if (elfcore_filesz(m) == 0) {
            j->r->mappings_skipped++;
            continue;
        }
        j->r->mappings_written++;
        if (j->uf.n && j->uf.of_map[i] >= 0) j->c.done += elfcore_filesz(m); /* below */
        else rc = copy_mapping(&j->c, m, j->offs[i]);
    }
    if (rc == 0 && j->uf.n) copier_source(&j->c, j->pid, j->orig_mem, j->orig_pagemap, 1);
    for (int k = 0; rc == 0 && k < j->uf.n; k++)
        if (!j->uf.u[k].held) rc = copy_mapping(&j->c, &j->dm.maps[j->uf.u[k].map], j->offs[j->uf.u[k].map]);
    return rc;
}

/* The memory into the file; on every path the copy is killed and a stopped process detached before returning. */
static int job_copy(struct dump_job *j, char *err, size_t errlen)
{
    struct copier *c = &j->c;
    int rc = job_layout(j, err, errlen);
    if (rc < 0) return rc;
    if ((rc = copier_start(c, err, errlen)) == 0) rc = job_copy_mappings(j);
    /* The last chunk is read; the copy, checked to be still there (else the bytes read from it are not its), can go
     * while the last writes finish before the process goes (the buffers are few). */
    if (rc == 0 && c->writer_running) send_slot(c);
    if (rc == 0 && j->snap && !snapshot_alive(&j->sn)) {
        rc = -ESRCH;
        snprintf(err, errlen, "the copy %d was killed while it was read (by the OOM killer?)", j->sn.copy);
    }
    if (j->snap) snapshot_kill(&j->sn);
    int wrc = finish_writes(c, rc == 0);
    if (rc == 0) rc = wrc;
    if (rc == 0 && j->uf.n) rc = unfaithful_write(c, &j->uf, j->offs);
    if (!j->snap && !j->o->held) {
        ptrace_session_detach(&j->s, 0.5);
        add_pause(j->r, ptrace_session_stopped_ms(&j->s));
    }
    if (rc == -ECANCELED) snprintf(err, errlen, "cancelled");
    else if (rc < 0 && c->error) snprintf(err, errlen, "cannot write %s: %s", j->tmp, strerror(c->error));
    return rc;
}

/* The copy is read: it is reaped (the main thread's short stop, if needed, is a pause too), and what it did not
 * hold as it was is reported. */
static void job_release_snapshot(struct dump_job *j)
{
    if (!j->snap) return;
    snapshot_release(&j->sn, &j->plan, 2.0, j->o->cancel);
    if (j->sn.reap_ms > 0) add_pause(j->r, j->sn.reap_ms);
    snprintf(j->r->zombie, sizeof j->r->zombie, "%s", j->sn.reap_err);
    unfaithful_report(&j->uf, &j->dm, j->r);
}

/* Running again: headers and notes, the section header of a huge count, the final size, then the name. */
static int job_finish_file(struct dump_job *j, char *err, size_t errlen)
{
    unsigned long long end = 0;
    int rc, fd = j->c.out_fd;
    if (elfcore_headers(&j->head, &j->dm, j->notes.n) < 0 || elfcore_trailer(&j->tail, &j->dm, j->notes.n, &end) < 0) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    if ((rc = fileio_pwrite_full(fd, j->head.data, j->head.n, 0)) < 0 ||
        (rc = fileio_pwrite_full(fd, j->notes.data, j->notes.n, (off_t)j->head.n)) < 0 ||
        (rc = fileio_pwrite_full(fd, j->tail.data, j->tail.n, (off_t)end)) < 0 || ftruncate(fd, (off_t)(end + j->tail.n)) < 0) {
        if (rc == 0) rc = -errno;
        snprintf(err, errlen, "cannot write %s: %s", j->tmp, strerror(-rc));
        return rc;
    }
    char placed[4200];
    if ((rc = saved_file_place(fd, j->tmp, j->o->path, j->pid, NULL, "core", "", placed, sizeof placed)) < 0) {
        snprintf(err, errlen, "cannot rename %s to %s: %s", j->tmp, j->o->path, strerror(-rc));
        return rc;
    }
    j->tmp[0] = '\0';
    return 0;
}

/* The result of a dump that succeeded: the file's sizes, what was copied, the time it all took. */
static void job_report(struct dump_job *j)
{
    struct dump_result *r = j->r;
    struct stat st;
    if (fstat(j->c.out_fd, &st) == 0) {
        r->apparent_bytes = (unsigned long long)st.st_size;
        r->allocated_bytes = (unsigned long long)st.st_blocks * 512ULL;
    }
    if (dump_path_absolute(j->o->path, r->path, sizeof r->path) < 0) /* said absolute, wherever diagtop ran */
        snprintf(r->path, sizeof r->path, "%s", j->o->path);
    r->threads = j->nthreads;
    r->bytes_read = j->c.read;
    r->bytes_written = j->c.written;
    r->total_ms = (clock_monotonic_seconds() - j->t0) * 1000.0;
}

/* The copier's buffers and lock, once its writer has ended (its fds are the job's); the lock only if it was made. */
static void copier_free(struct copier *c)
{
    for (int i = 0; i < SLOTS; i++) {
        free(c->slots[i].buf);
        free(c->slots[i].segs);
    }
    free(c->pm);
    free(c->iov);
    if (c->sync_ready) {
        pthread_mutex_destroy(&c->lock);
        pthread_cond_destroy(&c->changed);
    }
}

/* Every path, errors and cancel included: the writer ends, the process runs again, the copy dies and is reaped,
 * no partial file is left, and everything is freed. */
static void job_free(struct dump_job *j)
{
    finish_writes(&j->c, 0);
    if (j->stopped && !j->s.detached && !j->o->held) ptrace_session_detach(&j->s, 0.5);
    if (j->guarded) snapshot_guard_end(&j->guard);
    if (j->sn.copy) snapshot_release(&j->sn, &j->plan, 2.0, NULL);
    if (!j->o->held) ptrace_session_free(&j->s);
    if (j->c.out_fd >= 0) close(j->c.out_fd);
    if (j->tmp[0]) unlink(j->tmp);
    int fds[] = {j->orig_mem, j->orig_pagemap, j->copy_mem, j->copy_pagemap};
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
        if (fds[i] >= 0) close(fds[i]);
    copier_free(&j->c);
    free(j->offs);
    free(j->ff);
    unfaithful_free(&j->uf);
    for (int i = 0; i < j->nthreads; i++) arch_core_regs_free(&j->threads[i].regs);
    free(j->threads);
    free(j->regs_state);
    free(j->proc.auxv);
    bytes_free(&j->notes);
    bytes_free(&j->head);
    bytes_free(&j->tail);
    dump_maps_free(&j->dm);
}

int dump_write(int pid, const struct dump_options *o, struct dump_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    double t0 = clock_monotonic_seconds();
    int rc = o->held ? 0 : ptrace_session_check(pid, err, errlen);
    if (rc < 0) return rc;
    struct dump_job j;
    job_init(&j, pid, o, r, t0);
    if ((rc = job_prepare(&j, err, errlen)) == 0 && (rc = job_stop(&j, err, errlen)) == 0 &&
        (rc = job_snapshot_or_stay(&j, err, errlen)) == 0 && (rc = job_copy(&j, err, errlen)) == 0) {
        job_release_snapshot(&j);
        if ((rc = job_finish_file(&j, err, errlen)) == 0) job_report(&j);
    }
    job_free(&j);
    return rc;
}
