#include "watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/procstat.h"
#include "actions/target/signal_trap.h"
#include "util/clock.h"
#include "util/fileio.h"
#include "util/saved_file.h"
#include "util/text.h"
#include "watch_capture.h"

#define STAT_FDS_MAX 512

/* One process being watched. */
struct watched {
    int pid;
    unsigned long long starttime; /* with the pid, its identity: a reused pid is another process */
    char comm[64];
    int statfd; /* /proc/PID/stat kept open (a pread a round, no open and close); -1 past the budget */
    unsigned long long prev_ticks;
    double prev_t;
    struct watch_cond_state st[WATCH_CONDS_MAX];
    struct watch_history *hist; /* only when a growth condition needs it */
    int seen;                   /* in this round's listing */
};

/* A process of the listing that is not of the name and old enough not to exec into it any more: not looked at
 * again while its pid stays in the listing. Kept sorted by pid for the lookup. */
struct passed {
    int pid;
    int seen;
};

struct watch_state {
    const struct watch_config *c;
    struct watched *w;
    int nw, capw;
    struct passed *p;
    int np, capp, np_sorted;
    int captures, fired;
    double last_fire;
    unsigned long long written;
    long hz, page;
    int open_fds; /* stat files kept open: at most STAT_FDS_MAX, so a large name or cgroup never runs out */
    int need_fds, need_hist;
};

const char *watch_event_name(enum watch_event_kind kind)
{
    static const char *const names[] = {"watching", "waiting", "trigger", "capture", "skipped", "failed", "exited",
                                        "done"};
    return kind <= WATCH_EV_DONE ? names[kind] : "?";
}

static void emit(const struct watch_state *s, struct watch_event *e)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    e->wall = (double)ts.tv_sec + ts.tv_nsec / 1e9;
    if (s->c->on_event) s->c->on_event(s->c->arg, e);
}

static void emit_simple(const struct watch_state *s, enum watch_event_kind kind, const struct watched *w,
                        const char *msg)
{
    struct watch_event e = {.kind = kind, .pause_ms = -1};
    if (w) {
        e.pid = w->pid;
        snprintf(e.comm, sizeof e.comm, "%s", w->comm);
    }
    snprintf(e.msg, sizeof e.msg, "%s", msg ? msg : "");
    e.captures = s->captures;
    emit(s, &e);
}

/* ---- the processes the target names ---- */

static struct watched *find_watched(struct watch_state *s, int pid)
{
    for (int i = 0; i < s->nw; i++)
        if (s->w[i].pid == pid) return &s->w[i];
    return NULL;
}

static struct watched *add_watched(struct watch_state *s, const struct procstat *ps)
{
    if (s->nw == s->capw) {
        int cap = s->capw ? s->capw * 2 : 8;
        struct watched *w = realloc(s->w, cap * sizeof *w);
        if (!w) return NULL;
        s->w = w;
        s->capw = cap;
    }
    struct watched *w = &s->w[s->nw];
    memset(w, 0, sizeof *w);
    if (s->need_hist && !(w->hist = calloc(1, sizeof *w->hist))) return NULL;
    w->pid = ps->pid;
    w->starttime = ps->starttime;
    snprintf(w->comm, sizeof w->comm, "%s", ps->comm);
    w->prev_t = -1;
    w->statfd = -1;
    if (s->open_fds < STAT_FDS_MAX) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/stat", ps->pid);
        if ((w->statfd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) s->open_fds++;
    }
    for (int i = 0; i < WATCH_CONDS_MAX; i++) w->st[i].since = -1;
    s->nw++;
    emit_simple(s, WATCH_EV_WATCHING, w, NULL);
    return w;
}

static void drop_watched(struct watch_state *s, int i, const char *why)
{
    emit_simple(s, WATCH_EV_EXITED, &s->w[i], why);
    free(s->w[i].hist);
    if (s->w[i].statfd >= 0) {
        close(s->w[i].statfd);
        s->open_fds--;
    }
    s->w[i] = s->w[--s->nw];
}

/* Whether pid is of the name: its comm, or the last part of its argv[0] (a comm is cut at 15 bytes). */
static int is_of_name(int pid, const struct procstat *ps, const char *name)
{
    if (strcmp(ps->comm, name) == 0) return 1;
    char path[64], argv0[4096];
    snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    ssize_t n = fileio_read_at(AT_FDCWD, path, argv0, sizeof argv0);
    if (n <= 0) return 0;
    argv0[n < (ssize_t)sizeof argv0 ? n : (ssize_t)sizeof argv0 - 1] = '\0';
    const char *slash = strrchr(argv0, '/');
    return strcmp(slash ? slash + 1 : argv0, name) == 0;
}

static int passed_cmp(const void *a, const void *b)
{
    const struct passed *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

static struct passed *find_passed(struct watch_state *s, int pid)
{
    struct passed key = {pid, 0};
    struct passed *p = s->np_sorted ? bsearch(&key, s->p, s->np_sorted, sizeof *s->p, passed_cmp) : NULL;
    for (int i = s->np_sorted; !p && i < s->np; i++)
        if (s->p[i].pid == pid) p = &s->p[i];
    return p;
}

static void add_passed(struct watch_state *s, int pid)
{
    if (s->np == s->capp) {
        int cap = s->capp ? s->capp * 2 : 256;
        struct passed *p = realloc(s->p, cap * sizeof *p);
        if (!p) return; /* looked at again next round: costs a read, loses nothing */
        s->p = p;
        s->capp = cap;
    }
    s->p[s->np++] = (struct passed){pid, 1};
}

/* After a listing: what was not in it is forgotten (its pid may come back as another process), the rest sorted. */
static void prune_passed(struct watch_state *s)
{
    int n = 0;
    for (int i = 0; i < s->np; i++)
        if (s->p[i].seen) s->p[n++] = (struct passed){s->p[i].pid, 0};
    s->np = n;
    qsort(s->p, n, sizeof *s->p, passed_cmp);
    s->np_sorted = n;
}

/* Seconds since boot, for a process's age. */
static double uptime_seconds(void)
{
    char buf[64];
    ssize_t n = fileio_read_at(AT_FDCWD, "/proc/uptime", buf, sizeof buf - 1);
    if (n <= 0) return 0;
    buf[n] = '\0';
    return strtod(buf, NULL);
}

/* One candidate pid of a name or cgroup listing. */
static void consider(struct watch_state *s, int pid, double uptime)
{
    struct watched *w = find_watched(s, pid);
    if (w) {
        w->seen = 1;
        return;
    }
    struct passed *p = find_passed(s, pid);
    if (p) {
        p->seen = 1;
        return;
    }
    struct procstat ps;
    if (procstat_read(pid, 0, &ps) < 0) return;
    if (!(ps.flags & PROCSTAT_PF_KTHREAD) && (!s->c->name || is_of_name(pid, &ps, s->c->name))) {
        if ((w = add_watched(s, &ps))) w->seen = 1;
        return;
    }
    /* A process younger than two seconds may still exec into the name (a shell's child): looked at again. */
    if ((ps.flags & PROCSTAT_PF_KTHREAD) || uptime - (double)ps.starttime / (double)s->hz > 2.0) add_passed(s, pid);
}

/* The processes of the name (every /proc entry) or of the cgroup (its cgroup.procs) this round. */
static void list_targets(struct watch_state *s)
{
    double uptime = uptime_seconds();
    if (s->c->cgroup) {
        char path[4200];
        snprintf(path, sizeof path, "%s%s/cgroup.procs", s->c->cgroup[0] == '/' &&
                 strncmp(s->c->cgroup, "/sys/fs/cgroup", 14) == 0 ? "" : "/sys/fs/cgroup/", s->c->cgroup);
        FILE *f = fopen(path, "re");
        if (!f) return;
        char line[32];
        int pid;
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = '\0';
            if (text_parse_pid(line, &pid) == 0) consider(s, pid, uptime);
        }
        fclose(f);
        return;
    }
    DIR *d = opendir("/proc");
    if (!d) return;
    struct dirent *de;
    int pid;
    while ((de = readdir(d))) {
        if (text_parse_pid(de->d_name, &pid) < 0 || pid == getpid()) continue;
        consider(s, pid, uptime);
    }
    closedir(d);
    prune_passed(s);
}

/* ---- samples ---- */

static long count_fds(int pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", pid);
    DIR *d = opendir(path);
    if (!d) return -1;
    long n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

/* Samples w: 0, or -1 when it is gone (or its pid is another process's now). */
static int sample(struct watch_state *s, struct watched *w, struct watch_sample *out)
{
    struct procstat ps;
    double now = clock_monotonic_seconds();
    char buf[1024];
    ssize_t n = w->statfd >= 0 ? fileio_pread_once(w->statfd, buf, sizeof buf - 1) : -1;
    int got = n > 0 ? procstat_parse(buf, (size_t)n, &ps) : procstat_read(w->pid, 0, &ps);
    if (got < 0 || ps.starttime != w->starttime || ps.state == 'Z' || ps.state == 'X')
        return -1;
    unsigned long long ticks = ps.utime + ps.stime;
    memset(out, 0, sizeof *out);
    out->t = now;
    out->cpu_pct = -1;
    if (w->prev_t >= 0 && now > w->prev_t) {
        out->cpu_pct = (double)(ticks - w->prev_ticks) / (double)s->hz / (now - w->prev_t) * 100.0;
        out->interval_start = w->prev_t;
    }
    w->prev_ticks = ticks;
    w->prev_t = now;
    out->rss = ps.rss > 0 ? (unsigned long long)ps.rss * (unsigned long long)s->page : 0;
    out->threads = ps.num_threads;
    out->fds = s->need_fds ? count_fds(w->pid) : -1;
    snprintf(w->comm, sizeof w->comm, "%s", ps.comm);
    if (w->hist) watch_history_add(w->hist, now, out->rss);
    return 0;
}

/* ---- firing ---- */

/* DIR/<comm>_<pid>_<trigger>_<UTC time>, the name every capture of one firing shares. */
static void firing_base(const struct watch_state *s, const struct watched *w, const char *trigger, char *buf,
                        size_t n)
{
    char comm[64], when[32];
    saved_file_comm(w->pid, comm, sizeof comm);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(buf, n, "%s/%s_%d_%s_%s", s->c->dir, comm, w->pid, trigger, when);
}

static const struct watch_action default_action = {.kind = WATCH_DO_DUMP};

static void fire(struct watch_state *s, struct watched *w, const struct watch_cond *cond, double value, double held,
                 struct signal_trap *trap)
{
    struct watch_event e = {.kind = WATCH_EV_TRIGGER, .pid = w->pid, .cond = cond, .value = value, .held = held,
                            .pause_ms = -1};
    snprintf(e.comm, sizeof e.comm, "%s", w->comm);
    if (trap && trap->hit_sig)
        snprintf(e.msg, sizeof e.msg, "in thread %d, si_code %d, address %p", trap->hit_tid, trap->hit_info.si_code,
                 trap->hit_info.si_addr);
    else if (trap)
        snprintf(e.msg, sizeof e.msg, "thread %d exiting", trap->hit_tid);
    emit(s, &e);
    char base[4200], valtext[64], last[4096] = "";
    watch_cond_format_value(cond, value, valtext, sizeof valtext);
    firing_base(s, w, cond->kind == WATCH_SIGNAL ? valtext : watch_cond_name(cond->kind), base, sizeof base);
    int n = s->c->nactions ? s->c->nactions : 1;
    for (int i = 0; i < n && !(s->c->cancel && *s->c->cancel); i++) {
        const struct watch_action *a = s->c->nactions ? &s->c->actions[i] : &default_action;
        struct watch_firing f = {w->pid, base, watch_cond_name(cond->kind), valtext, last, trap};
        struct watch_event ce = {.pid = w->pid, .cond = cond, .value = value};
        snprintf(ce.comm, sizeof ce.comm, "%s", w->comm);
        watch_capture_take(s->c, a, &f, &s->written, &ce);
        if (ce.kind == WATCH_EV_CAPTURE && ce.file[0]) snprintf(last, sizeof last, "%s", ce.file);
        emit(s, &ce);
    }
    s->captures++;
}

/* Evaluates every condition on w (each keeps its own run) and fires on the first that holds, when the watch may. */
static void evaluate(struct watch_state *s, struct watched *w, const struct watch_sample *smp)
{
    int hit = -1;
    double value = 0, held = 0;
    for (int i = 0; i < s->c->nconds; i++) {
        double v, h;
        if (watch_cond_eval(&s->c->conds[i], &w->st[i], smp, w->hist, &v, &h) && hit < 0) {
            hit = i;
            value = v;
            held = h;
        }
    }
    if (hit < 0 || s->captures >= s->c->count) return;
    if (s->fired && smp->t - s->last_fire < s->c->every - 0.05) return;
    s->fired = 1;
    s->last_fire = smp->t;
    fire(s, w, &s->c->conds[hit], value, held, NULL);
    if (s->c->conds[hit].kind == WATCH_CPU || s->c->conds[hit].kind == WATCH_CPU_BELOW)
        w->st[hit].since = -1; /* the next firing needs the condition to hold its seconds again */
    w->prev_t = clock_monotonic_seconds(); /* the capture's own time is not the process's CPU */
}

/* One round: the targets listed, each sampled and evaluated. Returns 1 when the watch is over. */
static int round_once(struct watch_state *s, int *status)
{
    int follows = s->c->name || s->c->cgroup;
    for (int i = 0; i < s->nw; i++) s->w[i].seen = !follows;
    if (follows) list_targets(s);
    for (int i = 0; i < s->nw && s->captures < s->c->count;) {
        struct watched *w = &s->w[i];
        struct watch_sample smp;
        if (!w->seen || sample(s, w, &smp) < 0) {
            int left = !w->seen && s->c->cgroup && kill(w->pid, 0) == 0;
            drop_watched(s, i, left ? "left the cgroup" : "the process is gone");
            if (!follows) {
                *status = 1;
                return 1;
            }
            continue;
        }
        evaluate(s, w, &smp);
        i++;
    }
    return s->captures >= s->c->count;
}

static void free_state(struct watch_state *s)
{
    for (int i = 0; i < s->nw; i++) {
        free(s->w[i].hist);
        if (s->w[i].statfd >= 0) close(s->w[i].statfd);
    }
    free(s->w);
    free(s->p);
}

/* ---- signals and exits: the process held at the moment ---- */

static int arm(struct watch_state *s, struct signal_trap *t, const struct watch_cond *sigc,
               const struct watch_cond *exitc, char *err, size_t errlen)
{
    if (s->c->name || s->c->cgroup) {
        snprintf(err, errlen, "--signal and --exit watch one PID (not --name or --cgroup)");
        return -1;
    }
    char why[512];
    if (signal_trap_arm(t, s->c->pid, sigc ? sigc->signals : 0, exitc != NULL, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    return 0;
}

/* Waits on the trap until the next round. On a hit: the firing with the process held, then the release (the
 * signal delivered as it came), and the trap armed again if the process lives on and more firings are wanted.
 * Returns 1 when the watch is over. */
static int trap_until(struct watch_state *s, struct signal_trap *t, const struct watch_cond *sigc,
                      const struct watch_cond *exitc, double seconds, int *armed, int *status)
{
    char err[512];
    int r = signal_trap_wait(t, seconds, s->c->cancel, err, sizeof err);
    if (r == 0) return 0;
    if (r < 0) { /* gone: the next round says so */
        signal_trap_release(t);
        *armed = 0;
        return 0;
    }
    struct watched *w = s->nw ? &s->w[0] : NULL;
    if (w && s->captures < s->c->count) {
        const struct watch_cond *c = t->hit_sig ? sigc : exitc;
        int code = t->exit_code;
        double value = t->hit_sig ? t->hit_sig : WIFEXITED(code) ? WEXITSTATUS(code) : 128 + WTERMSIG(code);
        s->fired = 1;
        s->last_fire = clock_monotonic_seconds();
        fire(s, w, c, value, 0, t);
    }
    int pid = t->pid;
    signal_trap_release(t);
    *armed = 0;
    if (s->captures >= s->c->count) return 1;
    char why[512];
    if (kill(pid, 0) == 0 && signal_trap_arm(t, pid, sigc ? sigc->signals : 0, exitc != NULL, why, sizeof why) == 0)
        *armed = 1;
    (void)status;
    return 0;
}

int watch_run(const struct watch_config *c, char *err, size_t errlen)
{
    struct watch_state s = {.c = c, .hz = sysconf(_SC_CLK_TCK), .page = sysconf(_SC_PAGESIZE)};
    s.need_fds = watch_conds_need_fds(c->conds, c->nconds);
    for (int i = 0; i < c->nconds; i++)
        if (c->conds[i].kind == WATCH_RSS_GROWTH) s.need_hist = 1;
    if (c->nconds == 0) {
        snprintf(err, errlen, "no condition: give at least one of --cpu, --cpu-below, --rss, --rss-growth, "
                 "--threads, --fds");
        return -1;
    }
    if (!c->name && !c->cgroup) {
        struct procstat ps;
        if (procstat_read(c->pid, 0, &ps) < 0) {
            snprintf(err, errlen, "no process %d", c->pid);
            return -1;
        }
        if (!add_watched(&s, &ps)) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    const struct watch_cond *sigc = NULL, *exitc = NULL;
    for (int i = 0; i < c->nconds; i++) {
        if (c->conds[i].kind == WATCH_SIGNAL) sigc = &c->conds[i];
        if (c->conds[i].kind == WATCH_EXIT) exitc = &c->conds[i];
    }
    struct signal_trap trap;
    int armed = 0;
    if ((sigc || exitc) && arm(&s, &trap, sigc, exitc, err, errlen) < 0) {
        free_state(&s);
        return -1;
    }
    armed = sigc || exitc;
    int status = 0, waiting_said = 0;
    double next = clock_monotonic_seconds();
    while (!(c->cancel && *c->cancel)) {
        if (round_once(&s, &status)) break;
        if (s.nw == 0 && !waiting_said) {
            emit_simple(&s, WATCH_EV_WAITING, NULL, c->name ? c->name : c->cgroup);
            waiting_said = 1;
        } else if (s.nw) {
            waiting_said = 0;
        }
        /* The next round on the interval's grid: a capture's time is not added to every later interval. */
        double now = clock_monotonic_seconds();
        next += c->interval;
        if (next < now) next = now + c->interval * 0.5;
        if (!armed) {
            clock_sleep(next - now, c->cancel);
            continue;
        }
        int r = trap_until(&s, &trap, sigc, exitc, next - now, &armed, &status);
        if (r) break;
    }
    if (armed) signal_trap_release(&trap);
    char done[128];
    snprintf(done, sizeof done, "%d capture%s taken%s", s.captures, s.captures == 1 ? "" : "s",
             c->cancel && *c->cancel ? ", interrupted" : status ? ", the process is gone" : "");
    emit_simple(&s, WATCH_EV_DONE, NULL, done);
    free_state(&s);
    return status;
}
