/* text_lines: a growable list of text lines, the common output of renderers (CLI prints them, TUI panes scroll,
 * search and save them). */
#ifndef DIAGTOP_TEXT_LINES_H
#define DIAGTOP_TEXT_LINES_H
#include <stddef.h>
#include <stdio.h>

struct text_lines {
    char **lines;
    size_t n, cap;
};

/* Appends a formatted line (no newline). Returns 0 or -ENOMEM. */
int text_lines_add(struct text_lines *tl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int text_lines_write(const struct text_lines *tl, FILE *out);
void text_lines_free(struct text_lines *tl);
#endif
