/* The hotspot provider: JVMs, through the HotSpot attach mechanism (hotspot_attach: a forked helper per request)
 * with replies parsed by hotspot_parse. Stacks from `threaddump`, memstats from `jcmd GC.heap_info` (and the
 * version and uptime), GC from `jcmd GC.run` between two heap_info, the heap by class from
 * `jcmd GC.class_histogram [-all]`, CPU profiles as JFR recordings and heap dumps as .hprof.gz: those two the JVM
 * writes itself into a private directory (0700, the JVM's own) in its /tmp, and diagtop copies them back through
 * /proc/PID/root into a new 0600 file of the user who asked, then removes them.
 *
 * A reply with status 0 may still be a failure: each command's success is recognized by what it says ("Heap dump
 * file created", "Started recording"), anything else is an error with the JVM's words. Long commands get more
 * time than rq->timeout, in proportion to the process's resident memory (a heap dump of 4 GB takes a while). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collect/procstat.h"
#include "util/clock.h"
#include "util/fileio.h"
#include "util/text.h"
#include "hotspot_attach.h"
#include "hotspot_parse.h"
#include "hsperf.h"
#include "jfr_read.h"
#include "actions/runtimes/provider.h"
#include "util/saved_file.h"

#define NAME "hotspot"
#define LOCK_WAIT_STEP 0.01
#define LOCK_HOLDERS_MAX_HEAP (512LL << 20) /* threaddump -l walks the heap: above this, monitors' holders only */
#define JFR_MAX_BYTES (512u << 20) /* a recording decoded for its samples; a larger one is only saved */
#define JFR_PERIOD_NS 10000000LL   /* settings=profile samples each thread running Java code every 10 ms */
#define LIVE_STEP 5.0              /* seconds between two JFR.dump of a live view: each costs the JVM a flush */ /* a later step of one operation waits its turn behind another request */

/* ---- one exchange ---- */

static double rss_bytes(int pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/statm", pid);
    struct procstatm m;
    if (fileio_read_at(AT_FDCWD, path, buf, sizeof buf) <= 0 || procstat_parse_statm(buf, &m) < 0) return 0;
    return (double)m.resident * (double)sysconf(_SC_PAGESIZE);
}

/* The JVM's words, made safe to show, into err after a prefix. */
static void jvm_said(char *err, size_t errlen, const char *prefix, const char *text, size_t len)
{
    char line[256] = "";
    if (!hotspot_parse_error(text, len, line, sizeof line)) { /* else its first line that says something */
        const char *s = text, *end = text + len;
        while (s < end && (*s == '\n' || *s == ' ')) s++;
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t n = (size_t)((nl ? nl : end) - s);
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line - 1 ? n : sizeof line - 1), s);
    }
    char clean[256];
    text_sanitize_display(clean, sizeof clean, line, strlen(line));
    snprintf(err, errlen, "%s: %s", prefix, clean[0] ? clean : "(no text)");
}

/* Takes the per-target lock: the first step of an operation fails at once when another request is in flight;
 * later steps (a JFR.stop after a recording) wait for their turn until the deadline. */
static int lock_target(int pid, int wait, double timeout, char *err, size_t errlen)
{
    double end = clock_monotonic_seconds() + timeout;
    for (;;) {
        int rc = provider_lock(pid, err, errlen);
        if (rc == 0 || !wait || clock_monotonic_seconds() >= end) return rc;
        clock_sleep(LOCK_WAIT_STEP, NULL);
    }
}

/* Checks the JVM (again: it may have gone, or its listener come up), sends one request and checks the status
 * line. cancel NULL: a clean-up step that must run even after a cancel. */
static int exchange(int pid, const char *cmd, const char *arg, double timeout, const volatile sig_atomic_t *cancel,
                    int wait_lock, struct hotspot_reply *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    struct hotspot_target t;
    int rc = hotspot_attach_check(pid, &t, err, errlen);
    if (rc < 0) return rc;
    if ((rc = lock_target(pid, wait_lock, timeout, err, errlen)) < 0) return rc;
    rc = hotspot_attach_request(&t, cmd, arg, timeout, cancel, r, err, errlen);
    provider_unlock(pid);
    if (rc < 0) return rc;
    if (r->status != 0) {
        char prefix[160];
        snprintf(prefix, sizeof prefix, "the JVM refused %s%s%s (status %d)", cmd, arg ? " " : "", arg ? arg : "",
                 r->status);
        if (r->status == 101) snprintf(err, errlen, "the JVM does not speak attach protocol 1 (status 101)");
        else jvm_said(err, errlen, prefix, r->text, r->len);
        hotspot_reply_free(r);
        return -EIO;
    }
    return 0;
}

/* A jcmd whose success the JVM says with `marker` (NULL: with no error line in its text). */
static int jcmd(int pid, const char *line, const char *marker, double timeout, const volatile sig_atomic_t *cancel,
                int wait_lock, struct hotspot_reply *r, char *err, size_t errlen)
{
    int rc = exchange(pid, "jcmd", line, timeout, cancel, wait_lock, r, err, errlen);
    if (rc < 0) return rc;
    char dummy[8];
    if (marker ? !memmem(r->text, r->len, marker, strlen(marker)) : hotspot_parse_error(r->text, r->len, dummy, sizeof dummy)) {
        char prefix[160];
        snprintf(prefix, sizeof prefix, "jcmd %s failed", line);
        jvm_said(err, errlen, prefix, r->text, r->len);
        hotspot_reply_free(r);
        return -EIO;
    }
    return 0;
}

static void set_provider(char *dst, size_t n) { snprintf(dst, n, "%s", NAME); }

/* ---- probe, stack, memstats, gc, heap ---- */

static int hs_probe(int pid, char *why, size_t whylen)
{
    struct hotspot_target t;
    return hotspot_attach_check(pid, &t, why, whylen);
}

/* The Java heap in use and committed, from the JVM's hsperfdata (what jstat reads; no attach, no request).
 * Returns 1 when known. */
static int heap_sizes(int pid, long long *used, long long *committed)
{
    struct hotspot_target t;
    char why[256];
    unsigned char *perf = NULL;
    size_t n = 0;
    if (hotspot_attach_check(pid, &t, why, sizeof why) == 0) perf = hsperf_read(pid, t.nspid, t.uid, &n);
    int known = perf && hsperf_heap(perf, n, used, committed) == 0;
    free(perf);
    return known;
}

static int hs_stack(const struct provider_request *rq, struct rt_stack *out, char *err, size_t errlen)
{
    struct hotspot_reply r;
    /* -l names the holders of java.util.concurrent locks, but the JVM finds them by walking its whole heap at a
     * safepoint: asked for only while that walk is short. */
    long long used, committed;
    int locks = heap_sizes(rq->pid, &used, &committed) && used <= LOCK_HOLDERS_MAX_HEAP;
    int rc = exchange(rq->pid, "threaddump", locks ? "-l" : NULL, rq->timeout, rq->cancel, 0, &r, err, errlen);
    if (rc < 0) return rc;
    out->lock_holders = locks;
    set_provider(out->provider, sizeof out->provider);
    out->pid = rq->pid;
    out->ms = r.ms;
    if ((rc = hotspot_parse_threaddump(r.text, r.len, out)) < 0) {
        if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
        else jvm_said(err, errlen, "the JVM's reply is not a thread dump", r.text, r.len);
        rt_stack_free(out);
    }
    hotspot_reply_free(&r);
    return rc;
}

/* GC.heap_info into out (may be NULL: only the sums). */
static int heap_info(const struct provider_request *rq, int wait_lock, struct rt_fields *out, long long *used,
                     char *err, size_t errlen)
{
    struct hotspot_reply r;
    int rc = jcmd(rq->pid, "GC.heap_info", NULL, rq->timeout, rq->cancel, wait_lock, &r, err, errlen);
    if (rc < 0) return rc;
    struct rt_fields scratch = {0};
    rc = hotspot_parse_heap_info(r.text, r.len, out ? out : &scratch, used, NULL);
    if (rc == -EPROTO) jvm_said(err, errlen, "GC.heap_info said nothing diagtop reads", r.text, r.len);
    else if (rc < 0) snprintf(err, errlen, "out of memory");
    rt_fields_free(&scratch);
    hotspot_reply_free(&r);
    return rc;
}

/* VM.version's two lines and VM.uptime, section "runtime"; best effort (the heap is what memstats is about). */
static void runtime_info(const struct provider_request *rq, struct rt_fields *out)
{
    struct hotspot_reply r;
    char err[256];
    if (jcmd(rq->pid, "VM.version", NULL, rq->timeout, rq->cancel, 1, &r, err, sizeof err) == 0) {
        const char *s = r.text, *end = r.text + r.len;
        for (int i = 0; i < 4 && s < end; i++) {
            const char *nl = memchr(s, '\n', (size_t)(end - s));
            size_t n = (size_t)((nl ? nl : end) - s);
            char line[256];
            snprintf(line, sizeof line, "%.*s", (int)(n < 255 ? n : 255), s);
            if (!strncmp(line, "JDK ", 4)) rt_fields_add_text(out, "runtime", "jdk", line + 4);
            else if (strstr(line, " VM version ")) rt_fields_add_text(out, "runtime", "vm", line);
            s += n + (nl ? 1 : 0);
        }
        hotspot_reply_free(&r);
    }
    if (jcmd(rq->pid, "VM.uptime", NULL, rq->timeout, rq->cancel, 1, &r, err, sizeof err) == 0) {
        char *end;
        double secs = strtod(r.text, &end); /* "558.459 s" */
        if (end != r.text && secs >= 0 && secs < 1e9 && !strncmp(end, " s", 2))
            rt_fields_add_u64(out, "runtime", "uptime", RT_NANOSECONDS, (unsigned long long)(secs * 1e9));
        hotspot_reply_free(&r);
    }
}

static int hs_memstats(const struct provider_request *rq, struct rt_fields *out, char *err, size_t errlen)
{
    set_provider(out->provider, sizeof out->provider);
    long long used;
    int rc = heap_info(rq, 0, out, &used, err, errlen);
    if (rc < 0) {
        rt_fields_free(out);
        return rc;
    }
    runtime_info(rq, out);
    return 0;
}

static int hs_gc(const struct provider_request *rq, struct rt_gc *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    set_provider(out->provider, sizeof out->provider);
    out->heap_before = out->heap_after = -1;
    if (rq->set_gc_percent) {
        snprintf(err, errlen, "a JVM has no GC percentage to set (that is Go's GOGC)");
        return -ENOTSUP;
    }
    char ignored[256];
    long long used = -1;
    int rc = heap_info(rq, 0, NULL, &used, err, errlen);
    if (rc < 0 && rc != -EPROTO) return rc; /* an unreadable heap_info only costs the figure */
    out->heap_before = used;
    struct hotspot_reply r;
    double timeout = rq->timeout + rss_bytes(rq->pid) / 200e6; /* a full collection of a large heap */
    if ((rc = jcmd(rq->pid, "GC.run", NULL, timeout, rq->cancel, 1, &r, err, errlen)) < 0) return rc;
    out->ms = r.ms;
    const char *s = r.text;
    size_t n = r.len;
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' ')) n--;
    char said[256];
    text_sanitize_display(said, sizeof said, s, n);
    hotspot_reply_free(&r);
    if (!(out->message = strdup(n ? said : "full collection requested (System.gc(), jcmd GC.run)"))) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    used = -1;
    if (heap_info(rq, 1, NULL, &used, ignored, sizeof ignored) == 0) out->heap_after = used;
    return 0;
}

/* The heap a full GC walks, from hsperfdata; else its RSS. */
static void hs_gc_pause(int pid, char *what, size_t whatlen)
{
    char used_s[32], committed_s[32];
    long long used, committed;
    if (heap_sizes(pid, &used, &committed)) {
        text_format_bytes(used_s, sizeof used_s, used);
        text_format_bytes(committed_s, sizeof committed_s, committed);
        snprintf(what, whatlen, "heap %s used, %s committed", used_s, committed_s);
    } else {
        text_format_bytes(used_s, sizeof used_s, (long long)rss_bytes(pid));
        snprintf(what, whatlen, "RSS %s, heap size unknown", used_s);
    }
}

static int hs_heap(const struct provider_request *rq, struct rt_heap *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    /* -all: every object, reachable or not, with no GC; without it the JVM runs a full GC first. */
    const char *line = rq->live ? "GC.class_histogram" : "GC.class_histogram -all";
    double timeout = rq->timeout + rss_bytes(rq->pid) / 200e6;
    struct hotspot_reply r;
    int rc = exchange(rq->pid, "jcmd", line, timeout, rq->cancel, 0, &r, err, errlen);
    if (rc < 0) return rc;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    set_provider(out->provider, sizeof out->provider);
    snprintf(out->kind, sizeof out->kind, "class histogram");
    out->pid = rq->pid;
    out->taken_at = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
    if ((rc = hotspot_parse_histogram(r.text, r.len, out)) < 0) {
        if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
        else jvm_said(err, errlen, "the JVM's reply is not a class histogram", r.text, r.len);
        rt_heap_free(out);
    } else {
        rt_heap_finish(out);
    }
    hotspot_reply_free(&r);
    return rc;
}

/* ---- files the JVM writes: a private directory in its /tmp, and the copy back ---- */

static void random_hex(char *buf, size_t n) /* n-1 hex digits */
{
    unsigned char raw[32];
    size_t want = (n - 1 + 1) / 2 < sizeof raw ? (n - 1 + 1) / 2 : sizeof raw;
    if (getrandom(raw, want, 0) != (ssize_t)want) { /* not expected; still unpredictable enough for a name */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        for (size_t i = 0; i < want; i++) raw[i] = (unsigned char)((ts.tv_nsec >> (i % 8)) ^ (getpid() << i) ^ i);
    }
    for (size_t i = 0; i + 1 < n; i++) buf[i] = "0123456789abcdef"[(raw[i / 2] >> (i % 2 ? 0 : 4)) & 15];
    buf[n - 1] = '\0';
}

/* /tmp/diagtop-jvm-<random> inside the JVM's mount namespace, 0700 and the JVM's: the JVM writes its file there (JFR
 * writes 0644, and nobody else should read a recording meanwhile); diagtop reads it through its descriptors. */
struct jvm_dir {
    int tmpfd, dirfd;
    char name[32];     /* in the JVM's /tmp */
    char path[64];     /* as the JVM sees it */
    const char *file;  /* the file the JVM is asked to write, in the directory */
};

static int jvm_dir_make(int pid, const char *file, struct jvm_dir *d, char *err, size_t errlen)
{
    struct hotspot_target t;
    int rc = hotspot_attach_check(pid, &t, err, errlen);
    if (rc < 0) return rc;
    char path[64], hex[17];
    d->dirfd = -1;
    d->file = file;
    snprintf(path, sizeof path, "/proc/%d/root/tmp", pid);
    if ((d->tmpfd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        rc = -errno;
        snprintf(err, errlen, "cannot open the JVM's /tmp (%s): %s", path, strerror(errno));
        return rc;
    }
    random_hex(hex, sizeof hex);
    snprintf(d->name, sizeof d->name, "diagtop-jvm-%s", hex);
    snprintf(d->path, sizeof d->path, "/tmp/%s/%s", d->name, file);
    if (mkdirat(d->tmpfd, d->name, 0700) < 0) {
        rc = -errno;
        snprintf(err, errlen, "cannot create a directory in the JVM's /tmp: %s", strerror(errno));
        close(d->tmpfd);
        return rc;
    }
    if ((d->dirfd = openat(d->tmpfd, d->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
        (geteuid() == 0 && (t.uid != 0 || t.gid != 0) && fchown(d->dirfd, t.uid, t.gid) < 0)) {
        rc = -errno;
        snprintf(err, errlen, "cannot prepare /tmp/%s for the JVM: %s", d->name, strerror(errno));
        if (d->dirfd >= 0) close(d->dirfd);
        unlinkat(d->tmpfd, d->name, AT_REMOVEDIR);
        close(d->tmpfd);
        return rc;
    }
    return 0;
}

/* Removes what the JVM wrote and the directory. A JVM still writing (after a timeout) keeps its open file, not
 * the name; if it creates the file after this, the directory stays, and the caller says so. */
static int jvm_dir_remove(struct jvm_dir *d)
{
    unlinkat(d->dirfd, d->file, 0);
    int gone = unlinkat(d->tmpfd, d->name, AT_REMOVEDIR) == 0 || errno == ENOENT;
    close(d->dirfd);
    close(d->tmpfd);
    return gone;
}

/* The file the JVM wrote: a regular file of its own, opened without following links or blocking on a FIFO. */
static int jvm_dir_open(const struct jvm_dir *d, int pid, unsigned long long *size, char *err, size_t errlen)
{
    struct hotspot_target t;
    int rc = hotspot_attach_check(pid, &t, err, errlen);
    if (rc < 0) return rc;
    int fd = openat(d->dirfd, d->file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        rc = -errno;
        snprintf(err, errlen, "the JVM said it wrote %s, but it cannot be opened: %s", d->path, strerror(errno));
        if (fd >= 0) close(fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode) || st.st_uid != t.uid || st.st_nlink != 1) {
        close(fd);
        snprintf(err, errlen, "%s is not a file the JVM wrote (type, owner or links): not copied", d->path);
        return -EPERM;
    }
    *size = (unsigned long long)st.st_size;
    return fd;
}

/* A new file for the user: 0600, O_EXCL|O_NOFOLLOW under a temporary name, renamed without replacing anything,
 * given to the invoking user under sudo (as dump.c does for cores). */
struct saved {
    char tmp[4200];
    int fd;
};

/* dir of the final file: exact's directory, or save_dir, or ".". */
static int saved_open(const struct provider_request *rq, struct saved *s, char *err, size_t errlen)
{
    char dir[4096], hex[13];
    if (rq->save_path) {
        snprintf(dir, sizeof dir, "%s", rq->save_path);
        char *slash = strrchr(dir, '/');
        if (!slash) snprintf(dir, sizeof dir, ".");
        else if (slash == dir) dir[1] = '\0';
        else *slash = '\0';
        struct stat st;
        if (lstat(rq->save_path, &st) == 0) {
            snprintf(err, errlen, "%s exists: diagtop never overwrites a file", rq->save_path);
            return -EEXIST;
        }
    } else {
        snprintf(dir, sizeof dir, "%s", rq->save_dir && *rq->save_dir ? rq->save_dir : ".");
    }
    random_hex(hex, sizeof hex);
    snprintf(s->tmp, sizeof s->tmp, "%s/.diagtop-%s.partial", dir, hex);
    if ((s->fd = fileio_create_private(AT_FDCWD, s->tmp, O_WRONLY)) < 0) {
        int e = -s->fd;
        snprintf(err, errlen, "cannot create a file in %s: %s", dir, strerror(e));
        s->tmp[0] = '\0';
        s->fd = -1;
        return -e;
    }
    return 0;
}

static void saved_abort(struct saved *s)
{
    if (s->fd >= 0) close(s->fd);
    if (s->tmp[0]) unlink(s->tmp); /* no partial file is ever left */
    s->fd = -1;
    s->tmp[0] = '\0';
}

/* Copies src (size bytes expected) into the temporary file, checking cancel; progress from..to. */
static int saved_copy(struct saved *s, int src, unsigned long long size, const struct provider_request *rq,
                      double from, double to, unsigned long long *copied, char *err, size_t errlen)
{
    size_t bufsz = 1 << 20;
    char *buf = malloc(bufsz);
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    int rc = 0;
    *copied = 0;
    for (;;) {
        if (rq->cancel && *rq->cancel) {
            snprintf(err, errlen, "cancelled");
            rc = -ECANCELED;
            break;
        }
        ssize_t n = read(src, buf, bufsz);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            rc = -errno;
            snprintf(err, errlen, "cannot read the JVM's file: %s", strerror(errno));
            break;
        }
        if (n == 0) break;
        if ((rc = fileio_write_full(s->fd, buf, (size_t)n)) < 0) {
            snprintf(err, errlen, "cannot write %s: %s", s->tmp, strerror(-rc));
            break;
        }
        *copied += (unsigned long long)n;
        if (rq->progress && size)
            rq->progress(rq->progress_arg, from + (to - from) * (double)(*copied < size ? *copied : size) / (double)size);
    }
    free(buf);
    return rc;
}

static int saved_commit(struct saved *s, const struct provider_request *rq, const char *kind, const char *suffix,
                        char **path, char *err, size_t errlen)
{
    if (fsync(s->fd) < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot write %s: %s", s->tmp, strerror(e));
        return -e;
    }
    char name[4300], dir[4096];
    snprintf(dir, sizeof dir, "%s", rq->save_dir && *rq->save_dir ? rq->save_dir : ".");
    int rc = saved_file_place(s->fd, s->tmp, rq->save_path, rq->pid, dir, kind, suffix, name, sizeof name);
    if (rc < 0) {
        snprintf(err, errlen, "cannot rename %s to %s: %s%s", s->tmp, name, strerror(-rc),
                 rc == -EEXIST ? " (diagtop never overwrites a file)" : "");
        return rc;
    }
    s->tmp[0] = '\0';
    close(s->fd);
    s->fd = -1;
    if (!(*path = strdup(name))) {
        snprintf(err, errlen, "out of memory (the file is saved as %s)", name);
        return -ENOMEM;
    }
    return 0;
}

/* The JVM's file copied into the user's new one; both ends' clean-up is the caller's. */
static int fetch(const struct provider_request *rq, const struct jvm_dir *d, struct saved *s, const char *kind,
                 const char *suffix, double from, char **path, unsigned long long *bytes, char *err, size_t errlen)
{
    unsigned long long size;
    int src = jvm_dir_open(d, rq->pid, &size, err, errlen);
    if (src < 0) return src;
    int rc = saved_copy(s, src, size, rq, from, 1.0, bytes, err, errlen);
    close(src);
    if (rc == 0) rc = saved_commit(s, rq, kind, suffix, path, err, errlen);
    return rc;
}

static void progress(const struct provider_request *rq, double f)
{
    if (rq->progress) rq->progress(rq->progress_arg, f);
}

/* ---- heap dump ---- */

static int hs_heap_dump(const struct provider_request *rq, struct rt_file *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    set_provider(out->provider, sizeof out->provider);
    double t0 = clock_monotonic_seconds();
    struct saved s = {.fd = -1};
    struct jvm_dir d;
    int rc = saved_open(rq, &s, err, errlen); /* first: no point in a dump that cannot be kept */
    if (rc < 0) return rc;
    if ((rc = jvm_dir_make(rq->pid, "heap.hprof.gz", &d, err, errlen)) < 0) {
        saved_abort(&s);
        return rc;
    }
    progress(rq, 0.0);
    char line[160];
    snprintf(line, sizeof line, "GC.heap_dump -gz=1 %s", d.path);
    double timeout = rq->timeout + rss_bytes(rq->pid) / 50e6; /* the JVM walks, writes and compresses it all */
    struct hotspot_reply r;
    rc = jcmd(rq->pid, line, "Heap dump file created", timeout, rq->cancel, 0, &r, err, errlen);
    if (rc == 0) {
        hotspot_reply_free(&r);
        progress(rq, 0.5);
        rc = fetch(rq, &d, &s, "heap", ".hprof.gz", 0.5, &out->path, &out->bytes, err, errlen);
    }
    saved_abort(&s);
    if (!jvm_dir_remove(&d) && rc < 0) {
        size_t n = strlen(err);
        snprintf(err + n, errlen - n, " (the JVM may still be writing /tmp/%s: remove it when it is done)", d.name);
    }
    if (rc < 0) {
        rt_file_free(out);
        return rc;
    }
    out->ms = (clock_monotonic_seconds() - t0) * 1000.0;
    progress(rq, 1.0);
    return 0;
}

/* ---- CPU profile: a JFR recording ---- */

/* A recording's bytes decoded into a report of pid (our reader, jfr_read); the reason into err. */
static int decode(int pid, char *data, size_t n, struct cpu_report *rep, char *err, size_t errlen)
{
    int rc = jfr_read_report(data, n, JFR_PERIOD_NS, rep, err, errlen);
    if (rc < 0) return rc;
    rep->pid = pid;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    ssize_t k = fileio_read_at(AT_FDCWD, path, rep->comm, sizeof rep->comm);
    if (k > 0 && rep->comm[k - 1] == '\n') rep->comm[k - 1] = '\0';
    if (k <= 0) rep->comm[0] = '\0';
    return 0;
}

/* The JVM-side file as it is now (its owner and type checked), decoded. */
static int read_jvm_file(const struct jvm_dir *d, int pid, struct cpu_report *rep, char *err, size_t errlen)
{
    unsigned long long size;
    int fd = jvm_dir_open(d, pid, &size, err, errlen);
    if (fd < 0) return fd;
    char *data = size <= JFR_MAX_BYTES ? malloc(size + 1) : NULL;
    ssize_t n = data ? fileio_pread_all(fd, data, size + 1) : -1; /* it keeps a byte for a NUL */
    int rc;
    if (!data) snprintf(err, errlen, size > JFR_MAX_BYTES ? "the recording is larger than %u MiB" : "out of memory",
                        JFR_MAX_BYTES >> 20);
    if (!data) rc = size > JFR_MAX_BYTES ? -EFBIG : -ENOMEM;
    else if (n < 0) rc = (int)n, snprintf(err, errlen, "cannot read the recording: %s", strerror((int)-n));
    else rc = decode(pid, data, (size_t)n, rep, err, errlen);
    free(data);
    close(fd);
    return rc;
}

/* The saved copy decoded into the top functions (in samples); what went wrong into out->note: the file is saved
 * whatever it holds. */
static void rows_from_saved(int pid, const char *path, struct rt_profile *out)
{
    ssize_t n;
    char *data = fileio_read_file(AT_FDCWD, path, JFR_MAX_BYTES + 1, &n);
    if (!data) {
        snprintf(out->note, sizeof out->note, "the recording could not be read back: %s", strerror(errno));
        return;
    }
    struct cpu_report rep;
    char err[256];
    int rc = (size_t)n > JFR_MAX_BYTES ? -EFBIG : decode(pid, data, (size_t)n, &rep, err, sizeof err);
    free(data);
    if (rc == -EFBIG) snprintf(out->note, sizeof out->note, "the recording is larger than %u MiB: not decoded",
                               JFR_MAX_BYTES >> 20);
    else if (rc < 0) snprintf(out->note, sizeof out->note, "%s", err);
    if (rc < 0) return;
    if (rt_profile_from_report(&rep, 1, out) < 0) snprintf(out->note, sizeof out->note, "out of memory");
    else if (!rep.samples)
        snprintf(out->note, sizeof out->note, "no execution samples: no thread ran Java code while it recorded");
    cpu_report_free(&rep);
}

/* JFR.start, the recording's time (with a JFR.dump read every few seconds for a live view), a last JFR.dump copied
 * into the user's new file, JFR.stop always. live: a cancel ends the recording early and keeps what was taken (the
 * report's way), else it fails the request. Fills *saved_path and *seconds. */
static int record(const struct provider_request *rq, double seconds, int live, char **saved_path, double *took,
                  char *err, size_t errlen)
{
    double slow = rq->timeout + 20.0; /* JFR's first start: ~0.5-2 s */
    struct saved s = {.fd = -1};
    struct jvm_dir d;
    int rc = saved_open(rq, &s, err, errlen);
    if (rc < 0) return rc;
    if ((rc = jvm_dir_make(rq->pid, "cpu.jfr", &d, err, errlen)) < 0) {
        saved_abort(&s);
        return rc;
    }
    struct provider_request last = *rq; /* the last steps run also after a cancel that keeps what was taken */
    if (live) last.cancel = NULL;
    char name[64], line[256], hex[9];
    random_hex(hex, sizeof hex);
    snprintf(name, sizeof name, "diagtop%d-%s", rq->pid, hex); /* ours alone: names need not be unique in JFR */
    snprintf(line, sizeof line, "JFR.start name=%s settings=profile", name);
    struct hotspot_reply r;
    rc = jcmd(rq->pid, line, "Started recording", slow, rq->cancel, 0, &r, err, errlen);
    int started = rc == 0 || rc == -ECANCELED || rc == -ETIMEDOUT; /* it may have started all the same */
    if (rc == 0) hotspot_reply_free(&r);
    double t0 = clock_monotonic_seconds(), step = rq->live_seconds > LIVE_STEP ? rq->live_seconds : LIVE_STEP;
    double next = t0 + step;
    progress(rq, 0.0);
    while (rc == 0) {
        double now = clock_monotonic_seconds(), el = now - t0;
        if (el >= seconds) break;
        if (rq->cancel && *rq->cancel) {
            if (live) break;
            snprintf(err, errlen, "cancelled");
            rc = -ECANCELED;
            break;
        }
        if (live && rq->on_report && now >= next) { /* a live view: everything so far; a failure only costs it */
            char ignored[256];
            snprintf(line, sizeof line, "JFR.dump name=%s filename=%s", name, d.path);
            unlinkat(d.dirfd, d.file, 0);
            struct cpu_report *rep = calloc(1, sizeof *rep);
            if (rep && jcmd(rq->pid, line, "Dumped recording", slow, rq->cancel, 1, &r, ignored, sizeof ignored) == 0) {
                hotspot_reply_free(&r);
                if (read_jvm_file(&d, rq->pid, rep, ignored, sizeof ignored) == 0) {
                    rep->seconds = clock_monotonic_seconds() - t0;
                    rq->on_report(rq->report_arg, rep);
                    rep = NULL;
                }
            }
            free(rep);
            next = clock_monotonic_seconds() + step;
            continue;
        }
        progress(rq, 0.9 * el / seconds);
        double wait = seconds - el < 0.1 ? seconds - el : 0.1;
        clock_sleep(wait, rq->cancel);
    }
    *took = clock_monotonic_seconds() - t0;
    if (rc == 0) {
        snprintf(line, sizeof line, "JFR.dump name=%s filename=%s", name, d.path);
        unlinkat(d.dirfd, d.file, 0);
        rc = jcmd(rq->pid, line, "Dumped recording", slow + rss_bytes(rq->pid) / 200e6, last.cancel, 1, &r, err,
                  errlen);
        if (rc == 0) hotspot_reply_free(&r);
    }
    if (started) { /* always, also after a cancel: a recording left running would cost the JVM until it exits */
        char ignored[256];
        snprintf(line, sizeof line, "JFR.stop name=%s", name);
        if (jcmd(rq->pid, line, "Stopped recording", rq->timeout + 10.0, NULL, 1, &r, ignored, sizeof ignored) == 0)
            hotspot_reply_free(&r);
    }
    if (rc == 0) {
        unsigned long long bytes;
        progress(rq, 0.95);
        rc = fetch(&last, &d, &s, "cpu", ".jfr", 0.95, saved_path, &bytes, err, errlen);
    }
    saved_abort(&s);
    jvm_dir_remove(&d);
    if (rc == 0) progress(rq, 1.0);
    return rc;
}

static int hs_profile(const struct provider_request *rq, struct rt_profile *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    set_provider(out->provider, sizeof out->provider);
    snprintf(out->format, sizeof out->format, "jfr");
    snprintf(out->unit, sizeof out->unit, "samples"); /* JFR's: a thread in Java code, about every 10 ms */
    int rc = record(rq, rq->seconds > 0 ? rq->seconds : 30.0, 0, &out->saved_path, &out->seconds, err, errlen);
    if (rc == 0) rows_from_saved(rq->pid, out->saved_path, out);
    if (rc < 0) rt_profile_free(out);
    return rc;
}

/* The recording as a report like diagtop's sampler's (every stack, per thread: top functions, callers, flame
 * graphs), live while it records; the .jfr saved as hs_profile saves it. hz: JFR's own period (10 ms) stands. */
static int hs_profile_report(const struct provider_request *rq, int hz, struct cpu_report *out, char *err,
                             size_t errlen)
{
    (void)hz;
    memset(out, 0, sizeof *out);
    char *path = NULL;
    double took = 0;
    int rc = record(rq, rq->seconds > 0 ? rq->seconds : 10.0, 1, &path, &took, err, errlen);
    if (rc < 0) return rc;
    ssize_t n;
    char *data = fileio_read_file(AT_FDCWD, path, JFR_MAX_BYTES + 1, &n);
    if (!data) {
        rc = -errno;
        snprintf(err, errlen, "cannot read back %s: %s", path, strerror(errno));
    } else if ((size_t)n > JFR_MAX_BYTES) {
        rc = -EFBIG;
        snprintf(err, errlen, "%s is larger than %u MiB: not decoded", path, JFR_MAX_BYTES >> 20);
    } else {
        rc = decode(rq->pid, data, (size_t)n, out, err, errlen);
    }
    free(data);
    if (rc < 0) {
        free(path);
        return rc;
    }
    out->seconds = took;
    out->saved_path = path;
    return 0;
}

const struct provider hotspot_provider = {
    .name = NAME,
    .speaks = "Java",
    .probe = hs_probe,
    .stack = hs_stack,
    .memstats = hs_memstats,
    .gc = hs_gc,
    .gc_pause = hs_gc_pause,
    .heap = hs_heap,
    .profile = hs_profile,
    .profile_report = hs_profile_report,
    .live_report = 1,
    .heap_dump = hs_heap_dump,
};
