#include "procinfo_text.h"

#include <stdio.h>
#include <string.h>

#include "util/text.h"

#define MASK "********"

/* Adds "label: value" with the value sanitized for the terminal. */
static int kv(struct text_lines *out, const char *label, const char *value)
{
    char clean[4096];
    text_sanitize_display(clean, sizeof clean, value ? value : "-", strlen(value ? value : "-"));
    return text_lines_add(out, "%-22s %s", label, clean);
}

static int kv_bytes(struct text_lines *out, const char *label, long long bytes)
{
    char b[32];
    text_format_bytes(b, sizeof b, bytes);
    return kv(out, label, b);
}

static int error_line(struct text_lines *out, const char *err)
{
    return err[0] ? text_lines_add(out, "(%s)", err) : 0;
}

static int is_hex(const char *s)
{
    return *s && strspn(s, "0123456789abcdef") == strlen(s);
}

/* Those not diagtop's own first (what a container or `unshare` gave it), then every one with those marked '*'. */
static void namespaces(const struct pi_general *g, struct text_lines *out)
{
    char buf[512];
    size_t off = 0;
    int unknown = 0;
    buf[0] = '\0';
    for (int i = 0; i < g->nnamespaces; i++) {
        unknown += g->ns_differs[i] < 0;
        if (g->ns_differs[i] > 0)
            off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%.*s", off ? " " : "",
                                    (int)strcspn(g->namespaces[i], ":"), g->namespaces[i]);
    }
    if (g->nnamespaces && !unknown) kv(out, "Namespaces apart", off ? buf : "none (all are diagtop's own)");
    off = 0;
    buf[0] = '\0';
    for (int i = 0; i < g->nnamespaces && off < sizeof buf - 50; i++)
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s%s", i ? " " : "", g->namespaces[i],
                                g->ns_differs[i] > 0 ? "*" : "");
    kv(out, "Namespaces", g->nnamespaces ? buf : NULL);
}

static void general(const struct proc_info *pi, struct text_lines *out)
{
    const struct pi_general *g = &pi->general;
    char buf[1024];
    snprintf(buf, sizeof buf, "%d", g->pid);
    kv(out, "PID", buf);
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < g->nancestors && off < sizeof buf - 80; i++)
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%d %s", i ? " <- " : "", g->ancestors[i].pid,
                                g->ancestors[i].comm);
    kv(out, "Parent chain", g->nancestors ? buf : NULL);
    snprintf(buf, sizeof buf, "%s (uid %lld/%lld, gid %lld/%lld real/effective)", g->user[0] ? g->user : "-",
             g->ruid, g->euid, g->rgid, g->egid);
    kv(out, "User", buf);
    snprintf(buf, sizeof buf, "%c", g->state);
    kv(out, "State", buf);
    long age = (long)g->age_seconds;
    snprintf(buf, sizeof buf, "%s (age %ldd %02ld:%02ld:%02ld)", g->start_time, age / 86400, age / 3600 % 24,
             age / 60 % 60, age % 60);
    kv(out, "Started", buf);
    snprintf(buf, sizeof buf, "user %.2f s, system %.2f s, children %.2f s", g->utime, g->stime, g->cutime + g->cstime);
    kv(out, "CPU time", buf);
    snprintf(buf, sizeof buf, "nice %ld, priority %ld, policy %s", g->nice, g->priority, g->policy);
    kv(out, "Scheduling", buf);
    snprintf(buf, sizeof buf, "%ld", g->threads);
    kv(out, "Threads", buf);
    snprintf(buf, sizeof buf, "%s%s", g->exe ? g->exe : "- (not readable)", g->exe_deleted ? " (deleted)" : "");
    kv(out, "Executable", buf);
    kv(out, "Working directory", g->cwd);
    kv(out, "Command line", g->cmdline);
    kv(out, "Cgroup", g->cgroup);
    if (g->container.runtime[0]) {
        /* Twelve digits of an id, as `docker ps` shows it; --json has all of it. */
        snprintf(buf, sizeof buf, "%s%s%.*s%s%s", g->container.runtime, g->container.id[0] ? " " : "",
                 is_hex(g->container.id) ? 12 : (int)strlen(g->container.id), g->container.id,
                 g->container.pod_uid[0] ? ", pod " : "", g->container.pod_uid);
        kv(out, "Container", buf);
    }
    if (g->nnspid > 1) {
        off = 0;
        for (int i = 0; i < g->nnspid && off < sizeof buf - 80; i++)
            off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%d", i ? " " : "", g->nspid[i]);
        snprintf(buf + off, sizeof buf - off, " (PID %d in its own PID namespace)", g->nspid[g->nnspid - 1]);
        kv(out, "NSpid", buf);
    } else if (g->nnspid == 1) {
        snprintf(buf, sizeof buf, "%d (diagtop's PID namespace)", g->nspid[0]);
        kv(out, "NSpid", buf);
    }
    namespaces(g, out);
    snprintf(buf, sizeof buf, "%lld (adjust %lld)", g->oom_score, g->oom_score_adj);
    kv(out, "OOM score", g->oom_score >= 0 ? buf : NULL);
    text_lines_add(out, "%s", "");
    text_lines_add(out, "%-26s %-20s %-20s %s", "Limit", "Soft", "Hard", "Units");
    for (int i = 0; i < g->nlimits; i++)
        text_lines_add(out, "%-26s %-20s %-20s %s", g->limits[i].name, g->limits[i].soft, g->limits[i].hard,
                       g->limits[i].units);
}

static void memory(const struct proc_info *pi, struct text_lines *out)
{
    const struct pi_memory *m = &pi->memory;
    kv_bytes(out, "RSS (working set)", m->rss);
    kv_bytes(out, "RSS peak (VmHWM)", m->hwm);
    kv_bytes(out, "  anonymous", m->rss_anon);
    kv_bytes(out, "  file-backed", m->rss_file);
    kv_bytes(out, "  shared memory", m->rss_shmem);
    kv_bytes(out, "PSS", m->pss);
    kv_bytes(out, "USS (private)", m->uss);
    kv_bytes(out, "  private clean", m->private_clean);
    kv_bytes(out, "  private dirty", m->private_dirty);
    kv_bytes(out, "Swap", m->swap >= 0 ? m->swap : m->vm_swap);
    kv_bytes(out, "Swap PSS", m->swap_pss);
    kv_bytes(out, "Virtual size", m->vm_size);
    kv_bytes(out, "Virtual peak", m->vm_peak);
    kv_bytes(out, "Data + heap", m->vm_data);
    kv_bytes(out, "Stack", m->vm_stk);
    kv_bytes(out, "Locked", m->vm_lck);
    kv_bytes(out, "Huge pages (hugetlb)", m->huge);
    kv_bytes(out, "Anonymous huge pages", m->anon_huge);
    error_line(out, pi->memory_err);
    error_line(out, pi->smaps_err);
}

/* A line per file (its whole range and what it maps), then one per mapping as /proc/PID/maps lists it: a library's
 * header, text, read-only data and data have different permissions, and a union of them would read rwxp. */
static void modules(const struct proc_info *pi, struct text_lines *out)
{
    text_lines_add(out, "%-27s %-4s %9s  %s", "Address range", "Perm", "Mapped", "File, then each mapping");
    for (int i = 0; i < pi->nmodules; i++) {
        const struct pi_module *m = &pi->modules[i];
        char size[32], path[4096];
        text_format_bytes(size, sizeof size, (long long)m->size);
        text_sanitize_display(path, sizeof path, m->path, strlen(m->path));
        /* A file mapped once (a locale, a font) needs no second line. */
        text_lines_add(out, "%012llx-%012llx %6s %9s  %s", m->start, m->end, m->nmaps == 1 ? m->maps[0].perms : "",
                       size, path);
        for (int j = 0; m->nmaps > 1 && j < m->nmaps; j++) {
            const struct pi_mapping *p = &m->maps[j];
            text_format_bytes(size, sizeof size, (long long)(p->end - p->start));
            text_lines_add(out, "  %012llx-%012llx %-4s %9s  at offset 0x%llx", p->start, p->end, p->perms, size,
                           p->offset);
        }
    }
    error_line(out, pi->modules_err);
}

static void fds(const struct proc_info *pi, struct text_lines *out)
{
    char limit[32] = "-";
    if (pi->fd_soft_limit >= 0) snprintf(limit, sizeof limit, "%lld", pi->fd_soft_limit);
    text_lines_add(out, "%d open descriptors (soft limit %s)", pi->nfds, limit);
    text_lines_add(out, "%5s %-7s %s", "FD", "Type", "Target");
    for (int i = 0; i < pi->nfds; i++) {
        char target[4096];
        const char *t = pi->fds[i].target ? pi->fds[i].target : "-";
        text_sanitize_display(target, sizeof target, t, strlen(t));
        text_lines_add(out, "%5d %-7s %s", pi->fds[i].fd, pi->fds[i].type, target);
    }
    error_line(out, pi->fds_err);
}

static void threads(const struct proc_info *pi, struct text_lines *out)
{
    text_lines_add(out, "%8s %-16s %s %6s %9s %9s  %s", "TID", "Name", "S", "%CPU", "User s", "Sys s", "Waiting in");
    for (int i = 0; i < pi->nthreads; i++) {
        const struct pi_thread *t = &pi->threads[i];
        char name[64], cpu[16];
        text_sanitize_display(name, sizeof name, t->name, strlen(t->name));
        if (t->cpu_percent < 0) snprintf(cpu, sizeof cpu, "-");
        else snprintf(cpu, sizeof cpu, "%.1f", t->cpu_percent);
        text_lines_add(out, "%8d %-16s %c %6s %9.2f %9.2f  %s", t->tid, name, t->state, cpu, t->utime, t->stime,
                       t->wchan[0] ? t->wchan : "-");
    }
    error_line(out, pi->threads_err);
}

static void env(const struct proc_info *pi, const struct procinfo_text_opts *o, struct text_lines *out)
{
    int masked = 0;
    for (int i = 0; i < pi->nenv; i++) {
        const struct pi_env *e = &pi->env[i];
        int secret = procinfo_env_is_secret(e->name) && !o->show_secrets;
        char line[8192], clean[8192];
        snprintf(line, sizeof line, "%s=%s", e->name, secret ? MASK : e->value);
        masked += secret;
        if (o->env_filter && *o->env_filter && !text_contains_nocase(line, o->env_filter)) continue;
        text_sanitize_display(clean, sizeof clean, line, strlen(line));
        text_lines_add(out, "%s", clean);
    }
    if (masked) text_lines_add(out, "(%d value%s of secret-looking names masked)", masked, masked == 1 ? "" : "s");
    error_line(out, pi->env_err);
}

static void io(const struct proc_info *pi, struct text_lines *out)
{
    const struct pi_io *x = &pi->io;
    kv_bytes(out, "Read (all)", x->rchar);
    kv_bytes(out, "Written (all)", x->wchar);
    kv_bytes(out, "Read from storage", x->read_bytes);
    kv_bytes(out, "Written to storage", x->write_bytes);
    kv_bytes(out, "Cancelled writes", x->cancelled_write_bytes);
    char buf[64];
    snprintf(buf, sizeof buf, "%lld reads, %lld writes", x->syscr, x->syscw);
    kv(out, "System calls", x->syscr >= 0 ? buf : NULL);
    error_line(out, pi->io_err);
}

int procinfo_text_section(const struct proc_info *pi, enum procinfo_section s, const struct procinfo_text_opts *o,
                          struct text_lines *out)
{
    switch (s) {
    case PI_GENERAL: general(pi, out); break;
    case PI_MEMORY: memory(pi, out); break;
    case PI_MODULES: modules(pi, out); break;
    case PI_FDS: fds(pi, out); break;
    case PI_THREADS: threads(pi, out); break;
    case PI_ENV: env(pi, o, out); break;
    case PI_IO: io(pi, out); break;
    default: return -1;
    }
    return 0;
}
