/* symbolize: program counters -> function+offset, file:line and the chain of inlined calls, with libdw over the
 * process's modules, for a running (not stopped) process. Results are cached per PC (a busy server has hundreds
 * of threads parked on the same few PCs) until the modules are rebuilt. */
#ifndef DIAGTOP_SYMBOLIZE_H
#define DIAGTOP_SYMBOLIZE_H
#include <stddef.h>

#include "frame.h"

struct symbolizer;

struct modules;

/* A symbolizer over m (which must outlive it). NULL when out of memory. */
struct symbolizer *symbolizer_new(struct modules *m);
/* Expands one unwound PC into frames (innermost inlined call first). return_address: the PC is a return address
 * (every frame but the innermost), so lookups use pc - 1. Writes at most max frames, returns how many. */
int symbolizer_lookup(struct symbolizer *sy, unsigned long long pc, int return_address, int want_source,
                      struct stack_frame *out, int max);
/* The address a lookup of pc asks the modules about. */
unsigned long long symbolizer_address(unsigned long long pc, int return_address);
/* Whether pc lies in a shared library (not a program: no PT_INTERP, not ET_EXEC) whose symbol table defines one of
 * names (NULL-terminated) as a global or weak symbol: what a library exports. */
int symbolizer_library_exports(struct symbolizer *sy, unsigned long long pc, const char *const *names);
void symbolizer_free(struct symbolizer *sy);
#endif
