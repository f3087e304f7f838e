#include "provider.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/procinfo.h"
#include "collect/runtime.h"

void provider_request_default(struct provider_request *rq, int pid)
{
    memset(rq, 0, sizeof *rq);
    rq->pid = pid;
    rq->timeout = 5.0;
    rq->seconds = 30.0;
}

/* The targets with a request in flight. File-scope by necessity: the one table every provider and front end of
 * this process shares (the TUI's panes run requests from several worker threads). */
#define MAX_IN_FLIGHT 64
static pthread_mutex_t in_flight_lock = PTHREAD_MUTEX_INITIALIZER;
static int in_flight[MAX_IN_FLIGHT];

int provider_lock(int pid, char *err, size_t errlen)
{
    int rc = -EBUSY, slot = -1;
    pthread_mutex_lock(&in_flight_lock);
    for (int i = 0; i < MAX_IN_FLIGHT; i++) {
        if (in_flight[i] == pid) {
            slot = -1;
            break;
        }
        if (in_flight[i] == 0 && slot < 0) slot = i;
    }
    if (slot >= 0) {
        in_flight[slot] = pid;
        rc = 0;
    }
    pthread_mutex_unlock(&in_flight_lock);
    if (rc < 0) snprintf(err, errlen, "a request to %d is already in flight: one at a time per process", pid);
    return rc;
}

void provider_unlock(int pid)
{
    pthread_mutex_lock(&in_flight_lock);
    for (int i = 0; i < MAX_IN_FLIGHT; i++)
        if (in_flight[i] == pid) in_flight[i] = 0;
    pthread_mutex_unlock(&in_flight_lock);
}

const char *provider_op_name(enum provider_op op)
{
    static const char *const names[OP_COUNT] = {"stack", "memstats", "GC", "heap summary", "CPU profile",
                                                "heap dump"};
    return op >= 0 && op < OP_COUNT ? names[op] : "?";
}

int provider_offers(const struct provider *p, enum provider_op op)
{
    switch (op) {
    case OP_STACK: return p->stack != NULL;
    case OP_MEMSTATS: return p->memstats != NULL;
    case OP_GC: return p->gc != NULL;
    case OP_HEAP: return p->heap != NULL;
    case OP_PROFILE: return p->profile != NULL || p->profile_report != NULL || p->sampler_profiles;
    case OP_HEAP_DUMP: return p->heap_dump != NULL;
    default: return 0;
    }
}

const struct provider *provider_runtime_of(int pid)
{
    int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (procfd < 0) return NULL;
    char status[4096] = "", path[64];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, status, sizeof status - 1);
        status[n > 0 ? n : 0] = '\0';
        close(fd);
    }
    const char *u = strstr(status, "\nUid:");
    uid_t uid = u ? (uid_t)strtoul(u + 5, NULL, 10) : (uid_t)-1;
    enum runtime_kind elf = RUNTIME_UNKNOWN;
    int agent = 0;
    enum runtime_kind k = runtime_detect(procfd, pid, uid, &elf, &agent);
    close(procfd);
    if (k == RUNTIME_NATIVE && agent) return &agent_provider;
    return k == RUNTIME_GO ? &gops_provider : k == RUNTIME_JAVA ? &hotspot_provider : NULL;
}

/* What would make op available for a process whose runtime offers nothing for it: the runtimes that do. */
static void nobody(enum provider_op op, const struct provider *runtime, const char *runtime_why, char *why,
                   size_t whylen)
{
    static const struct { const struct provider *p; const char *who; } runtimes[] = {
        {&gops_provider, "a Go program with the gops agent"}, {&hotspot_provider, "a JVM (HotSpot attach)"},
        {&agent_provider, "a native program with the diagtop agent (LD_PRELOAD=libdiagtop-agent.so)"}};
    char who[320] = "";
    size_t off = 0;
    for (size_t i = 0; i < sizeof runtimes / sizeof runtimes[0]; i++)
        if (provider_offers(runtimes[i].p, op) && off < sizeof who)
            off += (size_t)snprintf(who + off, sizeof who - off, "%s%s", off ? " or " : "", runtimes[i].who);
    if (runtime && provider_offers(runtime, op))
        snprintf(why, whylen, "%s is not available for this process: %s", provider_op_name(op), runtime_why);
    else if (runtime)
        snprintf(why, whylen, "%s is not available for %s programs (%s offers none)%s%s", provider_op_name(op),
                 runtime->speaks, runtime->name, who[0] ? "; it needs " : "", who);
    else if (who[0] && runtime_why && runtime_why[0])
        snprintf(why, whylen, "%s is not available for this process: %s; it needs %s", provider_op_name(op),
                 runtime_why, who);
    else if (who[0])
        snprintf(why, whylen, "%s is not available for this process: it needs %s", provider_op_name(op), who);
    else
        snprintf(why, whylen, "%s is not available for this process", provider_op_name(op));
}

/* Why nothing can be said of pid's runtime: its executable cannot be read (another user's process). */
static void runtime_unknowable(int pid, char *why, size_t whylen)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/exe", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) close(fd);
    else if (errno == EACCES || errno == EPERM)
        snprintf(why, whylen, "its runtime cannot be told: /proc/%d/exe is not readable (another user's process: "
                 "needs the same uid or root)", pid);
}

static int native_probe(int pid, char *why, size_t whylen);

const struct provider *provider_choose(int pid, enum provider_op op, int native_only, char *why, size_t whylen)
{
    why[0] = '\0';
    /* A process that is not there has no runtime to lack: say so, not "GC is not available". */
    if (native_probe(pid, why, whylen) < 0) return NULL;
    const struct provider *runtime = native_only ? NULL : provider_runtime_of(pid);
    char runtime_why[256] = "";
    if (!runtime && !native_only) runtime_unknowable(pid, runtime_why, sizeof runtime_why);
    if (runtime && provider_offers(runtime, op)) {
        if (runtime->probe(pid, runtime_why, sizeof runtime_why) == 0) return runtime;
    }
    if (runtime == &gops_provider && op == OP_STACK) { /* no agent: the goroutines from its memory */
        snprintf(why, whylen, "gops agent not reachable (%s): goroutines read from memory", runtime_why);
        return &go_memory_provider;
    }
    if (provider_offers(&native_provider, op)) {
        if (runtime && runtime_why[0]) snprintf(why, whylen, "%s agent not reachable: %s", runtime->name, runtime_why);
        return &native_provider;
    }
    nobody(op, runtime, runtime_why, why, whylen);
    return NULL;
}

/* ---- native: what /proc says of any process ---- */

static int native_probe(int pid, char *why, size_t whylen)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d", pid);
    if (access(path, F_OK) == 0) return 0;
    snprintf(why, whylen, "no process %d", pid);
    return -ESRCH;
}

/* The kernel's accounting of the process's memory (status and smaps_rollup), as named fields. */
static int native_memstats(const struct provider_request *rq, struct rt_fields *out, char *err, size_t errlen)
{
    struct proc_info pi;
    int rc = procinfo_collect(rq->pid, PI_MEMORY, 0, &pi, err, errlen);
    if (rc < 0) return rc;
    snprintf(out->provider, sizeof out->provider, "%s", native_provider.name);
    const struct pi_memory *m = &pi.memory;
    const struct { const char *key; long long v; } rows[] = {
        {"rss", m->rss},           {"rss-peak", m->hwm},        {"rss-anon", m->rss_anon},
        {"rss-file", m->rss_file}, {"rss-shmem", m->rss_shmem}, {"pss", m->pss},
        {"uss", m->uss},           {"swap", m->swap},           {"virtual", m->vm_size},
        {"data", m->vm_data},      {"stack", m->vm_stk},        {"locked", m->vm_lck},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0] && rc == 0; i++)
        if (rows[i].v >= 0) rc = rt_fields_add_u64(out, "kernel", rows[i].key, RT_BYTES, (unsigned long long)rows[i].v);
    procinfo_free(&pi);
    if (rc < 0) snprintf(err, errlen, "out of memory");
    return rc;
}

const struct provider native_provider = {
    .name = "native",
    .speaks = "any process",
    .probe = native_probe,
    .memstats = native_memstats,
    .sampler_profiles = 1,
};
