#include "hotspot_attach.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/procstat.h"
#include "collect/runtime.h"
#include "util/clock.h"
#include "util/fileio.h"
#include "util/pidfd.h"
#include "hotspot_parse.h"
#include "hsperf.h"

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

#define GRACE_SECONDS 0.5 /* the helper keeps the deadline itself; the parent kills it only this much later */

/* ---- the checks, from /proc ---- */

/* The text after "Key:" on its line of a status file, or NULL. */
static const char *status_field(const char *status, const char *key)
{
    size_t k = strlen(key);
    for (const char *p = status; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, key, k) == 0 && p[k] == ':') return p + k + 1;
    return NULL;
}

/* The n-th (0-based) number of a status line such as "Uid:\t0\t1000\t...". */
static long long status_number(const char *v, int n)
{
    for (int i = 0; v; i++) {
        while (*v == ' ' || *v == '\t') v++;
        if (*v < '0' || *v > '9') return -1;
        char *end;
        long long x = strtoll(v, &end, 10);
        if (i == n) return x;
        v = end;
    }
    return -1;
}

/* The last number of a line such as "NStgid:\t4711\t1". */
static long long status_last_number(const char *v)
{
    long long last = -1;
    while (v && *v && *v != '\n') {
        while (*v == ' ' || *v == '\t') v++;
        if (*v < '0' || *v > '9') break;
        char *end;
        last = strtoll(v, &end, 10);
        v = end;
    }
    return last;
}

/* The DisableAttachMechanism setting among options separated by NULs or blanks, the last one winning over prev:
 * 1 disabled, 0 enabled, prev when none is there. */
static int attach_flag(const char *s, size_t n, int prev)
{
    for (size_t i = 0; i < n;) {
        while (i < n && (s[i] == '\0' || isspace((unsigned char)s[i]))) i++;
        size_t j = i;
        while (j < n && s[j] != '\0' && !isspace((unsigned char)s[j])) j++;
        const char *w = s + i;
        size_t wn = j - i;
#define IS(lit) (wn == sizeof lit - 1 && memcmp(w, lit, wn) == 0)
        if (IS("-XX:+DisableAttachMechanism") || IS("-XX:DisableAttachMechanism=true")) prev = 1;
        else if (IS("-XX:-DisableAttachMechanism") || IS("-XX:DisableAttachMechanism=false")) prev = 0;
#undef IS
        i = j;
    }
    return prev;
}

static int has_word(const char *s, size_t n, const char *word)
{
    size_t k = strlen(word);
    for (size_t i = 0; i + k <= n; i++)
        if ((i == 0 || s[i - 1] == '\0') && memcmp(s + i, word, k) == 0 && (i + k == n || s[i + k] == '\0'))
            return 1;
    return 0;
}

/* The value of NAME in an environ block, or NULL; *len gets its length. */
static const char *env_value(const char *env, size_t n, const char *name, size_t *len)
{
    size_t k = strlen(name);
    for (size_t i = 0; i < n;) {
        size_t e = i;
        while (e < n && env[e]) e++;
        if (e - i > k && memcmp(env + i, name, k) == 0 && env[i + k] == '=') {
            *len = e - i - k - 1;
            return env + i + k + 1;
        }
        i = e + 1;
    }
    return NULL;
}

/* One place options came from, named for the reason a refusal gives. */
struct option_source {
    const char *text;
    size_t len;
    const char *name;
};

/* Where the JVM's recorded arguments got a DisableAttachMechanism setting, as far as /proc shows. */
static const char *vm_args_origin(int setting, const char *cmd, size_t cn, const char *jdk, size_t jn)
{
    if (cmd && attach_flag(cmd, cn, -1) == setting) return "command line";
    if (jdk && attach_flag(jdk, jn, -1) == setting) return "JDK_JAVA_OPTIONS";
    return "an @argfile: the JVM's arguments as its hsperfdata records them";
}

/* Whether attach is disabled by the options the JVM read, in its order: JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS (the
 * launcher puts them before the command line's), the command line, _JAVA_OPTIONS (last, overriding). The middle
 * two are taken from the JVM's own record of its arguments (hsperf: java.rt.vmArgs) when it keeps one, so that
 * an @argfile is seen; the command line is what /proc shows otherwise. *where gets which one said so. */
static int attach_disabled(const struct hotspot_target *t, const char **where, int *xrs)
{
    ssize_t cn = 0, en = 0;
    char *cmd = fileio_read_proc(AT_FDCWD, t->pid, "cmdline", 1 << 20, &cn);
    char *env = fileio_read_proc(AT_FDCWD, t->pid, "environ", 1 << 20, &en);
    size_t pn = 0, tn = 0, jn = 0, on = 0;
    unsigned char *perf = hsperf_read(t->pid, t->nspid, t->uid, &pn);
    enum { VM_ARGS_MAX = 1 << 16 };
    char *vm_args = perf ? malloc(VM_ARGS_MAX) : NULL;
    int have_args = vm_args && hsperf_string(perf, pn, "java.rt.vmArgs", vm_args, VM_ARGS_MAX) >= 0;
    free(perf);
    const char *tool = env ? env_value(env, (size_t)en, "JAVA_TOOL_OPTIONS", &tn) : NULL;
    const char *jdk = env ? env_value(env, (size_t)en, "JDK_JAVA_OPTIONS", &jn) : NULL;
    const char *over = env ? env_value(env, (size_t)en, "_JAVA_OPTIONS", &on) : NULL;

    struct option_source src[4];
    int n = 0;
    if (tool) src[n++] = (struct option_source){tool, tn, "JAVA_TOOL_OPTIONS"};
    if (have_args) {
        size_t vn = strlen(vm_args);
        src[n++] = (struct option_source){vm_args, vn,
                                          vm_args_origin(attach_flag(vm_args, vn, -1), cmd, (size_t)cn, jdk, jn)};
    } else {
        if (jdk) src[n++] = (struct option_source){jdk, jn, "JDK_JAVA_OPTIONS"};
        if (cmd) src[n++] = (struct option_source){cmd, (size_t)cn, "command line"};
    }
    if (over) src[n++] = (struct option_source){over, on, "_JAVA_OPTIONS"};
    int v = -1;
    for (int i = 0; i < n; i++) {
        int next = attach_flag(src[i].text, src[i].len, v);
        if (next != v) *where = src[i].name;
        v = next;
    }
    *xrs = cmd && has_word(cmd, (size_t)cn, "-Xrs");
    free(vm_args);
    free(cmd);
    free(env);
    return v == 1;
}

/* What starting the listener needs, read only when it must be started (a JVM with thousands of threads has a long
 * maps file): libjvm.so mapped (or it is not a JVM at all: -ENOTSUP), then may_trigger, or why_no_trigger. */
static int trigger_check(struct hotspot_target *t, char *why, size_t whylen)
{
    char *maps = fileio_read_proc(AT_FDCWD, t->pid, "maps", 16 << 20, NULL);
    if (!maps) {
        int e = errno;
        snprintf(why, whylen, "cannot read /proc/%d/maps: %s", t->pid, strerror(e));
        return e == ENOENT ? -ESRCH : -e;
    }
    int jvm = runtime_maps_has_jvm(maps);
    free(maps);
    if (!jvm) {
        snprintf(why, whylen, "process %d is not a JVM (no libjvm.so mapped)", t->pid);
        return -ENOTSUP;
    }
    const char *where = "";
    int xrs = 0;
    t->trigger_checked = 1;
    if (attach_disabled(t, &where, &xrs))
        snprintf(t->why_no_trigger, sizeof t->why_no_trigger,
                 "attach disabled: the JVM runs with -XX:+DisableAttachMechanism (%s)", where);
    else if (!(t->sig_caught & (1ULL << (SIGQUIT - 1))))
        snprintf(t->why_no_trigger, sizeof t->why_no_trigger, "%s",
                 xrs ? "the JVM runs with -Xrs: it does not catch SIGQUIT, which would kill it, so diagtop cannot "
                       "start its attach listener"
                     : "the JVM does not catch SIGQUIT (yet: still starting?), which would kill it, so diagtop "
                       "cannot start its attach listener now");
    else
        t->may_trigger = 1;
    return 0;
}

int hotspot_attach_check(int pid, struct hotspot_target *t, char *why, size_t whylen)
{
    memset(t, 0, sizeof *t);
    t->pid = pid;
    struct procstat ps;
    char *status = fileio_read_proc(AT_FDCWD, pid, "status", 16384, NULL);
    if (!status || procstat_read(pid, 0, &ps) < 0) {
        free(status);
        snprintf(why, whylen, "no process %d", pid);
        return -ESRCH;
    }
    t->start_ticks = ps.starttime;
    const char *state = status_field(status, "State");
    long long uid = status_number(status_field(status, "Uid"), 1);
    long long gid = status_number(status_field(status, "Gid"), 1);
    long long nspid = status_last_number(status_field(status, "NStgid"));
    const char *cgt = status_field(status, "SigCgt");
    unsigned long long caught = cgt ? strtoull(cgt, NULL, 16) : 0;
    while (state && (*state == ' ' || *state == '\t')) state++;
    int zombie = state && (*state == 'Z' || *state == 'X');
    free(status);
    if (zombie || uid < 0 || gid < 0) {
        snprintf(why, whylen, "process %d is %s", pid, zombie ? "a zombie" : "not readable");
        return zombie ? -ESRCH : -EIO;
    }
    t->uid = (uid_t)uid;
    t->gid = (gid_t)gid;
    t->nspid = nspid > 0 ? (int)nspid : pid;

    /* Who may connect: the JVM checks its peer with SO_PEERCRED and takes root or exactly its own euid and egid. */
    if (geteuid() != 0 && (geteuid() != t->uid || getegid() != t->gid)) {
        snprintf(why, whylen,
                 "process %d runs as uid %u gid %u, and a JVM takes attach requests only from root or that uid and "
                 "gid; diagtop runs as uid %u gid %u",
                 pid, (unsigned)t->uid, (unsigned)t->gid, (unsigned)geteuid(), (unsigned)getegid());
        return -EPERM;
    }
    t->sig_caught = caught;
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/root/tmp/.java_pid%d", pid, t->nspid);
    struct stat st;
    t->listening = lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid == t->uid;
    if (t->listening) return 0; /* what starting the listener needs is checked if it turns out stale */
    int rc = trigger_check(t, why, whylen);
    if (rc == 0 && !t->may_trigger) {
        snprintf(why, whylen, "%s", t->why_no_trigger);
        rc = -ENOTSUP;
    }
    return rc;
}

/* ---- the helper: a forked child that does the attach and pipes the reply back ---- */

/* Messages on the pipe: a head, then len bytes. */
enum msg_type { MSG_DATA = 1, MSG_TRIGGER, MSG_TRIGGER_GONE, MSG_RESULT };
struct msg_head {
    uint32_t type, len;
};

enum outcome {
    OUT_OK,            /* the reply, whole, up to EOF */
    OUT_NOT_LISTENING, /* no socket (or a stale one) and no safe way to start the listener */
    OUT_CREDS,         /* cannot take the JVM's uid and gid */
    OUT_TRIGGER,       /* cannot create the trigger file */
    OUT_SIGNAL,        /* SIGQUIT failed */
    OUT_DIED,          /* the JVM exited while we waited for its socket */
    OUT_NO_SOCKET,     /* the socket never appeared */
    OUT_CONNECT,
    OUT_SEND,
    OUT_TIMEOUT,       /* no complete reply in time */
    OUT_TOO_BIG,
    OUT_READ,
    OUT_EMPTY,         /* the JVM closed without a byte: it refused our credentials */
};

struct child_result {
    int32_t outcome, err, triggered;
};

struct child_args {
    int pidfd, tmpfd, cwdfd, wr;
    uid_t uid;
    gid_t gid;
    int drop;        /* take the JVM's uid and gid (diagtop runs as root) */
    int may_trigger;
    pid_t parent;
    const char *sock_name, *trig_name;
    const char *req;
    size_t reqlen;
    double deadline; /* CLOCK_MONOTONIC seconds */
};

/* What the helper calls are system calls and plain arithmetic: it is a fork of a multi-threaded process. */
static void put(const struct child_args *a, uint32_t type, const void *data, uint32_t len)
{
    struct msg_head h = {type, len};
    if (fileio_write_full(a->wr, &h, sizeof h) < 0 || (len && fileio_write_full(a->wr, data, len) < 0))
        _exit(3); /* the parent is gone */
}

static int ms_until(double deadline)
{
    double r = deadline - clock_monotonic_seconds();
    return r <= 0 ? 0 : r > 3600 ? 3600000 : (int)(r * 1000.0) + 1;
}

static int socket_up(const struct child_args *a)
{
    struct stat st;
    return fstatat(a->tmpfd, a->sock_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode) &&
           st.st_uid == a->uid;
}

/* Connects to the socket by a name relative to the JVM's /tmp (a descriptor opened while privileged): unix sockets
 * have no connectat, but the helper's working directory is its own. */
static int connect_socket(const struct child_args *a, int *out)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -errno;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(a->sock_name);
    memcpy(sa.sun_path, a->sock_name, n + 1);
    if (fchdir(a->tmpfd) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    for (;;) {
        if (connect(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1)) == 0) {
            *out = fd;
            return 0;
        }
        int e = errno;
        if (e == EINTR) continue;
        if (e == EAGAIN && ms_until(a->deadline) > 0) { /* the listener's backlog is full: it is busy */
            poll(NULL, 0, 5);
            continue;
        }
        close(fd);
        return e == EAGAIN ? -ETIMEDOUT : -e;
    }
}

/* Creates .attach_pidN in the JVM's working directory, else in its /tmp. Returns 1 (created; *where: 0 cwd, 1
 * tmp), 0 (one is there already: someone else's attach is under way, and it is theirs to remove), or -errno. */
static int make_trigger(const struct child_args *a, int *where)
{
    int dirs[2] = {a->cwdfd, a->tmpfd}, last = ENOENT;
    for (int i = 0; i < 2; i++) {
        if (dirs[i] < 0) continue;
        int fd = fileio_create_private(dirs[i], a->trig_name, O_WRONLY);
        if (fd >= 0) {
            close(fd);
            *where = i;
            return 1;
        }
        if (fd == -EEXIST) return 0;
        last = -fd;
    }
    return -last;
}

static int send_quit(const struct child_args *a)
{
    return pidfd_signal(a->pidfd, SIGQUIT);
}

/* Starts the listener: trigger, SIGQUIT, then polls for the socket with growing sleeps (woken early if the JVM
 * exits), SIGQUIT once more halfway (as the JDK's own client does), trigger removed. */
static void start_listener(const struct child_args *a, struct child_result *res)
{
    int where = -1;
    int made = make_trigger(a, &where);
    if (made < 0) {
        *res = (struct child_result){OUT_TRIGGER, -made, 0};
        return;
    }
    if (made) {
        int32_t w = where;
        put(a, MSG_TRIGGER, &w, sizeof w);
    }
    int rc = send_quit(a);
    res->triggered = 1;
    double t0 = clock_monotonic_seconds(), half = t0 + (a->deadline - t0) / 2;
    long sleep_us = 250; /* the listener usually comes within 1-3 ms: 0.25, 0.5, 1, 2, ... up to 200 ms */
    int resent = 0;
    res->outcome = OUT_OK;
    while (rc == 0 && !socket_up(a)) {
        int left = ms_until(a->deadline);
        if (!left) {
            res->outcome = OUT_NO_SOCKET;
            break;
        }
        if (!resent && clock_monotonic_seconds() >= half) {
            resent = 1;
            rc = send_quit(a);
        }
        long us = sleep_us < (long)left * 1000 ? sleep_us : (long)left * 1000;
        struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
        struct pollfd pf = {a->pidfd, POLLIN, 0};
        if (ppoll(&pf, 1, &ts, NULL) > 0 && (pf.revents & POLLIN)) {
            res->outcome = OUT_DIED;
            break;
        }
        sleep_us = sleep_us * 2 > 200000 ? 200000 : sleep_us * 2;
    }
    if (rc < 0) *res = (struct child_result){OUT_SIGNAL, -rc, 1};
    if (made) {
        unlinkat(where == 0 ? a->cwdfd : a->tmpfd, a->trig_name, 0);
        put(a, MSG_TRIGGER_GONE, NULL, 0);
    }
}

static int send_request(const struct child_args *a, int fd)
{
    const char *p = a->req;
    size_t n = a->reqlen;
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) {
            int ms = ms_until(a->deadline);
            if (!ms) return -ETIMEDOUT;
            struct pollfd pf = {fd, POLLOUT, 0};
            poll(&pf, 1, ms);
            continue;
        }
        if (w < 0) return -errno;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void read_reply(const struct child_args *a, int fd, struct child_result *res)
{
    size_t bufsz = 256 << 10, total = 0;
    char *buf = mmap(NULL, bufsz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) {
        res->outcome = OUT_READ;
        res->err = ENOMEM;
        return;
    }
    for (;;) {
        int ms = ms_until(a->deadline);
        if (!ms) {
            res->outcome = OUT_TIMEOUT;
            break;
        }
        struct pollfd pf = {fd, POLLIN, 0};
        if (poll(&pf, 1, ms) <= 0) continue;
        ssize_t r = recv(fd, buf, bufsz, 0);
        if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (r <= 0) {
            res->outcome = total ? (r == 0 ? OUT_OK : OUT_READ) : OUT_EMPTY;
            res->err = r < 0 ? errno : 0;
            break;
        }
        if (total + (size_t)r > HOTSPOT_REPLY_MAX) {
            res->outcome = OUT_TOO_BIG;
            break;
        }
        total += (size_t)r;
        put(a, MSG_DATA, buf, (uint32_t)r);
    }
    munmap(buf, bufsz);
}

/* The parent's handlers (terminal restore, cancel flags) mean nothing here; the terminal's ^C and ^\ are the
 * parent's to act on (it kills this helper); a closed pipe is an error, not a signal. */
static void helper_reset_signals(void)
{
    struct sigaction dfl = {.sa_handler = SIG_DFL}, ign = {.sa_handler = SIG_IGN};
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP) sigaction(s, s == SIGPIPE || s == SIGINT || s == SIGQUIT ? &ign : &dfl, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Only its own descriptors: the rest of diagtop's (another request's files, the terminal's) are not for a process
 * that is about to take another user's ids. */
static void helper_close_other_fds(const struct child_args *a)
{
    int keep[4] = {a->pidfd, a->tmpfd, a->cwdfd, a->wr};
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            if (keep[j] < keep[i]) {
                int x = keep[i];
                keep[i] = keep[j];
                keep[j] = x;
            }
    unsigned lo = 3;
    for (int i = 0; i < 4; i++) {
        if (keep[i] < (int)lo) continue;
        if ((unsigned)keep[i] > lo) syscall(SYS_close_range, lo, (unsigned)keep[i] - 1, 0);
        lo = (unsigned)keep[i] + 1;
    }
    syscall(SYS_close_range, lo, ~0U, 0);
}

/* The attach protocol, step by step as jattach does it: find the listener's socket (or start the listener, when
 * there is none or a stale one and that is safe), connect, send the request, read the reply up to EOF. */
static void helper_exchange(const struct child_args *a, struct child_result *res)
{
    int fd = -1, rc = -ENOENT;
    if (socket_up(a)) rc = connect_socket(a, &fd);
    if (rc == -ENOENT || rc == -ECONNREFUSED) { /* no listener, or a stale socket of a JVM gone */
        if (!a->may_trigger) *res = (struct child_result){OUT_NOT_LISTENING, -rc, 0};
        else {
            start_listener(a, res);
            if (res->outcome == OUT_OK) rc = connect_socket(a, &fd);
        }
    }
    if (res->outcome == OUT_OK && rc < 0) {
        res->outcome = OUT_CONNECT;
        res->err = -rc;
    }
    if (res->outcome == OUT_OK && (rc = send_request(a, fd)) < 0) {
        res->outcome = rc == -ETIMEDOUT ? OUT_TIMEOUT : OUT_SEND;
        res->err = -rc;
    }
    if (res->outcome == OUT_OK) read_reply(a, fd, res);
    if (fd >= 0) close(fd);
}

static void child_main(const struct child_args *a)
{
    helper_reset_signals();
    helper_close_other_fds(a);
    struct child_result res = {OUT_OK, 0, 0};
    /* Raw system calls: they change this thread only, and this process has no other. Saved ids stay root's. */
    if (a->drop && (syscall(SYS_setgroups, 0, NULL) < 0 || syscall(SYS_setresgid, -1, a->gid, -1) < 0 ||
                    syscall(SYS_setresuid, -1, a->uid, -1) < 0)) {
        res = (struct child_result){OUT_CREDS, errno, 0};
        put(a, MSG_RESULT, &res, sizeof res);
        _exit(0);
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* after the id change, which clears it */
    if (getppid() != a->parent) _exit(2);
    helper_exchange(a, &res);
    put(a, MSG_RESULT, &res, sizeof res);
    _exit(0);
}

/* ---- the parent: waits for the helper with the deadline and the cancel flag ---- */

struct reader {
    struct msg_head head;
    size_t head_got, body_got;
    char small[64];          /* the bodies of messages other than data */
    char *data;              /* the reply */
    size_t n, cap;
    int trigger_where;       /* -1: no trigger of ours is there */
    int have_result, bad;
    struct child_result result;
};

/* Reads what the pipe holds now. Returns 1 at EOF, 0 otherwise. */
static int reader_drain(struct reader *rd, int fd)
{
    for (;;) {
        void *dst;
        size_t want;
        if (rd->head_got < sizeof rd->head) {
            dst = (char *)&rd->head + rd->head_got;
            want = sizeof rd->head - rd->head_got;
        } else if (rd->head.type == MSG_DATA) {
            if (rd->n - rd->body_got + rd->head.len > HOTSPOT_REPLY_MAX || rd->head.len > (1u << 24)) {
                rd->bad = 1;
                return 1;
            }
            if (rd->n + (rd->head.len - rd->body_got) + 1 > rd->cap) {
                size_t cap = rd->cap ? rd->cap : 64 << 10;
                while (cap < rd->n + (rd->head.len - rd->body_got) + 1) cap *= 2;
                char *p = realloc(rd->data, cap);
                if (!p) {
                    rd->bad = 1;
                    return 1;
                }
                rd->data = p;
                rd->cap = cap;
            }
            dst = rd->data + rd->n;
            want = rd->head.len - rd->body_got;
        } else {
            if (rd->head.len > sizeof rd->small) {
                rd->bad = 1;
                return 1;
            }
            dst = rd->small + rd->body_got;
            want = rd->head.len - rd->body_got;
        }
        if (want) {
            ssize_t r = read(fd, dst, want);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) return 0; /* EAGAIN: nothing more for now */
            if (r == 0) return 1;
            if (rd->head_got < sizeof rd->head) {
                rd->head_got += (size_t)r;
                continue;
            }
            rd->body_got += (size_t)r;
            if (rd->head.type == MSG_DATA) rd->n += (size_t)r;
            if (rd->body_got < rd->head.len) continue;
        }
        /* a whole message */
        if (rd->head.type == MSG_TRIGGER && rd->head.len == sizeof(int32_t)) memcpy(&rd->trigger_where, rd->small, 4);
        else if (rd->head.type == MSG_TRIGGER_GONE) rd->trigger_where = -1;
        else if (rd->head.type == MSG_RESULT && rd->head.len == sizeof rd->result) {
            memcpy(&rd->result, rd->small, sizeof rd->result);
            rd->have_result = 1;
        }
        rd->head_got = rd->body_got = 0;
    }
}

/* Waits for the helper to end (it does right after its result), killing it if it lingers; reaps it. */
static void reap(pid_t child, int child_pidfd, int kill_now)
{
    if (!kill_now && child_pidfd >= 0) {
        struct pollfd pf = {child_pidfd, POLLIN, 0};
        if (poll(&pf, 1, 1000) <= 0) kill_now = 1;
    }
    if (kill_now) kill(child, SIGKILL);
    while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {}
}

static int outcome_error(const struct hotspot_target *t, const struct child_result *res, double timeout, char *err,
                         size_t errlen)
{
    int e = res->err;
    switch (res->outcome) {
    case OUT_NOT_LISTENING:
        snprintf(err, errlen, "the JVM's attach listener is not running%s and diagtop will not start it: %s",
                 e == ECONNREFUSED ? " (stale socket)" : "", t->why_no_trigger);
        return -ENOTSUP;
    case OUT_CREDS:
        snprintf(err, errlen, "cannot take the JVM's uid %u and gid %u: %s", (unsigned)t->uid, (unsigned)t->gid,
                 strerror(e));
        return -EPERM;
    case OUT_TRIGGER:
        snprintf(err, errlen, "cannot create the attach trigger .attach_pid%d in the JVM's working directory or /tmp: %s",
                 t->nspid, strerror(e));
        return -e;
    case OUT_SIGNAL:
        snprintf(err, errlen, "cannot send SIGQUIT to %d: %s", t->pid, strerror(e));
        return -e;
    case OUT_DIED:
        snprintf(err, errlen, "process %d exited while its attach listener was starting", t->pid);
        return -ESRCH;
    case OUT_NO_SOCKET:
        snprintf(err, errlen,
                 "the JVM's attach listener did not start within %.1f s (no /tmp/.java_pid%d; attach may be disabled "
                 "by an option diagtop cannot see, such as -XX:Flags= or an @argfile)",
                 timeout, t->nspid);
        return -ETIMEDOUT;
    case OUT_CONNECT:
        if (e == ECONNREFUSED) snprintf(err, errlen, "the JVM's attach socket refuses connections (stale?)");
        else if (e == EACCES || e == EPERM)
            snprintf(err, errlen, "the JVM's attach socket refused diagtop (%s): it accepts only root or uid %u gid %u",
                     strerror(e), (unsigned)t->uid, (unsigned)t->gid);
        else snprintf(err, errlen, "cannot connect to the JVM's attach socket: %s", strerror(e));
        return -e;
    case OUT_SEND:
    case OUT_EMPTY:
        snprintf(err, errlen,
                 "the JVM closed the attach connection without answering (%s): it accepts only root or uid %u gid %u",
                 e ? strerror(e) : "no reply", (unsigned)t->uid, (unsigned)t->gid);
        return res->outcome == OUT_SEND ? -EPIPE : -EACCES;
    case OUT_TIMEOUT:
        snprintf(err, errlen, "no complete reply from the JVM within %.1f s", timeout);
        return -ETIMEDOUT;
    case OUT_TOO_BIG:
        snprintf(err, errlen, "the JVM's reply exceeds %u MiB", HOTSPOT_REPLY_MAX >> 20);
        return -EMSGSIZE;
    default:
        snprintf(err, errlen, "reading the JVM's reply: %s", strerror(e ? e : EIO));
        return -(e ? e : EIO);
    }
}

/* ---- one request: the parent's steps ---- */

#define REQUEST_MAX (2 + 17 + 1025 + 2)

/* "1" cmd arg1 arg2 arg3: always all five strings, or the JVM's one listener thread waits for the rest. */
static int build_request(const char *cmd, const char *arg1, char *req, size_t *rlp, char *err, size_t errlen)
{
    if (!arg1) arg1 = "";
    size_t cl = strlen(cmd), al = strlen(arg1);
    if (cl == 0 || cl > 16 || al > 1024) {
        snprintf(err, errlen, "request too long for the attach protocol (%zu and %zu bytes)", cl, al);
        return -EINVAL;
    }
    size_t rl = 0;
    memcpy(req, "1", 2), rl = 2;
    memcpy(req + rl, cmd, cl + 1), rl += cl + 1;
    memcpy(req + rl, arg1, al + 1), rl += al + 1;
    req[rl++] = '\0';
    req[rl++] = '\0';
    *rlp = rl;
    return 0;
}

/* One request's state in the parent: the descriptors it opens for the helper (-1: not open), the names the helper
 * looks for in the JVM's directories, and the clock. */
struct attempt {
    const struct hotspot_target *t;
    int pidfd, tmpfd, cwdfd, pfd[2];
    char sock_name[32], trig_name[32];
    double t0, timeout;
    const volatile sig_atomic_t *cancel;
};

/* The JVM pinned by a pidfd (and checked to be the process that was checked, not a new one with its pid), and its
 * /tmp and working directory, opened while diagtop still has its own credentials (a rootless container's files
 * need them); then the pipe the helper answers on. */
static int attempt_open(struct attempt *at, char *err, size_t errlen)
{
    const struct hotspot_target *t = at->t;
    char path[64];
    struct procstat ps;
    at->pidfd = pidfd_of(t->pid);
    if (at->pidfd < 0 || procstat_read(t->pid, 0, &ps) < 0 || ps.starttime != t->start_ticks) {
        snprintf(err, errlen, "process %d no longer exists", t->pid);
        return -ESRCH;
    }
    snprintf(path, sizeof path, "/proc/%d/root/tmp", t->pid);
    if ((at->tmpfd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        int rc = -errno;
        snprintf(err, errlen, "cannot open the JVM's /tmp (%s): %s", path, strerror(errno));
        return rc;
    }
    snprintf(path, sizeof path, "/proc/%d/cwd", t->pid);
    at->cwdfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC); /* may fail: the trigger then goes to /tmp */
    if (pipe2(at->pfd, O_CLOEXEC) < 0 || fcntl(at->pfd[0], F_SETFL, O_NONBLOCK) < 0) {
        int rc = -errno;
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return rc;
    }
    return 0;
}

static void attempt_close(struct attempt *at)
{
    if (at->pfd[0] >= 0) close(at->pfd[0]);
    if (at->pfd[1] >= 0) close(at->pfd[1]);
    if (at->cwdfd >= 0) close(at->cwdfd);
    if (at->tmpfd >= 0) close(at->tmpfd);
    if (at->pidfd >= 0) close(at->pidfd);
}

/* Forks the helper with everything it needs in hand (it takes the JVM's ids only when diagtop runs as root and the
 * JVM does not); the parent keeps only the pipe's read end, so that the helper's end of it is its own. */
static int helper_spawn(struct attempt *at, const char *req, size_t rl, pid_t *child, char *err, size_t errlen)
{
    const struct hotspot_target *t = at->t;
    struct child_args a = {
        .pidfd = at->pidfd, .tmpfd = at->tmpfd, .cwdfd = at->cwdfd, .wr = at->pfd[1],
        .uid = t->uid, .gid = t->gid, .drop = geteuid() == 0 && (t->uid != 0 || t->gid != 0),
        .may_trigger = t->may_trigger, .parent = getpid(),
        .sock_name = at->sock_name, .trig_name = at->trig_name, .req = req, .reqlen = rl,
        .deadline = at->t0 + at->timeout,
    };
    *child = fork();
    if (*child < 0) {
        int rc = -errno;
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return rc;
    }
    if (*child == 0) child_main(&a);
    close(at->pfd[1]);
    at->pfd[1] = -1;
    return 0;
}

/* How waiting for the helper ended: its result, EOF or garbage (the reader tells which), or one of the others. */
enum wait_end { WAIT_STOPPED, WAIT_CANCELLED, WAIT_LATE, WAIT_EXITED };

/* Reads the helper's messages until it has said all, in short slices: the cancel flag is set from another thread
 * or a signal handler. The hard deadline is the helper's own plus a grace. Another thread's fork may hold the
 * pipe's write end, so the helper's exit (its pidfd) also ends the wait, not EOF alone. */
static enum wait_end helper_wait(const struct attempt *at, struct reader *rd, int child_pidfd)
{
    double hard = at->t0 + at->timeout + GRACE_SECONDS;
    int eof = 0;
    while (!rd->have_result && !eof && !rd->bad) {
        if (at->cancel && *at->cancel) return WAIT_CANCELLED;
        int ms = ms_until(hard);
        if (!ms) return WAIT_LATE;
        struct pollfd pf[2] = {{at->pfd[0], POLLIN, 0}, {child_pidfd, POLLIN, 0}};
        poll(pf, child_pidfd >= 0 ? 2 : 1, ms < 50 ? ms : 50);
        eof = reader_drain(rd, at->pfd[0]);
        if (child_pidfd >= 0 && (pf[1].revents & POLLIN) && !rd->have_result) {
            reader_drain(rd, at->pfd[0]); /* it exited: what it wrote is all in the pipe */
            return WAIT_EXITED;
        }
    }
    return WAIT_STOPPED;
}

/* Waits for the helper, then leaves nothing behind: the helper reaped (killed when it sent no result) and a
 * trigger file it had no time to remove removed. */
static enum wait_end helper_collect(const struct attempt *at, pid_t child, struct reader *rd)
{
    int child_pidfd = pidfd_of(child);
    enum wait_end end = helper_wait(at, rd, child_pidfd);
    reap(child, child_pidfd, !rd->have_result);
    if (child_pidfd >= 0) close(child_pidfd);
    if (rd->trigger_where >= 0) /* the helper was stopped before it removed its trigger */
        unlinkat(rd->trigger_where == 0 ? at->cwdfd : at->tmpfd, at->trig_name, 0);
    return end;
}

/* The reply's status line (the JVM's result code for the command), then the text after it, moved to the front and
 * NUL-terminated (the buffer always has a byte to spare): r takes it. */
static int take_reply(struct reader *rd, struct hotspot_reply *r, char *err, size_t errlen)
{
    size_t off = 0;
    if (hotspot_parse_status(rd->data ? rd->data : "", rd->n, &r->status, &off) < 0) {
        snprintf(err, errlen, "the JVM's reply does not start with a status line");
        return -EPROTO;
    }
    r->len = rd->n - off;
    memmove(rd->data, rd->data + off, r->len);
    rd->data[r->len] = '\0';
    r->text = rd->data;
    rd->data = NULL;
    return 0;
}

/* What the request came to: the parent's own reasons first (cancel, deadline, a helper that broke), then the
 * helper's outcome, then the reply. */
static int request_verdict(const struct attempt *at, struct reader *rd, enum wait_end end, struct hotspot_reply *r,
                           int *stale, char *err, size_t errlen)
{
    if (end == WAIT_CANCELLED) {
        snprintf(err, errlen, "cancelled");
        return -ECANCELED;
    }
    if (end == WAIT_LATE) {
        snprintf(err, errlen, "no reply from the JVM within %.1f s (the attach helper was stopped)", at->timeout);
        return -ETIMEDOUT;
    }
    if (!rd->have_result) {
        snprintf(err, errlen, "the attach helper %s",
                 rd->bad ? "sent garbage" : end == WAIT_EXITED ? "died" : "stopped answering");
        return -EIO;
    }
    if (rd->result.outcome != OUT_OK) {
        *stale = rd->result.outcome == OUT_NOT_LISTENING && !at->t->trigger_checked;
        return outcome_error(at->t, &rd->result, at->timeout, err, errlen);
    }
    return take_reply(rd, r, err, errlen);
}

/* One helper, one request. *stale: the socket was there but refused, and starting the listener was not checked. */
static int request_once(const struct hotspot_target *t, const char *cmd, const char *arg1, double timeout,
                        const volatile sig_atomic_t *cancel, struct hotspot_reply *r, int *stale, char *err,
                        size_t errlen)
{
    memset(r, 0, sizeof *r);
    char req[REQUEST_MAX];
    size_t rl = 0;
    int rc = build_request(cmd, arg1, req, &rl, err, errlen);
    if (rc < 0) return rc;
    struct attempt at = {.t = t, .pidfd = -1, .tmpfd = -1, .cwdfd = -1, .pfd = {-1, -1},
                         .timeout = timeout > 0 ? timeout : 5.0, .cancel = cancel};
    at.t0 = clock_monotonic_seconds();
    snprintf(at.sock_name, sizeof at.sock_name, ".java_pid%d", t->nspid);
    snprintf(at.trig_name, sizeof at.trig_name, ".attach_pid%d", t->nspid);
    pid_t child;
    if ((rc = attempt_open(&at, err, errlen)) == 0 && (rc = helper_spawn(&at, req, rl, &child, err, errlen)) == 0) {
        struct reader rd = {.trigger_where = -1};
        enum wait_end end = helper_collect(&at, child, &rd);
        r->ms = (clock_monotonic_seconds() - at.t0) * 1000.0;
        r->triggered = rd.result.triggered;
        rc = request_verdict(&at, &rd, end, r, stale, err, errlen);
        free(rd.data);
    }
    attempt_close(&at);
    return rc;
}

int hotspot_attach_request(const struct hotspot_target *t, const char *cmd, const char *arg1, double timeout,
                           const volatile sig_atomic_t *cancel, struct hotspot_reply *r, char *err, size_t errlen)
{
    int stale = 0;
    double t0 = clock_monotonic_seconds();
    int rc = request_once(t, cmd, arg1, timeout, cancel, r, &stale, err, errlen);
    if (!stale) return rc;
    /* A stale socket (the JVM's was removed, or a JVM with this pid died): start the listener, if that is safe. */
    struct hotspot_target fresh = *t;
    if ((rc = trigger_check(&fresh, err, errlen)) < 0) return rc;
    if (!fresh.may_trigger) {
        snprintf(err, errlen, "the JVM's attach socket is stale and diagtop will not start its listener: %s",
                 fresh.why_no_trigger);
        return -ENOTSUP;
    }
    double left = timeout - (clock_monotonic_seconds() - t0);
    return request_once(&fresh, cmd, arg1, left > 0.5 ? left : 0.5, cancel, r, &stale, err, errlen);
}

void hotspot_reply_free(struct hotspot_reply *r)
{
    free(r->text);
    memset(r, 0, sizeof *r);
}
