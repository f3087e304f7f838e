/* rt_text: what a runtime answered (results.h) as text lines, for the CLI and the panes. Every string that came
 * from an agent is sanitized for the terminal here. */
#ifndef DIAGTOP_RT_TEXT_H
#define DIAGTOP_RT_TEXT_H
#include "actions/runtimes/results.h"
#include "heap_view.h"
#include "text_lines.h"

/* Goroutines or Java threads; grouped: threads with identical stacks in one block with their count, states and
 * wait times. */
int rt_text_stack(const struct rt_stack *s, int grouped, struct text_lines *out);
/* Named values, by section, with human units (bytes also exact). */
int rt_text_fields(const struct rt_fields *fs, struct text_lines *out);
int rt_text_gc(const struct rt_gc *g, struct text_lines *out);

/* The heap table (the leak view) of a heap_view, at most limit rows (0: all); with_stacks: each allocation site's
 * whole stack under its row. */
int rt_text_heap(const struct heap_view *v, int limit, int with_stacks, struct text_lines *out);
/* The top functions of a CPU profile (at most limit, 0: all), and where it was saved. */
int rt_text_profile(const struct rt_profile *p, int limit, struct text_lines *out);
int rt_text_file(const struct rt_file *f, struct text_lines *out);
#endif
