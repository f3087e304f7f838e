#include "procinfo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/fileio.h"
#include "util/grow.h"
#include "util/tasks.h"
#include "procstat.h"
#include "sockets.h"

static const char *const section_names[] = {"general", "memory", "modules", "fds", "threads", "env", "io"};

const char *procinfo_section_name(enum procinfo_section s)
{
    for (int i = 0; i < 7; i++)
        if ((int)s == 1 << i) return section_names[i];
    return "?";
}

int procinfo_parse_sections(const char *list)
{
    int mask = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int found = 0;
        for (int i = 0; i < 7; i++)
            if (strcmp(tok, section_names[i]) == 0) mask |= 1 << i, found = 1;
        if (!found) return -1;
    }
    return mask ? mask : -1;
}

/* ---- parsers ---- */

/* The text after "Name:" on the line starting with Name, or NULL. */
static const char *line_value(const char *text, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, name, nl) == 0 && p[nl] == ':') return p + nl + 1;
    return NULL;
}

/* "VmRSS:\t  1234 kB" -> bytes, -1 when absent. */
static long long kb_field(const char *text, const char *name)
{
    const char *v = line_value(text, name);
    return v ? strtoll(v, NULL, 10) * 1024LL : -1;
}

void procinfo_parse_status(const char *text, struct pi_general *g, struct pi_memory *m)
{
    const char *v;
    if (g && (v = line_value(text, "Uid"))) sscanf(v, "%lld %lld", &g->ruid, &g->euid);
    if (g && (v = line_value(text, "Gid"))) sscanf(v, "%lld %lld", &g->rgid, &g->egid);
    if (g && (v = line_value(text, "NSpid"))) {
        char *end;
        g->nnspid = 0;
        for (long p; g->nnspid < 8 && (p = strtol(v, &end, 10)) > 0 && end != v; v = end)
            g->nspid[g->nnspid++] = (int)p;
    }
    if (!m) return;
    m->rss = kb_field(text, "VmRSS");
    m->hwm = kb_field(text, "VmHWM");
    m->rss_anon = kb_field(text, "RssAnon");
    m->rss_file = kb_field(text, "RssFile");
    m->rss_shmem = kb_field(text, "RssShmem");
    m->vm_size = kb_field(text, "VmSize");
    m->vm_peak = kb_field(text, "VmPeak");
    m->vm_data = kb_field(text, "VmData");
    m->vm_stk = kb_field(text, "VmStk");
    m->vm_lck = kb_field(text, "VmLck");
    m->vm_swap = kb_field(text, "VmSwap");
    m->huge = kb_field(text, "HugetlbPages");
}

void procinfo_parse_smaps_rollup(const char *text, struct pi_memory *m)
{
    m->pss = kb_field(text, "Pss");
    m->private_clean = kb_field(text, "Private_Clean");
    m->private_dirty = kb_field(text, "Private_Dirty");
    m->uss = m->private_clean >= 0 && m->private_dirty >= 0 ? m->private_clean + m->private_dirty : -1;
    m->swap = kb_field(text, "Swap");
    m->swap_pss = kb_field(text, "SwapPss");
    m->anon_huge = kb_field(text, "AnonHugePages");
}

int procinfo_parse_limits(const char *text, struct pi_limit *out, int max)
{
    /* "Limit                     Soft Limit           Hard Limit           Units     " columns at 26/47/68 */
    int n = 0;
    const char *line = strchr(text, '\n');
    while (line && *++line && n < max) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        if (len >= 47) {
            struct pi_limit *l = &out[n];
            memset(l, 0, sizeof *l);
            snprintf(l->name, sizeof l->name, "%.25s", line);
            for (int i = (int)strlen(l->name) - 1; i >= 0 && l->name[i] == ' '; i--) l->name[i] = '\0';
            if (sscanf(line + 25, "%31s %31s %15s", l->soft, l->hard, l->units) >= 2) n++;
        }
        line = eol;
    }
    return n;
}

void procinfo_parse_io(const char *text, struct pi_io *io)
{
#define IO(f) io->f = line_value(text, #f) ? strtoll(line_value(text, #f), NULL, 10) : -1
    IO(rchar);
    IO(wchar);
    IO(syscr);
    IO(syscw);
    IO(read_bytes);
    IO(write_bytes);
    IO(cancelled_write_bytes);
#undef IO
}

int procinfo_env_is_secret(const char *name)
{
    static const char *const words[] = {"SECRET", "TOKEN", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcasestr(name, words[i])) return 1;
    return 0;
}

/* ---- readers ---- */

static char *readlink_alloc(int pid, const char *name)
{
    char path[96], target[4096];
    snprintf(path, sizeof path, "/proc/%d/%s", pid, name);
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n < 0) return NULL;
    target[n] = '\0';
    return strdup(target);
}

static void set_err(char *buf, size_t n, const char *what, int e)
{
    snprintf(buf, n, "%s: %s", what, e == EACCES || e == EPERM ? "permission denied (another user's process)"
                                    : e == ESRCH || e == ENOENT ? "the process exited" : strerror(e));
}

static const char *policy_name(unsigned p)
{
    static const char *const names[] = {"other", "fifo", "rr", "batch", "iso", "idle", "deadline"};
    return p < sizeof names / sizeof names[0] ? names[p] : "?";
}

/* Identity and times from stat, the parent chain up to init. */
static void general_from_stat(struct pi_general *g, int pid, const struct procstat *ps, unsigned long long btime)
{
    long hz = sysconf(_SC_CLK_TCK);
    g->pid = pid;
    g->ppid = ps->ppid;
    snprintf(g->comm, sizeof g->comm, "%s", ps->comm);
    g->state = ps->state;
    g->utime = (double)ps->utime / hz;
    g->stime = (double)ps->stime / hz;
    g->cutime = (double)ps->cutime / hz;
    g->cstime = (double)ps->cstime / hz;
    g->nice = ps->nice;
    g->priority = ps->priority;
    g->threads = ps->num_threads;
    snprintf(g->policy, sizeof g->policy, "%s", policy_name(ps->policy));
    time_t start = (time_t)(btime + ps->starttime / (unsigned long long)hz);
    clock_format_iso8601(g->start_time, sizeof g->start_time, start);
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    g->age_seconds = (double)ts.tv_sec + ts.tv_nsec / 1e9 - (double)ps->starttime / hz;
    for (int p = ps->ppid; p > 0 && g->nancestors < 32;) {
        struct procstat aps;
        if (procstat_read(p, 0, &aps) < 0) break;
        g->ancestors[g->nancestors].pid = p;
        snprintf(g->ancestors[g->nancestors].comm, sizeof g->ancestors[0].comm, "%s", aps.comm);
        g->nancestors++;
        p = aps.ppid;
    }
}

/* Who it runs as (status), what it runs (exe, "(deleted)" noted apart), where, and its command line. */
static void general_program(struct pi_general *g, int pid)
{
    g->ruid = g->euid = g->rgid = g->egid = -1;
    char *status = fileio_read_proc(AT_FDCWD, pid, "status", 16384, NULL);
    if (status) procinfo_parse_status(status, g, NULL);
    free(status);
    if (g->euid >= 0) {
        struct passwd pw, *res = NULL;
        char pwbuf[4096];
        if (getpwuid_r((uid_t)g->euid, &pw, pwbuf, sizeof pwbuf, &res) == 0 && res)
            snprintf(g->user, sizeof g->user, "%s", pw.pw_name);
    }
    g->exe = readlink_alloc(pid, "exe");
    if (g->exe) {
        size_t l = strlen(g->exe);
        if (l > 10 && strcmp(g->exe + l - 10, " (deleted)") == 0) {
            g->exe[l - 10] = '\0';
            g->exe_deleted = 1;
        }
    }
    g->cwd = readlink_alloc(pid, "cwd");
    ssize_t n;
    g->cmdline = fileio_read_proc(AT_FDCWD, pid, "cmdline", 65536, &n);
    if (g->cmdline) {
        while (n > 0 && g->cmdline[n - 1] == '\0') n--;
        for (ssize_t i = 0; i < n; i++)
            if (g->cmdline[i] == '\0') g->cmdline[i] = ' ';
        g->cmdline[n] = '\0';
    }
}

/* Its cgroup v2 path and the container its cgroups name. */
static void general_cgroup(struct pi_general *g, int pid)
{
    char *cg = fileio_read_proc(AT_FDCWD, pid, "cgroup", 8192, NULL);
    if (!cg) return;
    size_t len;
    const char *v2 = cgroup_file_v2_path(cg, &len);
    if (v2) g->cgroup = strndup(v2, len);
    cgroup_file_container(cg, &g->container);
    free(cg);
}

/* Its namespaces, and which of them are not diagtop's own: what a container, an `unshare` or a sandbox gave it. */
static void general_namespaces(struct pi_general *g, int pid)
{
    static const char *const ns[] = {"cgroup", "ipc", "mnt", "net", "pid", "user", "uts", "time"};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        char name[32], self[96], ours[64];
        snprintf(name, sizeof name, "ns/%s", ns[i]);
        char *link = readlink_alloc(pid, name);
        if (link) {
            snprintf(self, sizeof self, "/proc/self/ns/%s", ns[i]);
            ssize_t n = readlink(self, ours, sizeof ours - 1);
            if (n >= 0) ours[n] = '\0';
            g->ns_differs[g->nnamespaces] = n < 0 ? -1 : strcmp(ours, link) != 0;
            snprintf(g->namespaces[g->nnamespaces++], sizeof g->namespaces[0], "%s", link);
        }
        free(link);
    }
}

/* Where it is confined: its cgroup (and the container it names), namespaces, OOM score and limits. */
static void general_confinement(struct pi_general *g, int pid)
{
    general_cgroup(g, pid);
    general_namespaces(g, pid);
    char num[32];
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/oom_score", pid);
    g->oom_score = fileio_read_at(AT_FDCWD, path, num, sizeof num) > 0 ? atoll(num) : -1;
    snprintf(path, sizeof path, "/proc/%d/oom_score_adj", pid);
    g->oom_score_adj = fileio_read_at(AT_FDCWD, path, num, sizeof num) > 0 ? atoll(num) : -10000;
    char *limits = fileio_read_proc(AT_FDCWD, pid, "limits", 8192, NULL);
    if (limits) g->nlimits = procinfo_parse_limits(limits, g->limits, 20);
    free(limits);
}

static void collect_general(int pid, struct proc_info *pi, const struct procstat *ps, unsigned long long btime)
{
    general_from_stat(&pi->general, pid, ps, btime);
    general_program(&pi->general, pid);
    general_confinement(&pi->general, pid);
}

static void memory_unknown(struct pi_memory *m)
{
    long long *f = &m->rss;
    for (size_t i = 0; i < sizeof *m / sizeof(long long); i++) f[i] = -1;
}

static void collect_memory(int pid, struct proc_info *pi)
{
    memory_unknown(&pi->memory);
    char *status = fileio_read_proc(AT_FDCWD, pid, "status", 16384, NULL);
    if (status) procinfo_parse_status(status, NULL, &pi->memory);
    else set_err(pi->memory_err, sizeof pi->memory_err, "status", errno);
    free(status);
    /* smaps_rollup walks every mapping (milliseconds on a big process): only for the one process asked about. */
    char *rollup = fileio_read_proc(AT_FDCWD, pid, "smaps_rollup", 8192, NULL);
    if (rollup) procinfo_parse_smaps_rollup(rollup, &pi->memory);
    else set_err(pi->smaps_err, sizeof pi->smaps_err, "smaps_rollup (PSS, USS, swap PSS)", errno);
    free(rollup);
}

static int module_cmp(const void *a, const void *b)
{
    const struct pi_module *x = a, *y = b;
    if (x->shared_object != y->shared_object) return y->shared_object - x->shared_object;
    return x->start < y->start ? -1 : x->start > y->start;
}

static void collect_modules(int pid, struct proc_info *pi)
{
    char *maps = fileio_read_proc(AT_FDCWD, pid, "maps", 16 << 20, NULL);
    if (!maps) {
        set_err(pi->modules_err, sizeof pi->modules_err, "maps", errno);
        return;
    }
    size_t cap = 0;
    for (char *line = strtok(maps, "\n"); line; line = strtok(NULL, "\n")) {
        unsigned long long start, end, offset;
        char perms[8];
        int off = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*u %n", &start, &end, perms, &offset, &off) < 4 || off == 0) continue;
        const char *path = line + off;
        if (path[0] != '/') continue; /* anonymous, [heap], [stack], [vdso] */
        int k;
        for (k = 0; k < pi->nmodules && strcmp(pi->modules[k].path, path) != 0; k++) {}
        if (k == pi->nmodules) {
            if (GROW(pi->modules, cap, k, 64) < 0) break;
            pi->modules[k] = (struct pi_module){.path = strdup(path), .start = start, .end = end};
            pi->modules[k].shared_object = strstr(path, ".so") != NULL;
            pi->nmodules++;
        }
        struct pi_module *m = &pi->modules[k];
        /* Each mapping as maps lists it (in address order): a union of their permissions would read rwxp for
         * every library, which no page of it is. */
        if (GROW(m->maps, m->maps_cap, m->nmaps, 4) < 0) break;
        struct pi_mapping *map = &m->maps[m->nmaps++];
        *map = (struct pi_mapping){.start = start, .end = end, .offset = offset};
        snprintf(map->perms, sizeof map->perms, "%.4s", perms);
        if (start < m->start) m->start = start;
        if (end > m->end) m->end = end;
        m->size += end - start;
    }
    free(maps);
    if (pi->modules) qsort(pi->modules, (size_t)pi->nmodules, sizeof *pi->modules, module_cmp);
}

static void classify_fd(const char *link, const struct socket_table *socks, struct pi_fd *f)
{
    unsigned long inode;
    if (sscanf(link, "socket:[%lu]", &inode) == 1) {
        snprintf(f->type, sizeof f->type, "socket");
        const char *d = sockets_describe(socks, inode);
        f->target = strdup(d ? d : link);
        return;
    }
    const char *type = strncmp(link, "pipe:", 5) == 0 ? "pipe"
                     : strncmp(link, "anon_inode:", 11) == 0 ? "anon"
                     : strncmp(link, "/dev/", 5) == 0 ? "device"
                     : link[0] == '/' ? "file" : "other";
    snprintf(f->type, sizeof f->type, "%s", type);
    f->target = strdup(strncmp(link, "anon_inode:", 11) == 0 ? link + 11 : link);
}

static int fd_cmp(const void *a, const void *b) { return ((const struct pi_fd *)a)->fd - ((const struct pi_fd *)b)->fd; }

static void collect_fds(int pid, struct proc_info *pi)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", pid);
    DIR *d = opendir(path);
    if (!d) {
        set_err(pi->fds_err, sizeof pi->fds_err, "fd", errno);
        return;
    }
    struct socket_table socks = {0};
    sockets_load(pid, &socks);
    size_t cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char link[4096];
        ssize_t n = readlinkat(dirfd(d), de->d_name, link, sizeof link - 1);
        if (n < 0) continue;
        link[n] = '\0';
        if (GROW(pi->fds, cap, pi->nfds, 64) < 0) break;
        struct pi_fd *f = &pi->fds[pi->nfds++];
        f->fd = atoi(de->d_name);
        classify_fd(link, &socks, f);
    }
    closedir(d);
    sockets_free(&socks);
    if (pi->fds) qsort(pi->fds, (size_t)pi->nfds, sizeof *pi->fds, fd_cmp);
    pi->fd_soft_limit = -1;
    for (int i = 0; i < pi->general.nlimits; i++)
        if (strcmp(pi->general.limits[i].name, "Max open files") == 0) pi->fd_soft_limit = atoll(pi->general.limits[i].soft);
}

static void collect_threads(int pid, struct proc_info *pi, double cpu_sample)
{
    enum { MAX = 8192 };
    struct thread_sample *before = calloc(MAX, sizeof *before);
    int nbefore = before && cpu_sample > 0 ? procstat_sample_threads(pid, before, MAX, 0) : 0;
    double t0 = clock_monotonic_seconds();
    if (nbefore) clock_sleep(cpu_sample, NULL);
    double interval = clock_monotonic_seconds() - t0;
    long hz = sysconf(_SC_CLK_TCK);
    struct tasks it;
    int rc = tasks_open(&it, AT_FDCWD, pid), tid;
    if (rc < 0) {
        set_err(pi->threads_err, sizeof pi->threads_err, "task", -rc);
        free(before);
        return;
    }
    size_t cap = 0;
    while ((tid = tasks_next(&it))) {
        struct procstat ps;
        if (procstat_read(pid, tid, &ps) < 0) continue;
        if (GROW(pi->threads, cap, pi->nthreads, 64) < 0) break;
        struct pi_thread *t = &pi->threads[pi->nthreads++];
        memset(t, 0, sizeof *t);
        t->tid = tid;
        snprintf(t->name, sizeof t->name, "%s", ps.comm);
        t->state = ps.state;
        t->utime = (double)ps.utime / hz;
        t->stime = (double)ps.stime / hz;
        t->cpu_percent = -1;
        for (int i = 0; i < nbefore; i++)
            if (before[i].tid == tid && interval > 0)
                t->cpu_percent = 100.0 * (double)(ps.utime + ps.stime - before[i].ticks) / ((double)hz * interval);
        char p[96];
        snprintf(p, sizeof p, "/proc/%d/task/%d/wchan", pid, tid);
        if (fileio_read_at(AT_FDCWD, p, t->wchan, sizeof t->wchan) <= 0 || strcmp(t->wchan, "0") == 0) t->wchan[0] = '\0';
    }
    tasks_close(&it);
    free(before);
}

static void collect_env(int pid, struct proc_info *pi)
{
    ssize_t n;
    char *env = fileio_read_proc(AT_FDCWD, pid, "environ", 1 << 20, &n);
    if (!env) {
        set_err(pi->env_err, sizeof pi->env_err, "environ", errno);
        return;
    }
    int count = 0;
    for (ssize_t i = 0; i < n; i++) count += env[i] == '\0';
    pi->env = calloc((size_t)count + 1, sizeof *pi->env);
    for (ssize_t i = 0; pi->env && i < n; i += (ssize_t)strlen(env + i) + 1) {
        const char *kv = env + i;
        const char *eq = strchr(kv, '=');
        if (!*kv) continue;
        pi->env[pi->nenv].name = eq ? strndup(kv, (size_t)(eq - kv)) : strdup(kv);
        pi->env[pi->nenv].value = strdup(eq ? eq + 1 : "");
        pi->nenv++;
    }
    free(env);
}

static void collect_io(int pid, struct proc_info *pi)
{
    memset(&pi->io, 0xff, sizeof pi->io); /* all -1 */
    char *io = fileio_read_proc(AT_FDCWD, pid, "io", 4096, NULL);
    if (io) procinfo_parse_io(io, &pi->io);
    else set_err(pi->io_err, sizeof pi->io_err, "io", errno);
    free(io);
}

static unsigned long long boot_time(void)
{
    size_t max = 256 * 1024; /* /proc/stat grows with CPUs and interrupts */
    char *buf = malloc(max);
    unsigned long long bt = 0;
    if (buf && fileio_read_at(AT_FDCWD, "/proc/stat", buf, max) > 0) {
        const char *p = strstr(buf, "\nbtime ");
        bt = p ? strtoull(p + 7, NULL, 10) : 0;
    }
    free(buf);
    return bt;
}

int procinfo_collect(int pid, unsigned sections, double cpu_sample, struct proc_info *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->pid = pid;
    out->sections = sections;
    struct procstat ps;
    if (procstat_read(pid, 0, &ps) < 0) {
        snprintf(err, errlen, "no process %d", pid);
        return -ESRCH;
    }
    /* General facts feed other sections (the descriptor limit), so they are always read. */
    collect_general(pid, out, &ps, boot_time());
    if (sections & PI_MEMORY) collect_memory(pid, out);
    if (sections & PI_MODULES) collect_modules(pid, out);
    if (sections & PI_FDS) collect_fds(pid, out);
    if (sections & PI_THREADS) collect_threads(pid, out, cpu_sample);
    if (sections & PI_ENV) collect_env(pid, out);
    if (sections & PI_IO) collect_io(pid, out);
    return 0;
}

void procinfo_free(struct proc_info *pi)
{
    free(pi->general.exe);
    free(pi->general.cwd);
    free(pi->general.cmdline);
    free(pi->general.cgroup);
    for (int i = 0; i < pi->nmodules; i++) {
        free(pi->modules[i].path);
        free(pi->modules[i].maps);
    }
    free(pi->modules);
    for (int i = 0; i < pi->nfds; i++) free(pi->fds[i].target);
    free(pi->fds);
    free(pi->threads);
    for (int i = 0; i < pi->nenv; i++) {
        free(pi->env[i].name);
        free(pi->env[i].value);
    }
    free(pi->env);
    memset(pi, 0, sizeof *pi);
}
