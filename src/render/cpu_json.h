/* cpu_json: a CPU profile (cpu_report) as one JSON document (`diagtop profile PID --json` for the native
 * profiler): what was sampled and how, the threads, the top functions (cpu_top's numbers) and every distinct
 * stack with its frames. Integers are exact; strings from the target are valid UTF-8 (invalid bytes become
 * U+FFFD, control characters are escaped by JSON).
 *
 * {"pid", "name", "method", "method_why" (null for none), "hz", "seconds", "samples", "lost", "period_ns",
 *  "target_cost_percent" (null when not known), "cpu_ns", "tid" (the filter, null for all),
 *  "threads": [{"tid", "name", "samples"}],
 *  "functions": [{"name", "module", "own_samples", "total_samples", "own_cpu_ns", "total_cpu_ns"}] (by own),
 *  "stacks": [{"tid", "samples", "cpu_ns", "truncated", "frames": [{"function", "module", "file", "line",
 *              "inlined", "pc", "offset" | "module_offset"}] (innermost first)}]}
 * "name" of a function is cpu_top's: the function, "module+0xoffset" or "0xpc"; "function" of a frame is null
 * without a symbol; "pc" is a hex string. "samples" and "cpu_ns" at the top count the filtered stacks. */
#ifndef DIAGTOP_CPU_JSON_H
#define DIAGTOP_CPU_JSON_H
#include "actions/profile/cpu_report.h"

struct cpu_json_opts {
    int tid;       /* only this thread's stacks and functions; 0 = all */
    int functions; /* at most this many functions; 0 = all */
    int no_stacks; /* leave "stacks" out (an empty array) */
};

/* Returns a malloc'd document (one line), or NULL when out of memory. o may be NULL. */
char *cpu_json(const struct cpu_report *r, const struct cpu_json_opts *o);
#endif
