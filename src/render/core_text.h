/* core_text: a core's report as text: the process and why it was dumped; a Go program's goroutines (grouped by
 * state and stack, with where each was created); every thread's stack (grouped, the one that took the signal
 * first); the native heap's totals and its chunks in use by size, most bytes first, with the first bytes of a
 * few; then the files it mapped with their build-ids, the missing ones named. */
#ifndef DIAGTOP_CORE_TEXT_H
#define DIAGTOP_CORE_TEXT_H
#include "actions/offline/core_diff.h"
#include "actions/offline/core_report.h"
#include "text_lines.h"

struct core_text_opts {
    const char *path; /* the core, as named */
    int group, source;
    int all_files;    /* list every mapped file, not only those the stacks are in and the missing ones */
    int all_goroutines; /* the runtime's own goroutines too */
    int heap_rows;    /* sizes of the heap's histogram shown (0: all) */
};

int core_text_render(const struct core_report *r, const struct core_text_opts *o, struct text_lines *out);
/* Two cores: threads and goroutines, the heap in use and by size (largest growth first), the stacks whose count
 * changed. */
int core_text_diff(const struct core_diff *d, const char *old_path, const char *new_path,
                   const struct core_text_opts *o, struct text_lines *out);
#endif
