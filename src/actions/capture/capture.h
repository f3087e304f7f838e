/* capture: the stack, or the CPU profile, of one process, from its runtime when the runtime can answer (goroutines
 * or Java threads; Go's pprof, Java's JFR, the diagtop agent's profile), else natively (every OS thread through
 * ptrace; diagtop's own sampler). The one place that chooses who answers and falls back: the CLI, the HTTP API and
 * the TUI call it and render what it returns. Everything blocks; front ends run it in a job. */
#ifndef DIAGTOP_CAPTURE_H
#define DIAGTOP_CAPTURE_H
#include <signal.h>
#include <stddef.h>

#include "actions/profile/cpu_profile.h"
#include "actions/runtimes/results.h"
#include "actions/stack/stack.h"

enum capture_from {
    CAPTURE_AUTO,    /* the runtime when it offers the answer and can be reached, else native */
    CAPTURE_RUNTIME, /* the runtime only: fails with the reason when it cannot answer */
    CAPTURE_NATIVE,  /* natively only (--native) */
};

/* Who would answer, asked before a capture (the TUI picks its pane or view by it, the CLI says so first). */
struct capture_who {
    enum capture_from from; /* CAPTURE_RUNTIME or CAPTURE_NATIVE: pass it on as the options' from */
    const char *by;         /* the runtime's provider ("gops", "hotspot", "agent"), or "native" */
    int is_report;          /* profiles: the answer comes as a cpu_report (the sampler's, or the agent's report) */
    /* Why not the runtime, when native answers: for stacks, what would make the runtime's view available; for
     * profiles, set only when the process has a runtime whose agent could not be reached ("gops agent not
     * reachable: ..."). "" otherwise. */
    char note[512];
};

/* ---- stacks ---- */

struct capture_stack_options {
    enum capture_from from;   /* AUTO asks natively for one thread (stack.tid) or without stopping (stack.no_stop):
                               * a runtime knows neither */
    struct stack_options stack; /* the native capture's (its cancel is replaced by the one below) */
    double timeout;           /* seconds for each exchange with the runtime's agent (default 5) */
    const volatile sig_atomic_t *cancel; /* gives up the runtime's request and the native capture, cleanly */
};

struct capture_stack {
    const char *by;   /* who answered, or was asked when it failed: the runtime's provider, or "native"; NULL: nobody */
    int runtime;      /* rt holds the answer (goroutines, Java threads), else native (OS threads) */
    struct rt_stack rt;
    struct stack_result native;
    char fallback[512]; /* AUTO: "gops: <why>" when the runtime was asked first and failed (native answered) */
};

void capture_stack_options_default(struct capture_stack_options *o);
void capture_stack_who(int pid, const struct capture_stack_options *o, struct capture_who *out);
/* pid's stacks as o says into out (zeroed first; all freed on failure). Returns 0, or -errno with a reason. */
int capture_stack(int pid, const struct capture_stack_options *o, struct capture_stack *out, char *err,
                  size_t errlen);
void capture_stack_free(struct capture_stack *c);

/* ---- CPU profiles ---- */

struct capture_profile_options {
    enum capture_from from;
    int want_report;        /* a runtime that can also give a full report (the diagtop agent) gives that one */
    int want_live;          /* a runtime whose report comes live (the JVM's JFR) gives that one, with live_seconds,
                             * on_report and a cancel that keeps what was taken */
    double seconds;         /* how long; 0: each profiler's own (the sampler and a report: 10 s; a runtime's
                             * profiler: 30 s; Go's agent always takes 30) */
    int hz;                 /* the sampler and a report: samples per second per thread (0: 100) */
    enum cpu_method method; /* the sampler's (default: DIAGTOP_PROFILE_METHOD=, else perf then ptrace) */
    /* The sampler's live view: every live_seconds, a report of everything so far to on_report, which owns it. */
    double live_seconds;
    void (*on_report)(void *arg, struct cpu_report *r);
    void *report_arg;
    double timeout;         /* seconds for each exchange with the runtime's agent (default 5) */
    const char *save_dir;   /* where a runtime's profiler saves its file (NULL: the current directory) */
    const volatile sig_atomic_t *cancel; /* the sampler stops (its report of what was taken stands); a runtime's
                                          * request is given up */
    void (*progress)(void *arg, double fraction); /* how far it is (0..1), from the calling thread; may be NULL */
    void *progress_arg;
};

struct capture_profile {
    const char *by;  /* who answered, or was asked when it failed: "gops", "hotspot", "agent", or "native" (diagtop's
                      * sampler); NULL: nobody could (-ENOTSUP) */
    int is_report;   /* report holds the answer (every stack, per thread), else rt (the runtime's top functions and
                      * the file it saved) */
    struct rt_profile rt;
    struct cpu_report report;
};

void capture_profile_options_default(struct capture_profile_options *o);
void capture_profile_who(int pid, const struct capture_profile_options *o, struct capture_who *out);
/* pid's CPU profile as o says into out (zeroed first; all freed on failure). Returns 0, or -errno with a reason. */
int capture_profile(int pid, const struct capture_profile_options *o, struct capture_profile *out, char *err,
                    size_t errlen);
void capture_profile_free(struct capture_profile *c);
#endif
