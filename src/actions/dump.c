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

#include "../collect/procstat.h"
#include "../util/clock.h"
#include "../util/fileio.h"
#include "dump_maps.h"
#include "elfcore.h"
#include "ptrace_session.h"

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
    char comm[64] = "process", path[64], when[32];
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    if (fileio_read_at(AT_FDCWD, path, comm, sizeof comm) > 0) comm[strcspn(comm, "\n")] = '\0';
    for (char *c = comm; *c; c++) /* a file name, not a path, and no surprises in a shell */
        if (*c == '/' || *c < 0x20 || *c == ' ' || (unsigned char)*c >= 0x7f) *c = '_';
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y%m%d-%H%M%S", &tm);
    snprintf(buf, bufsz, "%s/core.%s.%d.%s", dir, comm, pid, when);
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
static int read_smaps(int pid, struct dump_maps *dm, char *err, size_t errlen)
{
    enum { BUF = 1 << 20 };
    int fd = open_proc(pid, "smaps"), rc = 0;
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
    if (rc == -EACCES || rc == -EPERM) ptrace_session_explain_eperm(pid, err, errlen);
    else if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
    else if (rc < 0) snprintf(err, errlen, "cannot read /proc/%d/smaps: %s", pid, strerror(-rc));
    return rc;
}

static int load_maps(int pid, const struct dump_options *o, struct dump_maps *dm, unsigned *filter, char *err,
                     size_t errlen)
{
    memset(dm, 0, sizeof *dm);
    int rc = read_smaps(pid, dm, err, errlen);
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
    int rc = load_maps(pid, o, &dm, &filter, err, errlen);
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
    int pid, out_fd, pagemap_fd, mem_fd;
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
static void read_slot(struct copier *c, struct slot *sl)
{
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
    while (len > 0) {
        ssize_t w = pwrite(c->out_fd, p, len, (off_t)at);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? -errno : -ENOSPC;
        p += w;
        at += (unsigned long long)w;
        len -= (size_t)w;
        c->written += (unsigned long long)w;
    }
    return 0;
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
    for (unsigned long long pos = 0; pos < len; pos += CHUNK_PAGES * PAGE) {
        if (c->o->cancel && *c->o->cancel) return -ECANCELED;
        size_t n = (size_t)((len - pos) / PAGE < CHUNK_PAGES ? (len - pos) / PAGE : CHUNK_PAGES);
        unsigned long long addr = m->start + pos;
        const unsigned long long *pm = pagemap_at(c, addr, n);
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
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot create a file in %s: %s", slash ? dir : ".", strerror(e));
        return -e;
    }
    return fd;
}

/* Dumps and heap profiles hold secrets and belong to whoever asked, also through sudo. */
static void give_to_invoking_user(int fd)
{
    const char *uid = getenv("SUDO_UID"), *gid = getenv("SUDO_GID");
    if (geteuid() == 0 && uid && gid && fchown(fd, (uid_t)atoi(uid), (gid_t)atoi(gid)) < 0) {
        /* best effort: the file stays root's, still 0600 */
    }
}

static int write_all(int fd, const void *data, size_t n, off_t at)
{
    const unsigned char *p = data;
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, at);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? -errno : -ENOSPC;
        p += w;
        at += w;
        n -= (size_t)w;
    }
    return 0;
}

int dump_write(int pid, const struct dump_options *o, struct dump_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    double t0 = clock_monotonic_seconds();
    int rc = ptrace_session_check(pid, err, errlen);
    if (rc < 0) return rc;
    struct core_process proc;
    struct dump_maps dm = {0};
    struct core_thread *threads = NULL;
    struct bytes notes = {0}, head = {0}, tail = {0};
    struct copier c = {.pid = pid, .out_fd = -1, .pagemap_fd = -1, .mem_fd = -1, .falloc = 1, .o = o};
    struct ptrace_session s = {0};
    int nthreads = 0, stopped = 0;
    char tmp[4200] = "";
    if ((rc = load_process(pid, &proc, err, errlen)) < 0) goto out;
    if ((rc = load_maps(pid, o, &dm, &r->filter, err, errlen)) < 0) goto out;
    c.total = dump_maps_bytes(&dm);
    r->estimated_bytes = c.total;
    int slots_ok = 1;
    /* Page-aligned: copies into a buffer 16 bytes off a page boundary (malloc's) run at a third of the speed. */
    for (int i = 0; i < SLOTS; i++) {
        slots_ok &= (c.slots[i].buf = aligned_alloc(PAGE, CHUNK_PAGES * PAGE)) != NULL;
        slots_ok &= (c.slots[i].segs = malloc(CHUNK_PAGES * sizeof *c.slots[i].segs)) != NULL;
    }
    c.pm = malloc(PM_PAGES * 8);
    c.iov = malloc(CHUNK_PAGES * sizeof *c.iov);
    c.pagemap_fd = open_proc(pid, "pagemap");
    c.zero_pfn = zero_pfn();
    c.mem_fd = open_proc(pid, "mem");
    pthread_mutex_init(&c.lock, NULL);
    pthread_cond_init(&c.changed, NULL);
    if (!slots_ok || !c.pm || !c.iov) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
        goto out;
    }
    if ((c.out_fd = create_temp(o->path, tmp, sizeof tmp, err, errlen)) < 0) {
        rc = c.out_fd;
        tmp[0] = '\0';
        goto out;
    }

    /* Stopped: registers, then memory. */
    if ((rc = ptrace_session_stop(&s, pid, o->timeout, o->cancel, err, errlen)) < 0) goto out;
    stopped = 1;
    if (c.mem_fd < 0) c.mem_fd = open_proc(pid, "mem"); /* may need the attachment */
    threads = calloc((size_t)s.n, sizeof *threads);
    if (!threads) {
        rc = -ENOMEM;
        snprintf(err, errlen, "out of memory");
    }
    int first = o->first_tid ? o->first_tid : pid;
    for (int pass = 0; threads && pass < 2; pass++) /* the first thread first, then the others */
        for (int i = 0; i < s.n; i++) {
            struct ptrace_thread *pt = &s.threads[i];
            if (pt->gone || !pt->stopped || (pass == 0) != (pt->tid == first)) continue;
            struct core_thread *t = &threads[nthreads];
            t->tid = pt->tid;
            t->signal = pt->pending_sig ? pt->pending_sig : SIGSTOP;
            if (arch_core_regs_read(pt->tid, &t->regs) == 0) nthreads++;
        }
    if (rc == 0 && elfcore_notes(&notes, &proc, threads, nthreads, &dm) < 0) {
        rc = -ENOMEM;
        snprintf(err, errlen, "out of memory");
    }
    unsigned long long off = elfcore_data_offset(&dm, notes.n);
    if (rc == 0) {
        sigset_t all, old; /* the writer takes no signals: they are the capture's to see */
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        c.writer_running = pthread_create(&c.writer, NULL, writer_main, &c) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (!c.writer_running) {
            rc = -EAGAIN;
            snprintf(err, errlen, "cannot start a writer thread");
        }
    }
    for (int i = 0; rc == 0 && i < dm.n; i++) {
        const struct dump_map *m = &dm.maps[i];
        unsigned long long len = elfcore_filesz(m);
        if (len == 0) {
            r->mappings_skipped++;
            continue;
        }
        rc = copy_mapping(&c, m, off);
        off += len;
        r->mappings_written++;
    }
    /* Everything read is in the queue; the last writes finish before the process goes (the buffers are few). */
    int wrc = finish_writes(&c, rc == 0);
    if (rc == 0) rc = wrc;
    ptrace_session_detach(&s, 0.5);
    r->stopped_ms = ptrace_session_stopped_ms(&s);
    if (rc == -ECANCELED) snprintf(err, errlen, "cancelled");
    else if (rc < 0 && c.error) snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(c.error));
    if (rc < 0) goto out;

    /* Running again: headers and notes, the section header of a huge count, the final size, the name. */
    unsigned long long end = 0;
    if (elfcore_headers(&head, &dm, notes.n) < 0 || elfcore_trailer(&tail, &dm, notes.n, &end) < 0) {
        rc = -ENOMEM;
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if ((rc = write_all(c.out_fd, head.data, head.n, 0)) < 0 ||
        (rc = write_all(c.out_fd, notes.data, notes.n, (off_t)head.n)) < 0 ||
        (rc = write_all(c.out_fd, tail.data, tail.n, (off_t)end)) < 0 || ftruncate(c.out_fd, (off_t)(end + tail.n)) < 0) {
        if (rc == 0) rc = -errno;
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(-rc));
        goto out;
    }
    give_to_invoking_user(c.out_fd);
    if (syscall(SYS_renameat2, AT_FDCWD, tmp, AT_FDCWD, o->path, 1 /* RENAME_NOREPLACE */) < 0) {
        rc = -errno;
        snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, o->path, strerror(errno));
        goto out;
    }
    tmp[0] = '\0';
    struct stat st;
    if (fstat(c.out_fd, &st) == 0) {
        r->apparent_bytes = (unsigned long long)st.st_size;
        r->allocated_bytes = (unsigned long long)st.st_blocks * 512ULL;
    }
    snprintf(r->path, sizeof r->path, "%s", o->path);
    r->threads = nthreads;
    r->bytes_read = c.read;
    r->bytes_written = c.written;
    r->total_ms = (clock_monotonic_seconds() - t0) * 1000.0;
out:
    finish_writes(&c, 0);
    if (stopped && !s.detached) ptrace_session_detach(&s, 0.5);
    ptrace_session_free(&s);
    if (c.out_fd >= 0) close(c.out_fd);
    if (tmp[0]) unlink(tmp); /* no partial file is ever left */
    if (c.pagemap_fd >= 0) close(c.pagemap_fd);
    if (c.mem_fd >= 0) close(c.mem_fd);
    for (int i = 0; i < SLOTS; i++) {
        free(c.slots[i].buf);
        free(c.slots[i].segs);
    }
    free(c.pm);
    free(c.iov);
    pthread_mutex_destroy(&c.lock);
    pthread_cond_destroy(&c.changed);
    for (int i = 0; i < nthreads; i++) arch_core_regs_free(&threads[i].regs);
    free(threads);
    free(proc.auxv);
    bytes_free(&notes);
    bytes_free(&head);
    bytes_free(&tail);
    dump_maps_free(&dm);
    return rc;
}
