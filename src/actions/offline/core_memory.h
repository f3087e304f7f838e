/* core_memory: a core's memory as a mem_reader: bytes the core holds (its PT_LOADs, read with pread), else the
 * bytes of the mapped file they came from (a program's read-only data, which the kernel does not dump: the wait
 * reasons' strings of a Go program live there), through the modules libdwfl reported for the core. */
#ifndef DIAGTOP_CORE_MEMORY_H
#define DIAGTOP_CORE_MEMORY_H
#include <elfutils/libdwfl.h>

#include "actions/target/mem_reader.h"
#include "core_notes.h"

struct core_memory {
    int fd;                        /* the core */
    const struct core_notes *notes; /* its loads */
    Dwfl *dwfl;                    /* its modules, for what the core does not hold; NULL: none */
};

/* A reader over cm (which must outlive it). */
struct mem_reader core_memory_reader(struct core_memory *cm);
#endif
