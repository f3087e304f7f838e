/* ptrace_sampler: CPU samples of a process where perf_event_open is refused. Every thread is seized (no options:
 * diagtop's death detaches, never kills) only while profiling; each tick interrupts the threads that are running,
 * copies their registers and the top of their stack, and lets them go at once (tens of microseconds); unwinding
 * happens later on the copy. A sample stands for the CPU time the thread used since its previous sample
 * (schedstat), since ptrace cannot tell running from waiting for a CPU. Signals that arrive meanwhile are handed
 * back; a group stop (SIGSTOP) is kept with PTRACE_LISTEN. All calls from one thread (ptrace's rule). */
#ifndef DIAGTOP_PTRACE_SAMPLER_H
#define DIAGTOP_PTRACE_SAMPLER_H
#include <stddef.h>

#include "perf_sampler.h"

struct ptrace_sampler;

/* Seizes every thread of pid. Returns 0, or -errno with a reason naming what is missing (ptrace_scope, uid,
 * CAP_SYS_PTRACE). */
int ptrace_sampler_open(struct ptrace_sampler **out, int pid, char *err, size_t errlen);
/* One round: threads created since are seized, the running ones sampled. on_sample gets each sample and the CPU
 * time (ns) it stands for. Returns the number of samples, or -ESRCH when the process is gone. */
int ptrace_sampler_tick(struct ptrace_sampler *s, void (*on_sample)(void *arg, const struct perf_sample *,
                                                                    long long cpu_ns),
                        void *arg);
/* Nanoseconds the sampled threads spent stopped by the sampler so far (from interrupt to continue). */
long long ptrace_sampler_stopped_ns(const struct ptrace_sampler *s);
/* Detaches every thread (each is stopped for the detach, then runs on) and frees. */
void ptrace_sampler_close(struct ptrace_sampler *s);
#endif
