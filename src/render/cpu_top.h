/* cpu_top: a CPU profile (cpu_report) by function, like py-spy's `top`: per function its own samples (it is the
 * innermost frame; an inlined call counts as a function of its own) and total samples (it is anywhere on the
 * stack, each stack counted once per function however deep the recursion), with CPU time and percentages; the
 * callers and callees of one function (pprof -peek, perf report's caller/callee view); and the function identity
 * the other CPU renderers share (flame, pprof_write, cpu_json).
 *
 * A function is a name within a module: the frame's function, else "module+0xoffset", else "0xpc". Frames of the
 * same name in the same module (different pcs) are one function. Percentages are of the samples that passed the
 * thread filter. CPU time is each stack's cpu_ns (samples * period_ns where the sampler left it 0). */
#ifndef DIAGTOP_CPU_TOP_H
#define DIAGTOP_CPU_TOP_H
#include "actions/profile/cpu_report.h"
#include "text_lines.h"

/* ---- function identity, shared by the CPU renderers ---- */

struct cpu_fn {
    char *name;         /* raw bytes (untrusted): function, "module+0xoffset" or "0xpc" */
    char *shown;        /* name sanitized for a terminal (text_sanitize_display) */
    const char *module; /* the report's raw module name, NULL when none */
};

struct cpu_top_index {
    struct cpu_fn *fns;
    int nfns;
    int *of_frame; /* per frame of the report: its function, -1 for nothing (never for a valid frame) */
};

/* Groups the report's frames into functions. Returns 0 or -ENOMEM. The index points into r (module). */
int cpu_top_index_build(const struct cpu_report *r, struct cpu_top_index *out);
void cpu_top_index_free(struct cpu_top_index *x);
/* The function at position k of stack s (innermost first), or -1 for an index out of range. */
int cpu_top_index_at(const struct cpu_top_index *x, const struct cpu_report *r, const struct cpu_stack *s, int k);
/* The CPU time a stack stands for: its cpu_ns, else samples * period_ns. */
long long cpu_top_stack_ns(const struct cpu_report *r, const struct cpu_stack *s);

/* ---- the top-functions table ---- */

enum cpu_top_sort { CPU_TOP_BY_OWN, CPU_TOP_BY_TOTAL, CPU_TOP_BY_NAME };

struct cpu_top_opts {
    enum cpu_top_sort sort; /* own: by own, then total, then name; total: by total, then own, then name */
    int tid;                /* only this thread's stacks; 0 = all */
    int limit;              /* at most this many rows; 0 = all */
};

struct cpu_top_row {
    char *name;   /* raw bytes, as cpu_fn.name */
    char *module; /* raw bytes, NULL when none */
    long long own, total;       /* samples */
    long long own_ns, total_ns; /* CPU time */
};

struct cpu_top {
    struct cpu_top_row *rows;
    int n;
    int nfunctions;    /* functions with samples, before the limit */
    long long samples; /* that passed the filter (the 100%) */
    long long cpu_ns;
    /* what the header says, copied from the report so that the table outlives it */
    int pid, hz, tid;
    char comm[64], thread_name[64]; /* raw */
    char method[16], method_why[256];
    double seconds, target_cost_percent;
    long long all_samples, lost;
};

/* Returns 0, -EINVAL (a NULL argument) or -ENOMEM. */
int cpu_top_build(const struct cpu_report *r, const struct cpu_top_opts *o, struct cpu_top *out);
void cpu_top_free(struct cpu_top *t);

/* The table as text lines: a header (pid, samples, duration, rate, method and why, lost samples, the target's
 * cost when known, the thread filtered on), a column header, then the columns of `go tool pprof -top`: flat (own
 * time), flat%, sum% (of flat, down to this row), cum (total time), cum%, then function and module. Every column
 * starts at the same place on every line. width > 0 clips the function and module columns to fit that many
 * columns; 0 leaves lines unclipped (the function column as wide as the longest name). Every
 * untrusted string is sanitized for a terminal. Row i of t is always line 2 + i (after the header and the column
 * header); a last line "(N more functions)" follows when the limit cut rows, "(no samples)" when there were none.
 * Returns 0 or -ENOMEM. */
int cpu_top_text(const struct cpu_top *t, int width, struct text_lines *out);

/* ---- callers and callees of one function ---- */

/* Pseudo functions in peek rows: the function was the outermost frame (of a complete or a truncated stack), or
 * the innermost one (its own samples). */
#define CPU_PEEK_ROOT "(root)"
#define CPU_PEEK_TRUNCATED "(truncated stack)"
#define CPU_PEEK_SELF "(self)"

struct cpu_peek_row {
    char *name;   /* raw bytes, or one of the CPU_PEEK_* names */
    char *module; /* raw, NULL */
    long long samples; /* of stacks where this function called (caller) or was called by (callee) the function;
                        * once per stack */
};

struct cpu_peek {
    char *name, *module; /* the function looked at (raw) */
    long long samples;   /* all samples that passed the filter */
    long long own, total;
    struct cpu_peek_row *callers, *callees; /* by samples, largest first, then name */
    int ncallers, ncallees;
    int tid;
};

/* The function name/module (as a cpu_top_row has them; module NULL for none) in r's stacks of thread tid (0 =
 * all): the functions just outside it (callers) and just inside it (callees) in each stack that holds it; direct
 * recursion shows it as its own caller and callee. Returns 0, -ENOENT (no such function in the filtered stacks),
 * -EINVAL or -ENOMEM. */
int cpu_top_peek(const struct cpu_report *r, const char *name, const char *module, int tid, struct cpu_peek *out);
void cpu_top_peek_free(struct cpu_peek *p);
/* As text: a line naming the function with its own and total samples, then "Callers:" and "Callees:" blocks of
 * samples, % of all samples, % of the function's total, function and module. Sanitized for a terminal. width as
 * for cpu_top_text. Returns what cpu_top_peek returns. */
int cpu_top_callers(const struct cpu_report *r, const char *name, const char *module, int tid, int width,
                    struct text_lines *out);
#endif
