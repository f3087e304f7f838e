/* frame: what one stack frame is, unwound (a bare PC) and symbolized (function, file:line, module). Plain data,
 * shared by the unwinder, the symbolizer and everything that renders a stack, so that none of those callers sees
 * the elfutils types behind them. */
#ifndef DIAGTOP_FRAME_H
#define DIAGTOP_FRAME_H

/* One frame: its PC, and whether the PC is exact (the innermost frame, or one interrupted by a signal) rather
 * than a return address (whose call instruction is at pc - 1). */
struct unwind_frame {
    unsigned long long pc;
    int exact;
};

struct stack_frame {
    unsigned long long pc;
    int inlined;              /* an inlined call: no frame of its own, same pc as the next */
    char *function;           /* NULL when no symbol covers the pc */
    unsigned long long offset; /* pc - function start, or pc - module base without a symbol */
    char *file;               /* NULL without line information */
    int line;
    char *module;             /* basename of the mapped file, NULL when the pc is in no module */
};

/* Frees what a symbolized frame owns (function, file, module) and zeroes it. */
void stack_frame_clear(struct stack_frame *f);
#endif
