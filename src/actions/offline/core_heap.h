/* core_heap: the native heap of a core: which allocator the program uses (glibc's malloc, or jemalloc, tcmalloc,
 * its own: said, not walked), and glibc's walked (glibc_heap) with the layout read from libc's DWARF. In two
 * steps, because libc's debug file is read only for the addresses the report will ask about: core_heap_find
 * names malloc's address before anything is named, core_heap_read walks once the modules know it. */
#ifndef DIAGTOP_CORE_HEAP_H
#define DIAGTOP_CORE_HEAP_H
#include <elfutils/libdwfl.h>

#include "core_report.h"

/* Finds the allocator; for glibc's, *malloc_addr gets malloc's address in libc (0 otherwise), which the caller
 * adds to the addresses the modules expect. */
void core_heap_find(Dwfl *dwfl, struct core_heap *out, unsigned long long *malloc_addr);
struct modules;
/* Walks glibc's heap found by core_heap_find, in the core's modules m. */
void core_heap_read(struct modules *m, unsigned long long malloc_addr, const struct mem_reader *mem,
                    const struct core_notes *notes, struct core_heap *out);
#endif
