/* hprof_text: a heap dump's analysis (offline/heap_analysis.h) as text lines: summary, histogram with retained
 * sizes, dominators, instances, the merged paths from GC roots as a tree with each path in one line, suspects,
 * an object's fields, a diff. Names and strings from the file are sanitized for the terminal here. */
#ifndef DIAGTOP_HPROF_TEXT_H
#define DIAGTOP_HPROF_TEXT_H
#include "actions/offline/heap_analysis.h"
#include "text_lines.h"

int hprof_text_report(const struct heap_report *r, struct text_lines *out);
#endif
