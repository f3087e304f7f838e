/* perf_sampler: CPU-clock samples of every thread of one process, taken by the kernel (perf_event_open) with a
 * copy of the user registers and of the top of the user stack: the target is never stopped or traced. One
 * event per CPU with inherit set, so threads created later are sampled too; one ring buffer per event. */
#ifndef DIAGTOP_PERF_SAMPLER_H
#define DIAGTOP_PERF_SAMPLER_H
#include <stddef.h>

#include "actions/target/arch_regs.h"

#define PERF_SAMPLER_STACK 16384 /* bytes of stack copied per sample: 8 KiB sufficed in tests, more costs no more */

struct perf_sample {
    int pid, tid;
    unsigned long long time_ns;                  /* CLOCK_MONOTONIC-like perf clock */
    unsigned long long regs[ARCH_DWARF_REGS];    /* DWARF order (arch_regs_dwarf) */
    const unsigned char *stack;                  /* the copy, starting at the stack pointer */
    size_t stack_len;                            /* bytes really copied */
};

struct perf_sampler;

/* Starts sampling pid at hz on every CPU. Returns 0, or -errno with a reason naming what refused it
 * (perf_event_paranoid and its value, CAP_PERFMON, a memory lock limit). */
int perf_sampler_open(struct perf_sampler **out, int pid, int hz, char *err, size_t errlen);
/* Waits up to timeout_ms for samples and hands each of the target (children it forked are skipped) to on_sample.
 * Returns how many, or -errno. *lost grows by the samples the kernel had to drop. */
int perf_sampler_read(struct perf_sampler *s, int timeout_ms, void (*on_sample)(void *arg, const struct perf_sample *),
                      void *arg, long long *lost);
void perf_sampler_close(struct perf_sampler *s);
#endif
