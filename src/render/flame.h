/* flame: a CPU profile (cpu_report) as flame graphs: folded stacks (Brendan Gregg's format, for flamegraph.pl and
 * speedscope), a text icicle for the terminal, and a self-contained interactive SVG flame graph.
 *
 * All three merge stacks by function (cpu_top's identity: frames of the same name are one block under the same
 * parent) and order siblings by name, as flamegraph.pl does. Untrusted names are sanitized for a terminal in the
 * text forms (';' also becomes '?' in folded lines, where it separates frames) and XML-escaped in the SVG. */
#ifndef DIAGTOP_FLAME_H
#define DIAGTOP_FLAME_H
#include <stddef.h>

#include "actions/profile/cpu_report.h"
#include "text_lines.h"

/* One line per distinct stack of thread tid (0 = all): "outermost;...;innermost COUNT", sorted; the counts add
 * up to the samples that passed the filter (a stack without frames has no line). Returns 0 or -ENOMEM. */
int flame_folded(const struct cpu_report *r, int tid, struct text_lines *out);

/* An icicle of width columns: one line per depth from the outermost frames down, at most height lines (0: all
 * depths). A function is a block under its caller, as wide as its share of the samples ([start, end) columns
 * rounded down from its first and past-last sample), drawn as its name clipped to fit (".." when cut), padded
 * with spaces and closed by '|'; a block narrower than one column is left out. Returns 0, -EINVAL (width < 1) or
 * -ENOMEM. */
int flame_icicle(const struct cpu_report *r, int tid, int width, int height, struct text_lines *out);

struct flame_svg_opts {
    int tid;             /* 0 = all threads */
    int width;           /* pixels; 0 = 1200 */
    int color_by_module; /* one hue per module, else flamegraph.pl's warm colours by a hash of the name */
    const char *title;   /* NULL: "CPU profile of PID N (comm)"; untrusted bytes are fine */
};

/* A well-formed, self-contained SVG document (no external scripts, styles or fonts): one rectangle per block,
 * root at the bottom, with a <title> naming the function, its samples and percentage; an inline script zooms on
 * click, resets on "Reset Zoom", searches by substring (Search, or Ctrl-F) and shows the hovered frame. Blocks
 * narrower than 0.1 px are left out. *out is malloc'd, NUL-terminated, *len its length. Returns 0 or -ENOMEM. */
int flame_svg(const struct cpu_report *r, const struct flame_svg_opts *o, char **out, size_t *len);
#endif
