#include "procinfo_json.h"

#include <stdio.h>
#include <string.h>

#include "json_util.h"
#include "util/text.h"

static void add_bytes_or_null(cJSON *o, const char *name, long long v)
{
    if (v >= 0) json_add_i64(o, name, v);
    else cJSON_AddNullToObject(o, name);
}

static void add_error(cJSON *errors, const char *name, const char *err)
{
    if (err[0]) json_add_string_or_null(errors, name, err);
}

/* Kudu's GET /diagnostics/processes/{id} fields, mapped onto Linux. */
static void kudu_fields(cJSON *o, const struct proc_info *pi)
{
    const struct pi_general *g = &pi->general;
    const struct pi_memory *m = &pi->memory;
    int mem = (pi->sections & PI_MEMORY) != 0;
    json_add_i64(o, "id", pi->pid);
    json_add_bytes(o, "name", g->comm, strlen(g->comm));
    json_add_string_or_null(o, "start_time", g->start_time);
    json_add_fixed(o, "total_cpu_time", g->utime + g->stime, 2);
    json_add_fixed(o, "user_cpu_time", g->utime, 2);
    json_add_fixed(o, "privileged_cpu_time", g->stime, 2);
    json_add_i64(o, "thread_count", g->threads);
    if (pi->sections & PI_FDS && !pi->fds_err[0]) json_add_i64(o, "handle_count", pi->nfds);
    else cJSON_AddNullToObject(o, "handle_count");
    if (pi->sections & PI_MODULES && !pi->modules_err[0]) {
        int so = 0;
        for (int i = 0; i < pi->nmodules; i++) so += pi->modules[i].shared_object;
        json_add_i64(o, "module_count", so);
    } else {
        cJSON_AddNullToObject(o, "module_count");
    }
    add_bytes_or_null(o, "working_set", mem ? m->rss : -1);
    add_bytes_or_null(o, "peak_working_set", mem ? m->hwm : -1);
    add_bytes_or_null(o, "private_memory", mem ? m->uss : -1);
    add_bytes_or_null(o, "virtual_memory", mem ? m->vm_size : -1);
    add_bytes_or_null(o, "peak_virtual_memory", mem ? m->vm_peak : -1);
    add_bytes_or_null(o, "paged_memory", mem ? (m->swap >= 0 ? m->swap : m->vm_swap) : -1);
}

/* {runtime, id, pod_uid} as the cgroup path names them, or null when it names no container. */
static void add_container(cJSON *o, const struct cgroup_container *c)
{
    if (!c->runtime[0]) {
        cJSON_AddNullToObject(o, "container");
        return;
    }
    cJSON *x = cJSON_AddObjectToObject(o, "container");
    cJSON_AddStringToObject(x, "runtime", c->runtime);
    json_add_bytes(x, "id", c->id, strlen(c->id));
    json_add_string_or_null(x, "pod_uid", c->pod_uid[0] ? c->pod_uid : NULL);
}

/* The names ("pid", "net") of the namespaces that are not diagtop's own; null when that cannot be told. */
static void add_namespaces_differing(cJSON *o, const struct pi_general *g)
{
    int unknown = !g->nnamespaces;
    for (int i = 0; i < g->nnamespaces; i++) unknown |= g->ns_differs[i] < 0;
    if (unknown) {
        cJSON_AddNullToObject(o, "namespaces_differing");
        return;
    }
    cJSON *a = cJSON_AddArrayToObject(o, "namespaces_differing");
    for (int i = 0; i < g->nnamespaces; i++)
        if (g->ns_differs[i] > 0) {
            char name[16];
            snprintf(name, sizeof name, "%.*s", (int)strcspn(g->namespaces[i], ":"), g->namespaces[i]);
            cJSON_AddItemToArray(a, cJSON_CreateString(name));
        }
}

static cJSON *general_json(const struct proc_info *pi)
{
    const struct pi_general *g = &pi->general;
    cJSON *o = cJSON_CreateObject();
    json_add_i64(o, "ppid", g->ppid);
    cJSON *chain = cJSON_AddArrayToObject(o, "parent_chain");
    for (int i = 0; i < g->nancestors; i++) {
        cJSON *a = cJSON_CreateObject();
        json_add_i64(a, "pid", g->ancestors[i].pid);
        json_add_bytes(a, "name", g->ancestors[i].comm, strlen(g->ancestors[i].comm));
        cJSON_AddItemToArray(chain, a);
    }
    json_add_string_or_null(o, "user", g->user[0] ? g->user : NULL);
    add_bytes_or_null(o, "uid", g->ruid);
    add_bytes_or_null(o, "euid", g->euid);
    add_bytes_or_null(o, "gid", g->rgid);
    add_bytes_or_null(o, "egid", g->egid);
    char st[2] = {g->state, 0};
    cJSON_AddStringToObject(o, "state", st);
    json_add_fixed(o, "age_seconds", g->age_seconds, 1);
    json_add_fixed(o, "children_cpu_time", g->cutime + g->cstime, 2);
    json_add_i64(o, "nice", g->nice);
    json_add_i64(o, "priority", g->priority);
    cJSON_AddStringToObject(o, "policy", g->policy);
    json_add_string_or_null(o, "exe", g->exe);
    cJSON_AddBoolToObject(o, "exe_deleted", g->exe_deleted);
    json_add_string_or_null(o, "cwd", g->cwd);
    json_add_string_or_null(o, "cmdline", g->cmdline);
    json_add_string_or_null(o, "cgroup", g->cgroup);
    add_container(o, &g->container);
    cJSON *ns = cJSON_AddArrayToObject(o, "namespaces");
    for (int i = 0; i < g->nnamespaces; i++) cJSON_AddItemToArray(ns, cJSON_CreateString(g->namespaces[i]));
    add_namespaces_differing(o, g);
    if (g->nnspid) {
        cJSON *nspid = cJSON_AddArrayToObject(o, "nspid");
        for (int i = 0; i < g->nnspid; i++) cJSON_AddItemToArray(nspid, cJSON_CreateNumber(g->nspid[i]));
    } else {
        cJSON_AddNullToObject(o, "nspid");
    }
    add_bytes_or_null(o, "oom_score", g->oom_score);
    if (g->oom_score_adj > -10000) json_add_i64(o, "oom_score_adj", g->oom_score_adj);
    else cJSON_AddNullToObject(o, "oom_score_adj");
    cJSON *limits = cJSON_AddObjectToObject(o, "limits");
    for (int i = 0; i < g->nlimits; i++) {
        cJSON *l = cJSON_CreateObject();
        cJSON_AddStringToObject(l, "soft", g->limits[i].soft);
        cJSON_AddStringToObject(l, "hard", g->limits[i].hard);
        cJSON_AddStringToObject(l, "units", g->limits[i].units);
        char key[64]; /* the kernel's label, "Max open files", as max_open_files */
        text_snake_key(g->limits[i].name, key, sizeof key);
        if (!cJSON_GetObjectItemCaseSensitive(limits, key)) cJSON_AddItemToObject(limits, key, l);
        else cJSON_Delete(l);
    }
    return o;
}

static cJSON *memory_json(const struct pi_memory *m)
{
    cJSON *o = cJSON_CreateObject();
#define B(name, v) add_bytes_or_null(o, name, v)
    B("rss_bytes", m->rss);
    B("rss_peak_bytes", m->hwm);
    B("rss_anon_bytes", m->rss_anon);
    B("rss_file_bytes", m->rss_file);
    B("rss_shmem_bytes", m->rss_shmem);
    B("pss_bytes", m->pss);
    B("uss_bytes", m->uss);
    B("private_clean_bytes", m->private_clean);
    B("private_dirty_bytes", m->private_dirty);
    B("swap_bytes", m->swap >= 0 ? m->swap : m->vm_swap);
    B("swap_pss_bytes", m->swap_pss);
    B("vm_size_bytes", m->vm_size);
    B("vm_peak_bytes", m->vm_peak);
    B("data_bytes", m->vm_data);
    B("stack_bytes", m->vm_stk);
    B("locked_bytes", m->vm_lck);
    B("hugetlb_bytes", m->huge);
    B("anon_huge_bytes", m->anon_huge);
#undef B
    return o;
}

/* Each section below adds its object to doc and its one-line reason, if any, to errors; procinfo_json calls them
 * in the order the document's keys have always had. */

static void add_memory(cJSON *doc, cJSON *errors, const struct proc_info *pi)
{
    cJSON_AddItemToObject(doc, "memory", memory_json(&pi->memory));
    add_error(errors, "memory", pi->memory_err);
    add_error(errors, "smaps_rollup", pi->smaps_err);
}

static void add_modules(cJSON *doc, cJSON *errors, const struct proc_info *pi)
{
    cJSON *a = cJSON_AddArrayToObject(doc, "modules");
    for (int i = 0; i < pi->nmodules; i++) {
        const struct pi_module *m = &pi->modules[i];
        cJSON *o = cJSON_CreateObject();
        json_add_string_or_null(o, "path", m->path);
        json_add_hex(o, "start", m->start);
        json_add_hex(o, "end", m->end);
        json_add_u64(o, "mapped_bytes", m->size);
        /* Each mapping's permissions in address order ("r--p r-xp r--p rw-p"), never their union. */
        char perms[256];
        size_t off = 0;
        perms[0] = '\0';
        int j;
        for (j = 0; j < m->nmaps && off < sizeof perms - 10; j++)
            off += (size_t)snprintf(perms + off, sizeof perms - off, "%s%s", j ? " " : "", m->maps[j].perms);
        if (j < m->nmaps) snprintf(perms + off, sizeof perms - off, " ..."); /* all of them are in mappings */
        cJSON_AddStringToObject(o, "perms", perms);
        cJSON_AddBoolToObject(o, "shared_object", m->shared_object);
        cJSON *maps = cJSON_AddArrayToObject(o, "mappings");
        for (j = 0; j < m->nmaps; j++) {
            const struct pi_mapping *p = &m->maps[j];
            cJSON *x = cJSON_CreateObject();
            json_add_hex(x, "start", p->start);
            json_add_hex(x, "end", p->end);
            cJSON_AddStringToObject(x, "perms", p->perms);
            json_add_hex(x, "offset", p->offset);
            json_add_u64(x, "bytes", p->end - p->start);
            cJSON_AddItemToArray(maps, x);
        }
        cJSON_AddItemToArray(a, o);
    }
    add_error(errors, "modules", pi->modules_err);
}

static void add_fds(cJSON *doc, cJSON *errors, const struct proc_info *pi)
{
    cJSON *f = cJSON_AddObjectToObject(doc, "fds");
    add_bytes_or_null(f, "soft_limit", pi->fd_soft_limit);
    cJSON *a = cJSON_AddArrayToObject(f, "open");
    for (int i = 0; i < pi->nfds; i++) {
        cJSON *o = cJSON_CreateObject();
        json_add_i64(o, "fd", pi->fds[i].fd);
        cJSON_AddStringToObject(o, "type", pi->fds[i].type);
        json_add_string_or_null(o, "target", pi->fds[i].target);
        cJSON_AddItemToArray(a, o);
    }
    add_error(errors, "fds", pi->fds_err);
}

static void add_threads(cJSON *doc, cJSON *errors, const struct proc_info *pi)
{
    cJSON *a = cJSON_AddArrayToObject(doc, "threads");
    for (int i = 0; i < pi->nthreads; i++) {
        const struct pi_thread *t = &pi->threads[i];
        cJSON *o = cJSON_CreateObject();
        json_add_i64(o, "tid", t->tid);
        json_add_bytes(o, "name", t->name, strlen(t->name));
        char st[2] = {t->state, 0};
        cJSON_AddStringToObject(o, "state", st);
        if (t->cpu_percent >= 0) json_add_fixed(o, "cpu_percent", t->cpu_percent, 1);
        else cJSON_AddNullToObject(o, "cpu_percent");
        json_add_fixed(o, "user_cpu_time", t->utime, 2);
        json_add_fixed(o, "system_cpu_time", t->stime, 2);
        json_add_string_or_null(o, "wchan", t->wchan[0] ? t->wchan : NULL);
        cJSON_AddItemToArray(a, o);
    }
    add_error(errors, "threads", pi->threads_err);
}

/* Secrets (by name) are null unless asked for, and listed as masked so that a reader knows a value was there. */
static void add_environment(cJSON *doc, cJSON *errors, const struct proc_info *pi, int show_secrets)
{
    cJSON *e = cJSON_AddObjectToObject(doc, "environment");
    cJSON *masked = cJSON_CreateArray();
    for (int i = 0; i < pi->nenv; i++) {
        int secret = procinfo_env_is_secret(pi->env[i].name) && !show_secrets;
        if (secret) cJSON_AddItemToArray(masked, cJSON_CreateString(pi->env[i].name));
        if (secret) cJSON_AddNullToObject(e, pi->env[i].name);
        else json_add_string_or_null(e, pi->env[i].name, pi->env[i].value);
    }
    cJSON_AddItemToObject(doc, "environment_masked", masked);
    add_error(errors, "environment", pi->env_err);
}

static void add_io(cJSON *doc, cJSON *errors, const struct proc_info *pi)
{
    cJSON *o = cJSON_AddObjectToObject(doc, "io");
    add_bytes_or_null(o, "read_bytes_all", pi->io.rchar);
    add_bytes_or_null(o, "write_bytes_all", pi->io.wchar);
    add_bytes_or_null(o, "read_syscalls", pi->io.syscr);
    add_bytes_or_null(o, "write_syscalls", pi->io.syscw);
    add_bytes_or_null(o, "storage_read_bytes", pi->io.read_bytes);
    add_bytes_or_null(o, "storage_write_bytes", pi->io.write_bytes);
    add_bytes_or_null(o, "cancelled_write_bytes", pi->io.cancelled_write_bytes);
    add_error(errors, "io", pi->io_err);
}

char *procinfo_json(const struct proc_info *pi, int show_secrets)
{
    cJSON *doc = cJSON_CreateObject();
    json_add_i64(doc, "pid", pi->pid);
    kudu_fields(doc, pi);
    cJSON *errors = cJSON_CreateObject();
    if (pi->sections & PI_GENERAL) cJSON_AddItemToObject(doc, "general", general_json(pi));
    if (pi->sections & PI_MEMORY) add_memory(doc, errors, pi);
    if (pi->sections & PI_MODULES) add_modules(doc, errors, pi);
    if (pi->sections & PI_FDS) add_fds(doc, errors, pi);
    if (pi->sections & PI_THREADS) add_threads(doc, errors, pi);
    if (pi->sections & PI_ENV) add_environment(doc, errors, pi, show_secrets);
    if (pi->sections & PI_IO) add_io(doc, errors, pi);
    cJSON_AddItemToObject(doc, "errors", errors);
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    return text;
}
