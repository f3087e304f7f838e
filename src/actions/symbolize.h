/* symbolize: program counters -> function+offset, file:line and the chain of inlined calls, with libdw over the
 * process's modules, for a running (not stopped) process. Results are cached per PC (a busy server has hundreds
 * of threads parked on the same few PCs) until the modules are rebuilt. */
#ifndef DIAGTOP_SYMBOLIZE_H
#define DIAGTOP_SYMBOLIZE_H
#include <stddef.h>

struct stack_frame {
    unsigned long long pc;
    int inlined;              /* an inlined call: no frame of its own, same pc as the next */
    char *function;           /* NULL when no symbol covers the pc */
    unsigned long long offset; /* pc - function start, or pc - module base without a symbol */
    char *file;               /* NULL without line information */
    int line;
    char *module;             /* basename of the mapped file, NULL when the pc is in no module */
};

struct symbolizer;

struct modules;

/* A symbolizer over m (which must outlive it). NULL when out of memory. */
struct symbolizer *symbolizer_new(struct modules *m);
/* Expands one unwound PC into frames (innermost inlined call first). return_address: the PC is a return address
 * (every frame but the innermost), so lookups use pc - 1. Writes at most max frames, returns how many. */
int symbolizer_lookup(struct symbolizer *sy, unsigned long long pc, int return_address, int want_source,
                      struct stack_frame *out, int max);
void symbolizer_free(struct symbolizer *sy);
void stack_frame_clear(struct stack_frame *f);
#endif
