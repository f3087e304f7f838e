/* cpu_profile: "why is it at 100% CPU?" for any process, without an agent and without stopping it: samples of
 * every thread at a fixed rate, each a copy of the registers and the top of the stack, unwound by diagtop's CFI
 * unwinder (unwind.c, the one `diagtop stack` uses) and aggregated into distinct stacks, named by the symbolizer.
 * The kernel takes the samples (perf_event_open) where it lets us; else a ptrace sampler interrupts the running
 * threads for a few tens of microseconds each (ptrace_sampler.c). The whole profile runs in the calling thread. */
#ifndef DIAGTOP_CPU_PROFILE_H
#define DIAGTOP_CPU_PROFILE_H
#include <signal.h>
#include <stddef.h>

#include "cpu_report.h"

enum cpu_method { CPU_METHOD_AUTO, CPU_METHOD_PERF, CPU_METHOD_PTRACE };

struct cpu_profile_options {
    int pid;
    double seconds;          /* how long; 0: until cancelled (the TUI's live view) */
    int hz;                  /* samples per second per thread (default 100) */
    enum cpu_method method;  /* AUTO: perf, else ptrace (saying why); PERF or PTRACE: only that one */
    const volatile sig_atomic_t *cancel; /* stops the profile (the report of what was taken is still made) */
    /* Every live_seconds, a report of everything so far is handed to on_report, which owns it. */
    double live_seconds;
    void (*on_report)(void *arg, struct cpu_report *r);
    void *report_arg;
    void (*progress)(void *arg, double fraction); /* with seconds > 0 */
    void *progress_arg;
};

void cpu_profile_options_default(struct cpu_profile_options *o, int pid);
/* The method to use by default: DIAGTOP_PROFILE_METHOD=ptrace|perf in the environment, else AUTO. */
enum cpu_method cpu_profile_method_from_env(void);
/* Samples pid as o says and fills out. A process that exits during the profile ends it early (the report says
 * so through its duration). One that execs is followed into the new program, each program's stacks named with its
 * own modules; the samples taken while it exec'd are dropped (counted lost). Returns 0, or -errno with a reason
 * (no such process, permission naming what is missing, both methods refused). */
int cpu_profile_run(const struct cpu_profile_options *o, struct cpu_report *out, char *err, size_t errlen);
#endif
