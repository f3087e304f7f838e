/* provider: who answers a question about one process. A provider is a const table of functions, one per runtime:
 * gops (Go programs with the gops agent), hotspot (JVMs, through the HotSpot attach mechanism) and native (any
 * process: /proc, and ptrace for stacks, which the stack action does itself). For each question (an operation)
 * the process's runtime provider answers when it offers it and can be reached; otherwise the native provider
 * answers what it can; otherwise nobody, with a sentence saying what would make it available.
 *
 * Agents are untrusted peers: every request has connect and read timeouts and a reply size cap, and one request
 * is in flight per target (a provider serializes its own). Operations block; front ends run them in a job. */
#ifndef DIAGTOP_PROVIDER_H
#define DIAGTOP_PROVIDER_H
#include <signal.h>
#include <stddef.h>

#include "actions/profile/cpu_report.h"
#include "results.h"

enum provider_op { OP_STACK, OP_MEMSTATS, OP_GC, OP_HEAP, OP_PROFILE, OP_HEAP_DUMP, OP_COUNT };

struct provider_request {
    int pid;
    double timeout;                      /* seconds for each exchange with an agent (default 5) */
    const volatile sig_atomic_t *cancel; /* set by a signal handler or the UI: give up, cleanly */
    /* OP_GC */
    int set_gc_percent;                  /* instead of a collection, set the GC target (Go's GOGC; -1: off) */
    int gc_percent;
    /* OP_HEAP */
    int live;                            /* Java: only live objects (forces a full GC first) */
    const char *drop_frames;             /* allocation sites: a regex of more frames to skip when naming a row
                                          * (heap_site.h; NULL: the built-in list only) */
    /* OP_PROFILE */
    double seconds;                      /* how long to sample (Go's agent always takes 30 s) */
    /* profile_report of a provider with live_report: every live_seconds (at least the provider's own step), a
     * report of everything so far to on_report, which owns it; called from the requesting thread */
    double live_seconds;
    void (*on_report)(void *arg, struct cpu_report *r);
    void *report_arg;
    /* OP_PROFILE, OP_HEAP, OP_HEAP_DUMP: where files go (created 0600, never overwriting), NULL: not saved
     * (heap profiles), or the current directory */
    const char *save_dir;
    const char *save_path;               /* OP_PROFILE, OP_HEAP_DUMP: this exact new file instead of a name in save_dir */
    /* Long requests report how far they are (0..1); may be NULL. Called from the requesting thread. */
    void (*progress)(void *arg, double fraction);
    void *progress_arg;
};

struct provider {
    const char *name;    /* "gops", "hotspot", "native": shown as who answered */
    const char *speaks;  /* "Go", "Java", "any process" */
    /* Whether it can answer for pid now: 0, or -errno with what is missing (no agent, attach disabled, ...).
     * Cheap: reads /proc and rendezvous files, sends no request, never signals. */
    int (*probe)(int pid, char *why, size_t whylen);
    /* The operations it offers; NULL when it does not. Each returns 0 or -errno with a one-line reason. */
    int (*stack)(const struct provider_request *rq, struct rt_stack *out, char *err, size_t errlen);
    int (*memstats)(const struct provider_request *rq, struct rt_fields *out, char *err, size_t errlen);
    int (*gc)(const struct provider_request *rq, struct rt_gc *out, char *err, size_t errlen);
    int (*heap)(const struct provider_request *rq, struct rt_heap *out, char *err, size_t errlen);
    /* When a GC stops the program for long (a JVM's full collection), what it will walk, said before it runs so
     * that a front end can ask first: "heap 118 MiB used, 512 MiB committed". Cheap: files only, no request.
     * NULL when a GC is cheap (Go's is concurrent; malloc_trim only hands free pages back). */
    void (*gc_pause)(int pid, char *what, size_t whatlen);
    int (*profile)(const struct provider_request *rq, struct rt_profile *out, char *err, size_t errlen);
    int (*heap_dump)(const struct provider_request *rq, struct rt_file *out, char *err, size_t errlen);
    /* OP_PROFILE as a report like diagtop's sampler's (every stack, per thread, for its renderers: folded, flame
     * graphs, pprof), at hz (<= 0: 100) for rq->seconds (<= 0: 10); NULL when the provider offers none (only the
     * diagtop agent, which profiles from inside the process, does). */
    int (*profile_report)(const struct provider_request *rq, int hz, struct cpu_report *out, char *err,
                          size_t errlen);
    /* profile_report hands live reports while it records, and a cancel ends it with the report of what was taken
     * (the JVM's JFR, dumped every few seconds): a live view (the TUI's) prefers it to profile. */
    int live_report;
    /* OP_PROFILE is answered by diagtop's own sampler (cpu_profile.h), whose report is richer than rt_profile
     * (every stack, per thread): actions/capture runs it. */
    int sampler_profiles;
};

extern const struct provider gops_provider;
/* A Go program's goroutines read from its memory, for stacks when gops does not answer. */
extern const struct provider go_memory_provider;
extern const struct provider hotspot_provider;
extern const struct provider native_provider;
/* Native programs that load libdiagtop-agent.so: malloc statistics, malloc_trim as the GC, a sampled heap profile
 * by allocation site and a CPU profile taken inside the process. */
extern const struct provider agent_provider;

void provider_request_default(struct provider_request *rq, int pid);

/* One request in flight per target (an agent such as gops is strictly serial and sets no timeouts, so a second
 * client would wait behind the first): providers take this around each exchange. Returns 0, or -EBUSY with a
 * reason when a request to pid is already running in this diagtop. */
int provider_lock(int pid, char *err, size_t errlen);
void provider_unlock(int pid);
/* "stack", "memstats", "GC", "heap summary", "CPU profile", "heap dump". */
const char *provider_op_name(enum provider_op op);
/* Whether p offers op (OP_PROFILE: through profile, profile_report, or diagtop's sampler). */
int provider_offers(const struct provider *p, enum provider_op op);

/* The runtime provider of pid (gops for a Go program, hotspot for a JVM, agent for a native program whose diagtop
 * agent listens), or NULL for other processes. */
const struct provider *provider_runtime_of(int pid);
/* Who answers op for pid: the runtime's provider when it offers op and its probe succeeds (unless native_only),
 * else the native provider when it offers op, else NULL with why saying what would make it available (or why
 * the runtime's agent cannot be reached). When the native provider answers although the process has a runtime
 * provider that could not be reached, why says so too (for "answered by native: gops agent not reachable"). */
const struct provider *provider_choose(int pid, enum provider_op op, int native_only, char *why, size_t whylen);
#endif
