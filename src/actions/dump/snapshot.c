#include "snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/fileio.h"

#define CLONE_FLAGS (CLONE_FILES | CLONE_FS) /* exit signal 0, in the low byte */
#define SCAN_MAX (64ULL << 20)               /* code read at most looking for the sequences */
#define WAIT_NS 20000                        /* between polls for a stop: each step takes microseconds */

/* Tests kill diagtop at a named step (tests/e2e/dump_snapshot_kill.sh): DIAGTOP_TEST_SNAPSHOT_KILL=call-step,
 * e.g. clone-entry or reap-restored. */
static void test_point(const char *call, const char *step)
{
    const char *at = getenv("DIAGTOP_TEST_SNAPSHOT_KILL");
    size_t n = strlen(call);
    if (at && strncmp(at, call, n) == 0 && at[n] == '-' && strcmp(at + n + 1, step) == 0) raise(SIGKILL);
}

/* ---- before the stop ---- */

static int status_int(const char *status, const char *field)
{
    const char *p = strstr(status, field);
    return p ? atoi(p + strlen(field)) : -1;
}

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    ssize_t n = write(fd, text, strlen(text));
    int e = n < 0 ? errno : 0;
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -(e ? e : EIO);
}

/* PTRACE_O_SUSPEND_SECCOMP needs CAP_SYS_ADMIN and a tracer without a filter of its own. */
static int can_suspend_seccomp(void)
{
    char *me = fileio_read_proc(AT_FDCWD, getpid(), "status", 16384, NULL);
    int mine = me ? status_int(me, "\nSeccomp:") : -1;
    free(me);
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof d);
    int admin = syscall(SYS_capget, &h, d) == 0 && (d[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32)));
    return mine == 0 && admin;
}

struct code_map {
    unsigned long long start, end;
};

static int by_size(const void *a, const void *b)
{
    const struct code_map *x = a, *y = b;
    unsigned long long lx = x->end - x->start, ly = y->end - y->start;
    return lx < ly ? -1 : lx > ly;
}

/* The sequences, in the program's read-only code (file-backed r-x mappings: not JIT code that may change), the
 * smallest mappings first (ld.so has both). */
static int find_sites(int pid, const struct code_map *maps, int n, struct arch_inject_sites *s)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    enum { CHUNK = 1 << 20, OVERLAP = 16 };
    unsigned char *buf = malloc(CHUNK + OVERLAP);
    unsigned long long scanned = 0;
    for (int i = 0; buf && i < n && scanned < SCAN_MAX && !(s->at[0] && s->at[1]); i++)
        for (unsigned long long a = maps[i].start; a < maps[i].end && !(s->at[0] && s->at[1]); a += CHUNK) {
            size_t len = (size_t)(maps[i].end - a < CHUNK + OVERLAP ? maps[i].end - a : CHUNK + OVERLAP);
            ssize_t got = pread(fd, buf, len, (off_t)a);
            if (got <= 0) break;
            arch_inject_scan(buf, (size_t)got, a, s);
            scanned += (unsigned long long)got;
        }
    free(buf);
    close(fd);
    return s->at[0] && s->at[1] ? 0 : -ENOENT;
}

/* [stack] and the code mappings, from /proc/PID/maps. */
static int read_maps(int pid, struct snapshot_plan *p, struct code_map **code, int *ncode)
{
    char path[64], line[4352];
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    FILE *f = fopen(path, "re");
    if (!f) return -errno;
    int cap = 0;
    *code = NULL;
    *ncode = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long a, b;
        char perms[8] = "";
        int name = 0;
        if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %n", &a, &b, perms, &name) < 3) continue;
        const char *file = name ? line + name : "";
        if (strncmp(file, "[stack]", 7) == 0) p->stack_lo = a, p->stack_hi = b;
        if (strcmp(perms, "r-xp") != 0 || file[0] != '/' || strstr(file, " (deleted)")) continue;
        if (*ncode == cap) {
            cap = cap ? cap * 2 : 32;
            struct code_map *m = realloc(*code, (size_t)cap * sizeof *m);
            if (!m) break;
            *code = m;
        }
        (*code)[(*ncode)++] = (struct code_map){a, b};
    }
    fclose(f);
    return 0;
}

int snapshot_prepare(int pid, struct snapshot_plan *p, char *why, size_t whylen)
{
    memset(p, 0, sizeof *p);
    p->pid = pid;
    char *status = fileio_read_proc(AT_FDCWD, pid, "status", 16384, NULL);
    if (!status) {
        snprintf(why, whylen, "no process %d", pid);
        return -ESRCH;
    }
    const char *state = strstr(status, "\nState:\t");
    int stopped = state && state[8] == 'T';
    int seccomp = status_int(status, "\nSeccomp:");
    /* A shadow stack would refuse the site's `ret` into the rt_sigreturn sequence (kernels with user shadow
     * stacks list it here). */
    char *features = strstr(status, "\nx86_Thread_features:");
    if (features && strchr(features + 1, '\n')) *strchr(features + 1, '\n') = '\0';
    int shstk = features && strstr(features, "shstk");
    free(status);
    if (stopped) {
        snprintf(why, whylen, "the process is stopped (SIGSTOP): it is copied as it is and left stopped");
        return -EINVAL;
    }
    if (shstk) {
        snprintf(why, whylen, "the main thread has a shadow stack, which the recovery frame cannot satisfy");
        return -EINVAL;
    }
    if (seccomp == 1) {
        snprintf(why, whylen, "the process runs under strict seccomp: any other call kills it");
        return -EPERM;
    }
    if (seccomp == 2) {
        if (!can_suspend_seccomp()) {
            snprintf(why, whylen,
                     "the process has a seccomp filter that diagtop cannot suspend (needs CAP_SYS_ADMIN and no filter "
                     "of its own): the injected clone could kill it");
            return -EPERM;
        }
        p->suspend_seccomp = 1;
    }
    struct code_map *code = NULL;
    int ncode = 0, rc = read_maps(pid, p, &code, &ncode);
    if (rc < 0) {
        snprintf(why, whylen, "cannot read /proc/%d/maps: %s", pid, strerror(-rc));
        free(code);
        return rc;
    }
    if (!p->stack_lo) {
        free(code);
        snprintf(why, whylen, "the process has no [stack] mapping for the recovery frame");
        return -ENOENT;
    }
    qsort(code, (size_t)ncode, sizeof *code, by_size);
    rc = find_sites(pid, code, ncode, &p->sites);
    free(code);
    if (rc == -ENOENT)
        snprintf(why, whylen, "no `syscall; ret` and rt_sigreturn sequences in the process's code to inject a call safely");
    else if (rc < 0)
        snprintf(why, whylen, "cannot read the code of %d: %s", pid, strerror(-rc));
    return rc;
}

/* ---- one system call run by a stopped thread ---- */

struct inject {
    const char *name; /* "clone" or "reap", for the tests' kill points */
    int pid, tid;
    const struct snapshot_plan *plan;
    struct arch_regs saved; /* as read at its stop */
    unsigned long long sigmask;
    long nr;
    unsigned long long args[6];
    int copy_sp_arg; /* the argument that gets the copy's exit frame as stack pointer (clone's newsp), or -1 */
    int options;  /* ptrace options while it runs */
    int armed;    /* its registers were changed: until restored, its way out is the recovery frame */
    long result;
    int child;    /* PTRACE_EVENT_CLONE's pid */
    void (*during)(void *arg); /* run while the call runs, before its first stop is waited for */
    void *during_arg;
    struct ptrace_session *others; /* a clone's session: its other threads run again once the copy exists */
    int sigstop;  /* a SIGSTOP met meanwhile, sent again once restored */
    double deadline;
    double entered; /* when the call started (entry stop) */
};

/* The sites still hold the sequences found before the stop (the library was not unmapped meanwhile). */
static int inject_check_sites(const struct inject *in, int mem_fd)
{
    for (int k = 0; k < ARCH_SITES; k++) {
        size_t len;
        const unsigned char *want = arch_inject_site_bytes((enum arch_site)k, &len);
        unsigned char got[32];
        if (pread(mem_fd, got, len, (off_t)in->plan->sites.at[k]) != (ssize_t)len || memcmp(got, want, len) != 0)
            return -ESTALE;
    }
    return 0;
}

/* Waits for the thread's next stop, of the kind want accepts, up to the deadline. Between, with every signal
 * blocked, only SIGSTOP can be delivered: it is kept to be sent again; a group stop's report is resumed (the
 * kernel stops the thread again at detach). The call itself (tens of milliseconds for a clone of gigabytes) is
 * waited for without polling, whose wake-ups would take turns with the thread on a small machine: its stop
 * always comes, or the thread's death. */
enum stop_kind { STOP_SYSCALL, STOP_CLONE_OR_EXIT, STOP_EVENT };
static int inject_wait(struct inject *in, enum stop_kind want, int resume, int *status, char *err, size_t errlen)
{
    for (;;) {
        int st;
        pid_t r = waitpid(in->tid, &st, __WALL | (want == STOP_CLONE_OR_EXIT ? 0 : WNOHANG));
        if (r < 0 || (r > 0 && (WIFEXITED(st) || WIFSIGNALED(st)))) {
            snprintf(err, errlen, "thread %d exited during the injected call", in->tid);
            return -ESRCH;
        }
        if (r == 0) {
            if (clock_monotonic_seconds() > in->deadline) {
                snprintf(err, errlen, "thread %d did not come back from the injected call in time", in->tid);
                return -ETIMEDOUT;
            }
            struct timespec ts = {0, WAIT_NS};
            nanosleep(&ts, NULL);
            continue;
        }
        if (!WIFSTOPPED(st)) continue;
        int sig = WSTOPSIG(st), event = st >> 16;
        if ((want == STOP_SYSCALL && sig == (SIGTRAP | 0x80)) ||
            (want == STOP_CLONE_OR_EXIT && (event == PTRACE_EVENT_CLONE || sig == (SIGTRAP | 0x80))) ||
            (want == STOP_EVENT && event == PTRACE_EVENT_STOP)) {
            *status = st;
            return 0;
        }
        if (event == 0 && sig == SIGSTOP) in->sigstop = 1;
        else if (event == 0 && sig != (SIGTRAP | 0x80)) {
            /* A fault (SIGSEGV...) in the sites: should never happen; the signal is not delivered. */
            snprintf(err, errlen, "thread %d took signal %d during the injected call", in->tid, sig);
            return -EFAULT;
        }
        if (ptrace(resume, in->tid, 0, 0) < 0) {
            snprintf(err, errlen, "cannot resume thread %d: %s", in->tid, strerror(errno));
            return -errno;
        }
    }
}

/* 1. Options for the call (TRACECLONE so that the copy is born traced, and SUSPEND_SECCOMP where a filter
 * could refuse or punish it); never EXITKILL on the process's own thread. */
static int inject_options(struct inject *in, char *err, size_t errlen)
{
    if (ptrace(PTRACE_SETOPTIONS, in->tid, 0, (void *)(long)in->options) == 0) return 0;
    int e = errno;
    ptrace(PTRACE_SETOPTIONS, in->tid, 0, 0);
    snprintf(err, errlen, "cannot set ptrace options on thread %d: %s%s", in->tid, strerror(e),
             in->options & PTRACE_O_SUSPEND_SECCOMP ? " (suspending its seccomp filter)" : "");
    return -e;
}

/* Whether the pages of [from, to) were never touched: neither present nor swapped (pagemap), so no one keeps
 * anything there. */
static int untouched(int pid, unsigned long long from, unsigned long long to)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/pagemap", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC), ok = fd >= 0;
    for (unsigned long long a = from & ~4095ULL; ok && a < to; a += 4096) {
        unsigned long long e;
        ok = pread(fd, &e, sizeof e, (off_t)(a / 4096 * 8)) == (ssize_t)sizeof e && !(e & (3ULL << 62));
    }
    if (fd >= 0) close(fd);
    return ok;
}

/* The area at the bottom of [stack] starts with this header: what diagtop wrote there last, so that the next
 * snapshot may use the area again if it still holds exactly that (touched by diagtop, by no one else). */
#define AREA_MAGIC "diagtop frames 1"
struct area_header {
    char magic[16];
    unsigned long long len, hash; /* the area's bytes, an FNV-1a hash of those after the header */
};

static unsigned long long fnv1a(const unsigned char *p, size_t n)
{
    unsigned long long h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* The area [from, from + len) is free: never touched, or just as diagtop's last snapshot left it. */
static int area_free(int pid, int mem_fd, unsigned long long from, size_t len)
{
    if (untouched(pid, from, from + len)) return 1;
    unsigned char *old = malloc(len);
    int ok = old && pread(mem_fd, old, len, (off_t)from) == (ssize_t)len;
    struct area_header h;
    if (ok) memcpy(&h, old, sizeof h);
    ok = ok && memcmp(h.magic, AREA_MAGIC, sizeof h.magic) == 0 && h.len == len &&
         h.hash == fnv1a(old + sizeof h, len - sizeof h);
    free(old);
    return ok;
}

/* 2. The recovery frames, in memory of the process no one uses, inside [stack]: below the main thread's stack
 * pointer when it is there (the ABI leaves it free), else (a Go program's main thread runs goroutines on heap
 * stacks; a handler may run on an alternate stack) in an area at the bottom of [stack], one page up: pages never
 * touched (a Go runtime's first thread keeps to the 64 KiB under its initial stack pointer, the kernel maps
 * 128 KiB), or left exactly as diagtop's last snapshot wrote them. */
static int inject_frames(struct inject *in, const struct arch_core_regs *core, struct arch_inject_frames *f,
                         int mem_fd, char *err, size_t errlen)
{
    const struct snapshot_plan *p = in->plan;
    unsigned long long sp = arch_regs_sp(&in->saved), need = arch_inject_frames_size(core);
    unsigned long long area = p->stack_lo + 4096, len = (sizeof(struct area_header) + need + 4095) & ~4095ULL;
    int below_sp = sp > p->stack_lo + ARCH_STACK_SKIP + need && sp <= p->stack_hi;
    if (!below_sp && !(area + len < p->stack_hi && (sp < p->stack_lo || sp > area + len + ARCH_STACK_SKIP) &&
                       area_free(in->pid, mem_fd, area, (size_t)len))) {
        snprintf(err, errlen, "no free room for the recovery frame in the main thread's [stack]");
        return -EAGAIN;
    }
    int rc = arch_inject_frames_build(f, core, in->sigmask, &p->sites, below_sp ? sp - ARCH_STACK_SKIP : area + len);
    if (rc == -EINVAL) snprintf(err, errlen, "thread %d is not a 64-bit thread", in->tid);
    else if (rc < 0) snprintf(err, errlen, "out of memory");
    if (rc < 0) return rc;
    if (!below_sp) { /* the whole area, with its header */
        unsigned char *a = calloc(1, (size_t)len);
        if (!a) {
            snprintf(err, errlen, "out of memory");
            return -ENOMEM;
        }
        memcpy(a + (f->addr - area), f->data, f->len);
        struct area_header h = {AREA_MAGIC, len, fnv1a(a + sizeof h, (size_t)len - sizeof h)};
        memcpy(a, &h, sizeof h);
        free(f->data);
        f->data = a;
        f->addr = area;
        f->len = (size_t)len;
    }
    if (pwrite(mem_fd, f->data, f->len, (off_t)f->addr) != (ssize_t)f->len) {
        snprintf(err, errlen, "cannot write the recovery frame into %d: %s", in->pid, strerror(errno));
        return -EIO;
    }
    return 0;
}

/* 3. The registers that run the call (its placeholder, getpid, until the entry stop), then every signal blocked:
 * in this order, a death of diagtop in between leaves a thread that runs getpid and restores itself. */
static int inject_arm(struct inject *in, const struct arch_inject_frames *f, char *err, size_t errlen)
{
    struct arch_regs r;
    if (in->copy_sp_arg >= 0) in->args[in->copy_sp_arg] = f->copy_sp;
    arch_inject_regs(&r, &in->saved, &in->plan->sites, f->thread_sp, SYS_getpid, in->args);
    unsigned long long all = ~0ULL;
    in->armed = 1;
    if (arch_regs_write(in->tid, &r) < 0 || ptrace(PTRACE_SETSIGMASK, in->tid, (void *)sizeof all, &all) < 0) {
        snprintf(err, errlen, "cannot set the registers of thread %d: %s", in->tid, strerror(errno));
        return -errno;
    }
    test_point(in->name, "armed");
    return 0;
}

/* 4. To the entry stop, where the placeholder becomes the real call. */
static int inject_enter(struct inject *in, char *err, size_t errlen)
{
    int st, rc;
    if (ptrace(PTRACE_SYSCALL, in->tid, 0, 0) < 0) {
        snprintf(err, errlen, "cannot resume thread %d: %s", in->tid, strerror(errno));
        return -errno;
    }
    if ((rc = inject_wait(in, STOP_SYSCALL, PTRACE_SYSCALL, &st, err, errlen)) < 0) return rc;
    struct arch_regs r;
    if ((rc = arch_regs_read(in->tid, &r)) < 0 || arch_inject_nr(&r) != SYS_getpid) {
        snprintf(err, errlen, "thread %d did not enter the injected call", in->tid);
        return rc < 0 ? rc : -EPROTO;
    }
    arch_inject_set_nr(&r, in->nr);
    if ((rc = arch_regs_write(in->tid, &r)) < 0) {
        snprintf(err, errlen, "cannot set the call of thread %d: %s", in->tid, strerror(-rc));
        return rc;
    }
    test_point(in->name, "entry");
    in->entered = clock_monotonic_seconds();
    return 0;
}

/* 5. The call runs (meanwhile, the caller's during: the kernel copies a large process for milliseconds); a clone
 * reports its child at PTRACE_EVENT_CLONE, once the memory is copied: the other threads run again at once, and the
 * thread goes straight on to its restore (the interrupt stops it on its way out of the call, before any of its own
 * instructions), without the exit stop, one wake-up fewer in the pause. A failed clone, or another call, reports
 * the exit stop, with the result. */
static int inject_call(struct inject *in, char *err, size_t errlen)
{
    int st, rc;
    if (ptrace(PTRACE_SYSCALL, in->tid, 0, 0) < 0) return -errno;
    if (in->during) in->during(in->during_arg);
    if ((rc = inject_wait(in, STOP_CLONE_OR_EXIT, PTRACE_SYSCALL, &st, err, errlen)) < 0) return rc;
    unsigned long msg = 0;
    if (st >> 16 == PTRACE_EVENT_CLONE) {
        if (ptrace(PTRACE_GETEVENTMSG, in->tid, 0, &msg) < 0 || msg == 0) return -EPROTO;
        in->child = (int)msg;
        in->result = (long)msg;
        test_point(in->name, "cloned");
        if (in->others) ptrace_session_release_others(in->others, in->tid);
        test_point(in->name, "exit");
        return 0;
    }
    struct arch_regs r;
    if ((rc = arch_regs_read(in->tid, &r)) < 0) return rc;
    in->result = arch_inject_result(&r);
    test_point(in->name, "exit");
    return 0;
}

/* 6. Back to a PTRACE_EVENT_STOP (the interrupt's, inside the kernel's signal handling, as at the first stop), and
 * there the saved state: mask first, then registers (with orig_rax and any -ERESTART* value, so that an interrupted
 * call restarts as it would have), then no options. Until the registers are back, the thread's way out is still
 * the recovery frame. */
static int inject_restore(struct inject *in, char *err, size_t errlen)
{
    int st, rc;
    if (ptrace(PTRACE_INTERRUPT, in->tid, 0, 0) < 0 || ptrace(PTRACE_CONT, in->tid, 0, 0) < 0) {
        snprintf(err, errlen, "cannot stop thread %d again: %s", in->tid, strerror(errno));
        return -errno;
    }
    test_point(in->name, "continued");
    if ((rc = inject_wait(in, STOP_EVENT, PTRACE_CONT, &st, err, errlen)) < 0) return rc;
    if (ptrace(PTRACE_SETSIGMASK, in->tid, (void *)sizeof in->sigmask, &in->sigmask) < 0) return -errno;
    test_point(in->name, "unmasked");
    if ((rc = arch_regs_write(in->tid, &in->saved)) < 0) {
        snprintf(err, errlen, "cannot restore the registers of thread %d: %s", in->tid, strerror(-rc));
        return rc;
    }
    ptrace(PTRACE_SETOPTIONS, in->tid, 0, 0);
    if (in->sigstop) syscall(SYS_tgkill, in->pid, in->tid, SIGSTOP); /* taken at detach, as it would have been */
    test_point(in->name, "restored");
    return 0;
}

/* The whole call. On failure before the registers are back, the thread is left to its recovery frame (detaching
 * it makes it restore itself). */
static int inject_run(struct inject *in, const struct arch_core_regs *core, double timeout, char *err,
                      size_t errlen)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", in->pid);
    int mem_fd = open(path, O_RDWR | O_CLOEXEC), rc;
    if (mem_fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -errno;
    }
    struct arch_inject_frames f = {0};
    in->deadline = clock_monotonic_seconds() + timeout;
    memcpy(&in->saved.gp, &core->gp, sizeof in->saved.gp);
    if (ptrace(PTRACE_GETSIGMASK, in->tid, (void *)sizeof in->sigmask, &in->sigmask) < 0) {
        rc = -errno;
        snprintf(err, errlen, "cannot read the signal mask of thread %d: %s", in->tid, strerror(errno));
    } else if ((rc = inject_check_sites(in, mem_fd)) < 0) {
        snprintf(err, errlen, "the code found before the stop changed");
    } else if ((rc = inject_options(in, err, errlen)) == 0 && (rc = inject_frames(in, core, &f, mem_fd, err, errlen)) == 0 &&
               (rc = inject_arm(in, &f, err, errlen)) == 0 && (rc = inject_enter(in, err, errlen)) == 0 &&
               (rc = inject_call(in, err, errlen)) == 0) {
        rc = inject_restore(in, err, errlen);
    }
    if (rc < 0 && !in->armed) ptrace(PTRACE_SETOPTIONS, in->tid, 0, 0); /* nothing else was changed */
    arch_inject_frames_free(&f);
    close(mem_fd);
    return rc;
}

/* ---- the copy ---- */

static struct ptrace_thread *session_thread(struct ptrace_session *s, int tid)
{
    for (int i = 0; i < s->n; i++)
        if (s->threads[i].tid == tid) return &s->threads[i];
    return NULL;
}

int snapshot_take(struct snapshot *sn, const struct snapshot_plan *p, struct ptrace_session *s,
                  const struct arch_core_regs *main_regs, void (*during)(void *arg), void *arg, char *err,
                  size_t errlen)
{
    memset(sn, 0, sizeof *sn);
    sn->pid = sn->tid = p->pid;
    struct ptrace_thread *t = session_thread(s, p->pid);
    if (s->was_stopped) {
        snprintf(err, errlen, "the process is stopped (SIGSTOP): it is copied as it is and left stopped");
        return -EINVAL;
    }
    if (!t || !t->stopped || t->gone || t->exiting) {
        snprintf(err, errlen, "the main thread is exiting");
        return -ESRCH;
    }
    if (t->pending_sig) {
        snprintf(err, errlen, "a signal (%d) was being delivered to the main thread", t->pending_sig);
        return -EAGAIN;
    }
    struct inject in = {.name = "clone", .pid = p->pid, .tid = p->pid, .plan = p, .nr = SYS_clone, .copy_sp_arg = 1,
                        .during = during, .during_arg = arg, .others = s};
    in.args[0] = CLONE_FLAGS;
    in.options = PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE | (p->suspend_seccomp ? PTRACE_O_SUSPEND_SECCOMP : 0);
    int rc = inject_run(&in, main_regs, 5.0, err, errlen);
    sn->copy = in.child;
    sn->others_released = in.child != 0; /* released at the event that gave the child */
    sn->clone_ms = in.entered ? (clock_monotonic_seconds() - in.entered) * 1000.0 : 0;
    if (rc == 0 && in.result < 0) {
        int e = (int)-in.result;
        snprintf(err, errlen, "clone failed in the process: %s%s", strerror(e),
                 e == EAGAIN ? " (a process limit: ulimit -u or the cgroup's pids.max)"
                 : e == ENOMEM ? " (strict overcommit or a memory limit)"
                 : e == EPERM || e == ENOSYS ? " (refused by a security policy)" : "");
        rc = -e;
    } else if (rc == 0 && !sn->copy) {
        snprintf(err, errlen, "clone reported no child");
        rc = -EPROTO;
    }
    if (rc < 0 && sn->copy) { /* a copy from a call that went wrong after it: not ours to keep */
        kill(sn->copy, SIGKILL);
        sn->dead = 1;
    }
    return rc;
}

int snapshot_hold(struct snapshot *sn, double timeout, char *err, size_t errlen)
{
    double deadline = clock_monotonic_seconds() + timeout;
    int st;
    for (;;) { /* its first stop: a PTRACE_EVENT_STOP, before any instruction of its own */
        pid_t r = waitpid(sn->copy, &st, __WALL | WNOHANG);
        if (r == sn->copy && WIFSTOPPED(st)) break;
        if (r < 0 || (r == sn->copy && (WIFEXITED(st) || WIFSIGNALED(st)))) {
            sn->dead = 1;
            snprintf(err, errlen, "the copy %d died before its first stop", sn->copy);
            return -ESRCH;
        }
        if (clock_monotonic_seconds() > deadline) {
            snprintf(err, errlen, "the copy %d did not stop in time", sn->copy);
            return -ETIMEDOUT;
        }
        struct timespec ts = {0, WAIT_NS};
        nanosleep(&ts, NULL);
    }
    test_point("copy", "stopped");
    /* Replaces the options it inherited (TRACECLONE...): diagtop's death now kills it. */
    if (ptrace(PTRACE_SETOPTIONS, sn->copy, 0, (void *)(long)PTRACE_O_EXITKILL) < 0) {
        snprintf(err, errlen, "cannot set PTRACE_O_EXITKILL on the copy: %s", strerror(errno));
        return -errno;
    }
    /* The first the OOM killer picks: it holds copy-on-write pages the process's writes duplicate. */
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/oom_score_adj", sn->copy);
    if ((errno = -write_file(path, "1000")) != 0) {
        snprintf(err, errlen, "cannot set the copy's oom_score_adj: %s", strerror(errno));
        return -errno;
    }
    sn->held = 1;
    test_point("copy", "held");
    return 0;
}

int snapshot_alive(struct snapshot *sn)
{
    if (!sn->copy || sn->dead) return 0;
    int st;
    pid_t r = waitpid(sn->copy, &st, __WALL | WNOHANG);
    if (r < 0 || (r == sn->copy && (WIFEXITED(st) || WIFSIGNALED(st)))) sn->dead = 1;
    return !sn->dead;
}

/* The dead copy is a zombie of the process (the tracer's wait handed it back), unless the process ignores SIGCHLD
 * and the kernel reaped it. */
static int zombie_of(int pid, int copy)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", copy);
    ssize_t n = fileio_read_at(AT_FDCWD, path, buf, sizeof buf - 1);
    if (n <= 0) return 0;
    buf[n] = '\0';
    const char *after = strrchr(buf, ')');
    char state = 0;
    int ppid = 0;
    return after && sscanf(after + 2, "%c %d", &state, &ppid) == 2 && state == 'Z' && ppid == pid;
}

void snapshot_kill(struct snapshot *sn)
{
    if (sn->copy && !sn->dead && !sn->killed) kill(sn->copy, SIGKILL);
    sn->killed = 1;
}

/* Kills the copy and collects its death as its tracer. */
static void kill_copy(struct snapshot *sn)
{
    snapshot_kill(sn);
    double deadline = clock_monotonic_seconds() + 5.0;
    for (;;) {
        int st;
        pid_t r = waitpid(sn->copy, &st, __WALL | WNOHANG);
        if (r < 0 || (r == sn->copy && (WIFEXITED(st) || WIFSIGNALED(st)))) break;
        if (clock_monotonic_seconds() > deadline) break;
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    sn->dead = 1;
    test_point("copy", "killed");
}

/* One try: the main thread stopped alone runs wait4(copy, NULL, __WALL | WNOHANG, NULL). Returns 1 when the zombie
 * is gone, 0 to try again, -errno when it cannot be done. */
static int reap_once(struct snapshot *sn, const struct snapshot_plan *p, const volatile sig_atomic_t *cancel,
                     char *err, size_t errlen)
{
    struct ptrace_session s;
    struct snapshot_guard g;
    snapshot_guard_begin(&g);
    int rc = ptrace_session_stop_thread(&s, sn->pid, sn->tid, 1.0, cancel, err, errlen), done = 0;
    struct ptrace_thread *t = rc == 0 ? session_thread(&s, sn->tid) : NULL;
    struct arch_core_regs regs = {0};
    if (rc == 0 && (!t || !t->stopped || t->pending_sig || s.was_stopped)) {
        snprintf(err, errlen, "the main thread was busy (a signal's delivery or a group stop)");
        rc = 0; /* try again */
    } else if (rc == 0 && (rc = arch_core_regs_read(sn->tid, &regs)) == 0) {
        struct inject in = {.name = "reap", .pid = sn->pid, .tid = sn->tid, .plan = p, .nr = SYS_wait4, .copy_sp_arg = -1};
        in.args[0] = (unsigned long long)sn->copy;
        in.args[2] = __WALL | WNOHANG;
        in.options = PTRACE_O_TRACESYSGOOD | (p->suspend_seccomp ? PTRACE_O_SUSPEND_SECCOMP : 0);
        rc = inject_run(&in, &regs, 2.0, err, errlen);
        if (rc == 0 && (in.result == sn->copy || in.result == -ECHILD)) done = 1;
        else if (rc == 0 && in.result < 0) {
            snprintf(err, errlen, "wait4 in the process failed: %s", strerror((int)-in.result));
            rc = (int)in.result;
        }
    } else if (rc < 0 && rc != -ECANCELED) {
        rc = 0; /* the thread did not stop in time: try again */
    }
    arch_core_regs_free(&regs);
    ptrace_session_detach(&s, 0.5);
    sn->reap_ms += ptrace_session_stopped_ms(&s);
    ptrace_session_free(&s);
    snapshot_guard_end(&g);
    return rc < 0 ? rc : done;
}

void snapshot_release(struct snapshot *sn, const struct snapshot_plan *p, double timeout,
                      const volatile sig_atomic_t *cancel)
{
    if (!sn->copy || sn->released) return;
    sn->released = 1;
    kill_copy(sn);
    char err[256] = "";
    double deadline = clock_monotonic_seconds() + timeout;
    for (int attempt = 0; !sn->reaped; attempt++) {
        if (!zombie_of(sn->pid, sn->copy)) { /* reaped already (SIGCHLD ignored), or the process is gone */
            sn->reaped = 1;
            break;
        }
        int rc = attempt < 5 && clock_monotonic_seconds() < deadline ? reap_once(sn, p, cancel, err, sizeof err) : -ETIMEDOUT;
        if (rc > 0) sn->reaped = 1;
        if (rc < 0) {
            snprintf(sn->reap_err, sizeof sn->reap_err, "the copy %d stays a zombie under %d until it exits: %.170s",
                     sn->copy, sn->pid, err[0] ? err : "no time left to reap it");
            break;
        }
        if (rc == 0) clock_sleep(0.005, cancel);
    }
    test_point("copy", "released");
}

/* ---- diagtop's own protection ---- */

void snapshot_guard_begin(struct snapshot_guard *g)
{
    memset(g, 0, sizeof *g);
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &g->old_mask);
    ssize_t n = fileio_read_at(AT_FDCWD, "/proc/self/oom_score_adj", g->old_oom, sizeof g->old_oom - 1);
    if (n > 0) {
        g->old_oom[strcspn(g->old_oom, "\n")] = '\0';
        g->oom_set = write_file("/proc/self/oom_score_adj", "-1000") == 0;
    }
}

void snapshot_guard_end(struct snapshot_guard *g)
{
    if (g->oom_set) write_file("/proc/self/oom_score_adj", g->old_oom);
    g->oom_set = 0;
    pthread_sigmask(SIG_SETMASK, &g->old_mask, NULL);
}
