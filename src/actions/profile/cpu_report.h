/* cpu_report: a CPU profile of any process as diagtop's sampler aggregated it (perf_event_open, or ptrace where
 * perf is refused): the distinct stacks, each with the samples and the CPU time it got, over symbolized frames.
 * Renderers turn it into the top-functions table, callers and callees, flame graphs, pprof and JSON. */
#ifndef DIAGTOP_CPU_REPORT_H
#define DIAGTOP_CPU_REPORT_H
#include <stddef.h>

/* One distinct frame. Frames of an inlined call come before the frame of the function they were inlined into,
 * with the same pc; a stack lists them innermost first. */
struct cpu_frame {
    unsigned long long pc;  /* exact for the innermost frame, else a return address */
    int inlined;            /* an inlined call at pc (no frame of its own) */
    char *function;         /* NULL when no symbol covers pc */
    unsigned long long offset; /* pc - function start, or pc - module start without a symbol */
    char *module;           /* basename of the mapped file, NULL when pc is in no module (JIT code) */
    char *file;             /* NULL without line information */
    int line;
};

struct cpu_stack {
    int *frames;           /* indices into cpu_report.frames, innermost first */
    int nframes;
    int truncated;         /* unwinding stopped before the outermost frame (JIT code, a stack copy too short) */
    int tid;
    long long samples;
    long long cpu_ns;      /* CPU time the samples stand for */
};

struct cpu_thread {
    int tid;
    char name[64]; /* raw bytes of comm (sanitize to show) */
    long long samples;
};

struct cpu_report {
    int pid;
    char comm[64];
    char method[16];      /* "perf" or "ptrace" */
    char method_why[256]; /* why that method ("perf_event_open refused: ..."), "" for perf */
    int hz;               /* the sampling rate asked for */
    double seconds;       /* how long it sampled */
    long long samples;    /* samples taken (sum over stacks) */
    long long lost;       /* samples the kernel or the sampler could not keep */
    long long period_ns;  /* CPU time one sample stands for (1e9 / hz) */
    double target_cost_percent; /* the measured slowdown of the target, or -1 when not known */
    struct cpu_frame *frames;
    int nframes;
    struct cpu_stack *stacks;
    int nstacks;
    struct cpu_thread *threads;
    int nthreads;
    char *saved_path;     /* the file the profiler saved (a JVM's JFR recording), NULL when none */
};

void cpu_report_free(struct cpu_report *r);
#endif
