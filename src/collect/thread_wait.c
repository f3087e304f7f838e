#include "thread_wait.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sockets.h"
#include "util/clock.h"
#include "util/fileio.h"

#define PIPE_SCAN_MAX_FDS 200000 /* descriptors looked at when searching pipes' other ends: bounded on huge boxes */
#define PIPE_HOLDERS 4

/* ---- the system calls worth decoding ---- */

enum call_style {
    CALL_FD_LEN,   /* fd, buffer, length: read, write, recvfrom, sendto, pread64, pwrite64 */
    CALL_FD_IOV,   /* fd, iovec, count */
    CALL_FD,       /* fd first, the rest left out */
    CALL_EPOLL,    /* epfd, events, maxevents, timeout ms */
    CALL_POLL,     /* struct pollfd *, nfds, timeout ms */
    CALL_PPOLL,    /* struct pollfd *, nfds, const struct timespec * */
    CALL_FUTEX,    /* uaddr, op, val, timeout */
    CALL_SLEEP,    /* const struct timespec * */
    CALL_CLOCK_SLEEP, /* clockid, flags, const struct timespec * */
    CALL_WAIT4,    /* pid */
    CALL_PLAIN,    /* the name alone */
};

struct call_kind {
    long nr;
    const char *name;
    enum call_style style;
};

/* Numbers from <sys/syscall.h>, so the table holds on every architecture; calls an architecture lacks drop out. */
static const struct call_kind calls[] = {
    {SYS_read, "read", CALL_FD_LEN},
    {SYS_write, "write", CALL_FD_LEN},
    {SYS_pread64, "pread64", CALL_FD_LEN},
    {SYS_pwrite64, "pwrite64", CALL_FD_LEN},
    {SYS_readv, "readv", CALL_FD_IOV},
    {SYS_writev, "writev", CALL_FD_IOV},
    {SYS_recvfrom, "recvfrom", CALL_FD_LEN},
    {SYS_sendto, "sendto", CALL_FD_LEN},
    {SYS_recvmsg, "recvmsg", CALL_FD},
    {SYS_sendmsg, "sendmsg", CALL_FD},
    {SYS_accept4, "accept4", CALL_FD},
    {SYS_connect, "connect", CALL_FD},
    {SYS_flock, "flock", CALL_FD},
    {SYS_fcntl, "fcntl", CALL_FD},
    {SYS_fsync, "fsync", CALL_FD},
    {SYS_fdatasync, "fdatasync", CALL_FD},
    {SYS_epoll_pwait, "epoll_pwait", CALL_EPOLL},
    {SYS_ppoll, "ppoll", CALL_PPOLL},
    {SYS_futex, "futex", CALL_FUTEX},
    {SYS_clock_nanosleep, "clock_nanosleep", CALL_CLOCK_SLEEP},
    {SYS_wait4, "wait4", CALL_WAIT4},
    {SYS_waitid, "waitid", CALL_PLAIN},
    {SYS_rt_sigsuspend, "rt_sigsuspend", CALL_PLAIN},
    {SYS_rt_sigtimedwait, "rt_sigtimedwait", CALL_PLAIN},
    {SYS_pselect6, "pselect6", CALL_PLAIN},
    {SYS_io_getevents, "io_getevents", CALL_PLAIN},
    {SYS_msgrcv, "msgrcv", CALL_PLAIN},
    {SYS_semtimedop, "semtimedop", CALL_PLAIN},
    {SYS_restart_syscall, "restart_syscall", CALL_PLAIN}, /* a sleep or wait resumed after a stop */
#ifdef SYS_accept
    {SYS_accept, "accept", CALL_FD},
#endif
#ifdef SYS_epoll_wait
    {SYS_epoll_wait, "epoll_wait", CALL_EPOLL},
#endif
#ifdef SYS_epoll_pwait2
    {SYS_epoll_pwait2, "epoll_pwait2", CALL_FD},
#endif
#ifdef SYS_poll
    {SYS_poll, "poll", CALL_POLL},
#endif
#ifdef SYS_select
    {SYS_select, "select", CALL_PLAIN},
#endif
#ifdef SYS_nanosleep
    {SYS_nanosleep, "nanosleep", CALL_SLEEP},
#endif
#ifdef SYS_pause
    {SYS_pause, "pause", CALL_PLAIN},
#endif
#ifdef SYS_vfork
    {SYS_vfork, "vfork", CALL_PLAIN},
#endif
#ifdef SYS_io_uring_enter
    {SYS_io_uring_enter, "io_uring_enter", CALL_FD},
#endif
#ifdef SYS_futex_waitv
    {SYS_futex_waitv, "futex_waitv", CALL_PLAIN},
#endif
};

static const struct call_kind *call_kind_of(long nr)
{
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (calls[i].nr == nr) return &calls[i];
    return NULL;
}

/* ---- small readers ---- */

/* Reads len bytes of the target's memory at addr through /proc/PID/mem (no stop: a blocked thread's arguments
 * hold still). Returns 0 or -1. */
static int mem_peek(int pid, unsigned long long addr, void *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = pread(fd, buf, len, (off_t)addr);
    close(fd);
    return n == (ssize_t)len ? 0 : -1;
}

/* A process's name (comm), "?" when it is gone. */
static void pid_comm(int pid, char *comm, size_t n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    if (fileio_read_at(AT_FDCWD, path, comm, n) > 0) comm[strcspn(comm, "\n")] = '\0';
    else snprintf(comm, n, "?");
}

/* "2.5 s", "1 h 0 min", "40 ms" */
static void format_span(char *buf, size_t n, double s)
{
    if (s < 1) snprintf(buf, n, "%.0f ms", s * 1000);
    else if (s < 120) snprintf(buf, n, "%.1f s", s);
    else if (s < 7200) snprintf(buf, n, "%.0f min", s / 60);
    else snprintf(buf, n, "%.1f h", s / 3600);
}

static void timespec_text(int pid, unsigned long long addr, char *buf, size_t n)
{
    struct { long long sec, nsec; } ts;
    if (!addr) snprintf(buf, n, "no timeout");
    else if (mem_peek(pid, addr, &ts, sizeof ts) < 0 || ts.sec < 0 || ts.nsec < 0) snprintf(buf, n, "0x%llx", addr);
    else format_span(buf, n, (double)ts.sec + (double)ts.nsec / 1e9);
}

static void timeout_ms_text(long long ms, char *buf, size_t n)
{
    if (ms < 0) snprintf(buf, n, "no timeout");
    else format_span(buf, n, (double)ms / 1000);
}

/* A field of an fdinfo text ("pos:\t1234"): its value, or NULL. */
static const char *fdinfo_field(const char *info, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = info; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, name, len) == 0) {
            p += len;
            while (*p == ' ' || *p == '\t') p++;
            return p;
        }
    return NULL;
}

/* "it_value: (0, 4999)" -> 0.000004999 */
static double fdinfo_pair_seconds(const char *v)
{
    long long s = 0, ns = 0;
    return v && sscanf(v, "(%lld, %lld)", &s, &ns) == 2 ? (double)s + (double)ns / 1e9 : 0;
}

/* The descriptors an epoll set watches, from its fdinfo's "tfd:" lines. */
static void epoll_object(const char *info, char *out, size_t n)
{
    int count = 0;
    size_t off = (size_t)snprintf(out, n, "epoll set watching");
    for (const char *p = info; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        int tfd;
        if (sscanf(p, "tfd: %d", &tfd) != 1) continue;
        if (count < 8 && off < n) off += (size_t)snprintf(out + off, n - off, "%s %d", count ? "," : " fd", tfd);
        count++;
    }
    if (count > 8 && off < n) snprintf(out + off, n - off, " and %d more", count - 8);
    else if (count == 0) snprintf(out, n, "epoll set watching nothing");
}

/* What descriptor fd of pid is: kind, object, inode (sockets and pipes: described in thread_waits_link). */
static void resolve_fd(int pid, int fd, struct thread_wait *w)
{
    char path[96], link[256], info[4096];
    w->fd = fd;
    snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, fd);
    ssize_t len = readlink(path, link, sizeof link - 1);
    if (len < 0) {
        snprintf(w->fd_kind, sizeof w->fd_kind, "closed");
        return;
    }
    link[len] = '\0';
    snprintf(path, sizeof path, "/proc/%d/fdinfo/%d", pid, fd);
    if (fileio_read_at(AT_FDCWD, path, info, sizeof info) <= 0) info[0] = '\0';
    const char *flags = fdinfo_field(info, "flags:");
    w->fd_flags = flags ? (int)strtol(flags, NULL, 8) : -1;
    if (sscanf(link, "socket:[%lu]", &w->inode) == 1) {
        snprintf(w->fd_kind, sizeof w->fd_kind, "socket");
        snprintf(w->object, sizeof w->object, "%s", link);
    } else if (sscanf(link, "pipe:[%lu]", &w->inode) == 1) {
        snprintf(w->fd_kind, sizeof w->fd_kind, "pipe");
        snprintf(w->object, sizeof w->object, "%s", link);
    } else if (strcmp(link, "anon_inode:[eventfd]") == 0) {
        const char *c = fdinfo_field(info, "eventfd-count:");
        snprintf(w->fd_kind, sizeof w->fd_kind, "eventfd");
        snprintf(w->object, sizeof w->object, "eventfd, count %lld", c ? strtoll(c, NULL, 16) : -1LL);
    } else if (strcmp(link, "anon_inode:[timerfd]") == 0) {
        char next[32], every[32];
        double v = fdinfo_pair_seconds(fdinfo_field(info, "it_value:"));
        double i = fdinfo_pair_seconds(fdinfo_field(info, "it_interval:"));
        format_span(next, sizeof next, v);
        format_span(every, sizeof every, i);
        snprintf(w->fd_kind, sizeof w->fd_kind, "timerfd");
        if (v == 0) snprintf(w->object, sizeof w->object, "timerfd, disarmed");
        else snprintf(w->object, sizeof w->object, "timerfd, next in %s%s%s", next, i > 0 ? ", every " : "",
                      i > 0 ? every : "");
    } else if (strcmp(link, "anon_inode:[eventpoll]") == 0) {
        snprintf(w->fd_kind, sizeof w->fd_kind, "epoll");
        epoll_object(info, w->object, sizeof w->object);
    } else if (strncmp(link, "anon_inode:", 11) == 0) {
        const char *name = link + 11;
        size_t n = strlen(name);
        if (name[0] == '[' && n > 2) snprintf(w->fd_kind, sizeof w->fd_kind, "%.*s", (int)(n < 17 ? n - 2 : 15), name + 1);
        else snprintf(w->fd_kind, sizeof w->fd_kind, "%.15s", name);
        snprintf(w->object, sizeof w->object, "%s", name);
    } else if (link[0] == '/') {
        const char *pos = fdinfo_field(info, "pos:");
        snprintf(w->fd_kind, sizeof w->fd_kind, strncmp(link, "/dev/", 5) == 0 ? "device" : "file");
        snprintf(w->object, sizeof w->object, "%s at offset %lld", link, pos ? strtoll(pos, NULL, 10) : 0LL);
    } else {
        snprintf(w->fd_kind, sizeof w->fd_kind, "other");
        snprintf(w->object, sizeof w->object, "%s", link);
    }
}

/* Who holds a lock on the file behind fd (flock, fcntl F_SETLKW): the granted entries of /proc/locks on its inode
 * (the waiting ones are marked "->"), appended to the object. */
static void add_lock_holders(int pid, struct thread_wait *w)
{
    char path[96], locks[16384];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, w->fd);
    if (stat(path, &st) < 0 || fileio_read_at(AT_FDCWD, "/proc/locks", locks, sizeof locks) <= 0) return;
    char id[64];
    snprintf(id, sizeof id, " %02x:%02x:%lu ", major(st.st_dev), minor(st.st_dev), (unsigned long)st.st_ino);
    size_t off = strlen(w->object);
    int found = 0;
    for (char *save = NULL, *l = strtok_r(locks, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char kind[16], mode[16], access[16];
        int holder;
        char *at = strstr(l, id);
        if (!at || strstr(l, "->") || sscanf(l, "%*d: %15s %15s %15s %d", kind, mode, access, &holder) != 4) continue;
        char comm[32];
        pid_comm(holder, comm, sizeof comm);
        if (off < sizeof w->object)
            off += (size_t)snprintf(w->object + off, sizeof w->object - off, "%s %d (%s, %s %s)",
                                    found++ ? "," : ", locked by", holder, holder > 0 ? comm : "an OFD lock", kind, access);
    }
}

/* ---- decoding the call ---- */

/* A call a stop interrupted comes back as restart_syscall, with the user registers (the arguments) unchanged.
 * Which call it was is in the code before pc: glibc's wrappers load the number just before the syscall
 * instruction ("mov $NR,%eax; syscall", or "xor %eax,%eax; syscall" for read). Returns the number, or -1. */
static long restarted_call(int pid, unsigned long long pc)
{
#if defined(__x86_64__)
    unsigned char code[7];
    if (pc < sizeof code || mem_peek(pid, pc - sizeof code, code, sizeof code) < 0) return -1;
    if (code[5] != 0x0f || code[6] != 0x05) return -1;
    if (code[0] == 0xb8) return (long)((unsigned)code[1] | (unsigned)code[2] << 8 | (unsigned)code[3] << 16 |
                                       (unsigned)code[4] << 24);
    if (code[3] == 0x31 && code[4] == 0xc0) return 0;
#else
    (void)pid;
    (void)pc;
#endif
    return -1;
}

static void futex_call(const struct thread_wait *w, char *buf, size_t n)
{
    static const char *const ops[] = {[0] = "wait", [6] = "lock_pi", [9] = "wait_bitset", [11] = "wait_requeue_pi",
                                      [13] = "lock_pi2"};
    unsigned op = (unsigned)(w->args[1] & 127); /* without FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME */
    const char *name = op < sizeof ops / sizeof ops[0] && ops[op] ? ops[op] : NULL;
    char opname[16];
    if (!name) snprintf(opname, sizeof opname, "op %u", op);
    snprintf(buf, n, "futex(0x%llx, %s%s)", w->args[0], name ? name : opname, w->args[3] ? ", with a timeout" : "");
}

/* poll's descriptors, read from its array: one is resolved; several are listed. */
static void poll_call(int pid, struct thread_wait *w, const char *name, const char *timeout, char *buf, size_t n)
{
    struct { int fd; short events, revents; } fds[8];
    unsigned long long nfds = w->args[1];
    size_t want = nfds < 8 ? (size_t)nfds : 8;
    if (nfds == 0 || mem_peek(pid, w->args[0], fds, want * sizeof fds[0]) < 0) {
        snprintf(buf, n, "%s(%llu fds, %s)", name, nfds, timeout);
        return;
    }
    if (nfds == 1) {
        snprintf(buf, n, "%s(fd %d, %s)", name, fds[0].fd, timeout);
        resolve_fd(pid, fds[0].fd, w);
        return;
    }
    size_t off = (size_t)snprintf(buf, n, "%s(fds", name);
    for (size_t i = 0; i < want && off < n; i++) off += (size_t)snprintf(buf + off, n - off, " %d", fds[i].fd);
    if (off < n) snprintf(buf + off, n - off, "%s, %s)", nfds > want ? " ..." : "", timeout);
}

static void decode_call(int pid, struct thread_wait *w)
{
    long restarted = w->nr == SYS_restart_syscall ? restarted_call(pid, w->pc) : -1;
    if (restarted >= 0) {
        w->nr = restarted;
        w->restarted = 1;
    }
    const struct call_kind *k = call_kind_of(w->nr);
    char t[32];
    int fd = (int)w->args[0];
    if (!k) {
        snprintf(w->call, sizeof w->call, "syscall %ld(0x%llx, 0x%llx, 0x%llx)", w->nr, w->args[0], w->args[1],
                 w->args[2]);
        return;
    }
    w->syscall = k->name;
    switch (k->style) {
    case CALL_FD_LEN:
        snprintf(w->call, sizeof w->call, "%s(fd %d, %llu bytes)", k->name, fd, w->args[2]);
        resolve_fd(pid, fd, w);
        break;
    case CALL_FD_IOV:
        snprintf(w->call, sizeof w->call, "%s(fd %d, %llu buffers)", k->name, fd, w->args[2]);
        resolve_fd(pid, fd, w);
        break;
    case CALL_FD:
        snprintf(w->call, sizeof w->call, "%s(fd %d)", k->name, fd);
        resolve_fd(pid, fd, w);
        if (k->nr == SYS_flock || k->nr == SYS_fcntl) add_lock_holders(pid, w);
        break;
    case CALL_EPOLL:
        timeout_ms_text((int)w->args[3], t, sizeof t);
        snprintf(w->call, sizeof w->call, "%s(fd %d, %s)", k->name, fd, t);
        resolve_fd(pid, fd, w);
        break;
    case CALL_POLL:
        timeout_ms_text((int)w->args[2], t, sizeof t);
        poll_call(pid, w, k->name, t, w->call, sizeof w->call);
        break;
    case CALL_PPOLL:
        timespec_text(pid, w->args[2], t, sizeof t);
        poll_call(pid, w, k->name, t, w->call, sizeof w->call);
        break;
    case CALL_FUTEX:
        w->futex = w->args[0];
        futex_call(w, w->call, sizeof w->call);
        break;
    case CALL_SLEEP:
        timespec_text(pid, w->args[0], t, sizeof t);
        snprintf(w->call, sizeof w->call, "%s(%s)", k->name, t);
        break;
    case CALL_CLOCK_SLEEP:
        timespec_text(pid, w->args[2], t, sizeof t);
        snprintf(w->call, sizeof w->call, "%s(%s%s)", k->name, w->args[1] & 1 ? "until " : "", t);
        break;
    case CALL_WAIT4:
        if ((int)w->args[0] == -1) snprintf(w->call, sizeof w->call, "%s(any child)", k->name);
        else snprintf(w->call, sizeof w->call, "%s(pid %d)", k->name, (int)w->args[0]); /* pid_t: the low half */
        break;
    case CALL_PLAIN:
        snprintf(w->call, sizeof w->call, "%s()%s", k->name,
                 k->nr == SYS_restart_syscall ? " (a call resumed after a stop: frame #0 says which)" : "");
        break;
    }
    if (w->restarted && strlen(w->call) + 24 < sizeof w->call) strcat(w->call, " (resumed after a stop)");
}

/* ---- the thread's other facts ---- */

/* Seconds since the thread last ran: the scheduler's se.exec_start (milliseconds of the run queue's clock, which
 * is the monotonic clock's scale) against now. */
static double since_last_ran(int pid, int tid)
{
    char path[96], text[8192];
    snprintf(path, sizeof path, "/proc/%d/task/%d/sched", pid, tid);
    if (fileio_read_at(AT_FDCWD, path, text, sizeof text) <= 0) return -1;
    const char *p = strstr(text, "\nse.exec_start");
    double ms;
    if (!p || !(p = strchr(p, ':')) || sscanf(p + 1, "%lf", &ms) != 1) return -1;
    double since = clock_monotonic_seconds() - ms / 1000;
    return since >= 0 ? since : since > -0.1 ? 0 : -1;
}

/* The kernel stack, readable by root only ("[<0>] kernel_clone+0x1d3/0x400" per line). */
static void read_kernel_stack(int pid, int tid, struct thread_wait *w)
{
    char path[96], text[4096];
    snprintf(path, sizeof path, "/proc/%d/task/%d/stack", pid, tid);
    if (fileio_read_at(AT_FDCWD, path, text, sizeof text) <= 0) return;
    int lines = 0;
    for (const char *p = text; *p; p++) lines += *p == '\n';
    if (!(w->kernel = calloc((size_t)lines + 1, sizeof *w->kernel))) return;
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *sym = strstr(l, "] ");
        if ((w->kernel[w->nkernel] = strdup(sym ? sym + 2 : l))) w->nkernel++;
    }
}

int thread_syscall_read(int pid, int tid, long *nr, unsigned long long args[6], unsigned long long *sp,
                        unsigned long long *pc)
{
    char path[96], text[512];
    snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", pid, tid);
    if (fileio_read_at(AT_FDCWD, path, text, sizeof text) <= 0) return -1;
    if (strncmp(text, "running", 7) == 0) return 0;
    unsigned long long v[8] = {0};
    int n = sscanf(text, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", nr, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                   &v[6], &v[7]);
    memset(args, 0, 6 * sizeof *args);
    if (n == 3 && *nr == -1) {
        *sp = v[0];
        *pc = v[1];
    } else if (n == 9) {
        memcpy(args, v, 6 * sizeof *args);
        *sp = v[6];
        *pc = v[7];
    } else {
        return -1;
    }
    return 1;
}

int thread_wait_read(int pid, int tid, char state, struct thread_wait *w)
{
    memset(w, 0, sizeof *w);
    w->tid = tid;
    w->fd = -1;
    w->fd_flags = -1;
    if (thread_syscall_read(pid, tid, &w->nr, w->args, &w->sp, &w->pc) != 1) return -1;
    if (w->nr == -1) snprintf(w->call, sizeof w->call, "not in a system call");
    else decode_call(pid, w);
    if (state == 'D') read_kernel_stack(pid, tid, w);
    w->since = since_last_ran(pid, tid);
    return 0;
}

/* ---- what needs every thread ---- */

static void link_futexes(struct thread_wait **waits, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!waits[i] || !waits[i]->futex) continue;
        for (size_t k = 0; k < n; k++) {
            if (!waits[k] || waits[k]->futex != waits[i]->futex) continue;
            if (waits[i]->npeers < THREAD_WAIT_PEERS) waits[i]->peers[waits[i]->npeers++] = waits[k]->tid;
            else waits[i]->more_peers++;
        }
    }
}

static void describe_sockets(int pid, struct thread_wait **waits, size_t n)
{
    struct socket_table socks = {0};
    int loaded = 0;
    for (size_t i = 0; i < n; i++) {
        if (!waits[i] || strcmp(waits[i]->fd_kind, "socket") != 0) continue;
        if (!loaded++) sockets_load(pid, &socks);
        const char *d = sockets_describe(&socks, waits[i]->inode);
        if (d) snprintf(waits[i]->object, sizeof waits[i]->object, "%s", d);
    }
    sockets_free(&socks);
}

struct pipe_end {
    unsigned long inode;
    int want_write;          /* the waiter holds the read end: who holds the write end? */
    int holders[PIPE_HOLDERS];
    int nholders, more;
};

static void note_holder(struct pipe_end *e, int pid)
{
    for (int i = 0; i < e->nholders; i++)
        if (e->holders[i] == pid) return;
    if (e->nholders < PIPE_HOLDERS) e->holders[e->nholders++] = pid;
    else e->more++;
}

/* One pass over every process's descriptors, noting who holds the other end of each pipe in ends. */
static void scan_pipe_holders(struct pipe_end *ends, size_t nends)
{
    DIR *proc = opendir("/proc");
    long looked = 0;
    struct dirent *p;
    while (proc && looked < PIPE_SCAN_MAX_FDS && (p = readdir(proc))) {
        int pid = atoi(p->d_name);
        if (pid <= 0) continue;
        char dir[64];
        snprintf(dir, sizeof dir, "/proc/%d/fd", pid);
        DIR *fds = opendir(dir);
        struct dirent *f;
        while (fds && looked < PIPE_SCAN_MAX_FDS && (f = readdir(fds))) {
            char link[64];
            unsigned long inode;
            ssize_t len = readlinkat(dirfd(fds), f->d_name, link, sizeof link - 1);
            looked++;
            if (len <= 0) continue;
            link[len] = '\0';
            if (sscanf(link, "pipe:[%lu]", &inode) != 1) continue;
            for (size_t i = 0; i < nends; i++) {
                if (ends[i].inode != inode) continue;
                char path[320], info[512];
                snprintf(path, sizeof path, "/proc/%d/fdinfo/%s", pid, f->d_name);
                const char *flags = fileio_read_at(AT_FDCWD, path, info, sizeof info) > 0
                                        ? fdinfo_field(info, "flags:") : NULL;
                int acc = flags ? (int)(strtol(flags, NULL, 8) & O_ACCMODE) : -1;
                if (acc == (ends[i].want_write ? O_WRONLY : O_RDONLY)) note_holder(&ends[i], pid);
            }
        }
        if (fds) closedir(fds);
    }
    if (proc) closedir(proc);
}

static void pipe_object(const struct pipe_end *e, char *out, size_t n)
{
    const char *end = e->want_write ? "write" : "read";
    size_t off = (size_t)snprintf(out, n, "pipe:[%lu], %s end held by", e->inode, end);
    if (e->nholders == 0) snprintf(out + off, n - off, " no process diagtop can see");
    for (int i = 0; i < e->nholders && off < n; i++) {
        char comm[32];
        pid_comm(e->holders[i], comm, sizeof comm);
        off += (size_t)snprintf(out + off, n - off, "%s %d (%s)", i ? "," : "", e->holders[i], comm);
    }
    if (e->more && off < n) snprintf(out + off, n - off, " and %d more", e->more);
}

/* A reader of a pipe (or a descriptor of unknown mode) is waiting for its writers; a writer, for its readers. */
static int wants_writers(const struct thread_wait *w) { return w->fd_flags < 0 || (w->fd_flags & O_ACCMODE) == O_RDONLY; }

/* The other end of the pipe w waits on, among ends[0..n): its index, n when it is not there. */
static size_t other_end(const struct thread_wait *w, const struct pipe_end *ends, size_t n)
{
    size_t k = 0;
    while (k < n && (ends[k].inode != w->inode || ends[k].want_write != wants_writers(w))) k++;
    return k;
}

static void describe_pipes(struct thread_wait **waits, size_t n)
{
    struct pipe_end ends[16];
    size_t nends = 0;
    for (size_t i = 0; i < n && nends < 16; i++) {
        if (!waits[i] || strcmp(waits[i]->fd_kind, "pipe") != 0 || other_end(waits[i], ends, nends) < nends) continue;
        ends[nends++] = (struct pipe_end){.inode = waits[i]->inode, .want_write = wants_writers(waits[i])};
    }
    if (!nends) return;
    scan_pipe_holders(ends, nends);
    for (size_t i = 0; i < n; i++) {
        size_t k = waits[i] && strcmp(waits[i]->fd_kind, "pipe") == 0 ? other_end(waits[i], ends, nends) : nends;
        if (k < nends) pipe_object(&ends[k], waits[i]->object, sizeof waits[i]->object);
    }
}

void thread_waits_link(int pid, struct thread_wait **waits, size_t n)
{
    link_futexes(waits, n);
    describe_sockets(pid, waits, n);
    describe_pipes(waits, n);
}

int thread_wait_same(const struct thread_wait *a, const struct thread_wait *b)
{
    if (!a || !b) return a == b;
    if (a->nr != b->nr) return 0;
    if (a->futex || b->futex) return a->futex == b->futex;
    if (a->inode || b->inode) return a->inode == b->inode;
    return strcmp(a->call, b->call) == 0 && strcmp(a->object, b->object) == 0;
}

void thread_wait_describe(const struct thread_wait *w, char *buf, size_t n)
{
    char since[64] = "";
    if (w->since >= 0) {
        char span[32];
        format_span(span, sizeof span, w->since);
        snprintf(since, sizeof since, ", last ran %s ago", span);
    }
    char peers[160] = "";
    if (w->npeers > 1) {
        size_t off = (size_t)snprintf(peers, sizeof peers, ", %d threads wait on it:", w->npeers + w->more_peers);
        for (int i = 0; i < w->npeers && off < sizeof peers; i++)
            off += (size_t)snprintf(peers + off, sizeof peers - off, " %d", w->peers[i]);
        if (w->more_peers && off < sizeof peers) snprintf(peers + off, sizeof peers - off, " ...");
    }
    if (w->object[0]) snprintf(buf, n, "%s on %s%s%s", w->call, w->object, peers, since);
    else snprintf(buf, n, "%s%s%s", w->call, peers, since);
}

void thread_wait_free(struct thread_wait *w)
{
    if (!w) return;
    for (int i = 0; i < w->nkernel; i++) free(w->kernel[i]);
    free(w->kernel);
    w->kernel = NULL;
    w->nkernel = 0;
}
