/* stack_text: a stack capture as text lines: a header (threads, how long the target was stopped), then one block
 * per thread, or per group of threads with identical stacks: "#n  function+0xoff  file:line  [module]". */
#ifndef DIAGTOP_STACK_TEXT_H
#define DIAGTOP_STACK_TEXT_H
#include "actions/stack/stack.h"
#include "text_lines.h"

struct stack_text_opts {
    int group;  /* threads with identical stacks share one block */
    int source; /* show file:line */
};

int stack_text_render(const struct stack_result *r, const struct stack_text_opts *o, struct text_lines *out);
/* The thread blocks alone (each after an empty line), without the capture's header line. */
int stack_text_threads(const struct stack_result *r, const struct stack_text_opts *o, struct text_lines *out);
/* Frame lines ("  #0   function+0x1a  file.c:12  [module]"), then "  (error)" when error is not "". */
int stack_text_frames(const struct stack_frame *f, int n, const char *error, int source, struct text_lines *out);
/* One frame line without the leading index, sanitized for a terminal. */
void stack_text_frame(char *buf, size_t bufsz, const struct stack_frame *f, int source);
#endif
