/* core_diff: what changed between two cores of one program, "take two dumps and compare": threads and goroutines
 * grouped by identical stack (by function names, so that two processes of one build compare too) with their
 * counts in each, the heap's totals, and the heap's chunks in use by size, with counts and bytes in each. Rows
 * point into the two reports, which must outlive the diff. */
#ifndef DIAGTOP_CORE_DIFF_H
#define DIAGTOP_CORE_DIFF_H
#include "core_report.h"

struct core_diff_size {
    unsigned long long chunk_size;
    unsigned long long old_count, new_count, old_bytes, new_bytes;
};

struct core_diff_stack {
    int goroutine;                    /* a goroutine's stack, else a thread's */
    const char *state;                /* a goroutine's state, NULL for a thread */
    const struct stack_frame *frames; /* of one of them, in whichever report has it */
    int nframes;
    int old_count, new_count;
};

struct core_diff {
    const struct core_report *old, *new;
    int same_program;                 /* same pid and command, or at least the same build-ids */
    struct core_diff_size *sizes;     /* largest growth in bytes first; only when both heaps were walked */
    int nsizes;
    struct core_diff_stack *stacks;   /* those whose count changed, most changed first */
    int nstacks;
};

int core_diff_build(const struct core_report *old, const struct core_report *new, struct core_diff *out);
void core_diff_free(struct core_diff *d);
#endif
