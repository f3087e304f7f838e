/* glibc_heap: the native heap of a process as glibc's malloc holds it, walked chunk by chunk: the main arena from
 * mp_.sbrk_base to its top, every thread arena (main_arena.next) heap by heap (heap_info, newest first through
 * prev), chunks freed into the tcache and fastbins told from chunks in use (they keep looking in use), and the
 * mmapped chunks (each an anonymous mapping of its own, counted against mp_.n_mmaps). The layout of malloc_state,
 * malloc_par and heap_info is given (from libc's DWARF, never a guess). A chunk whose size or link leads outside
 * the memory read stops that walk and is said. */
#ifndef DIAGTOP_GLIBC_HEAP_H
#define DIAGTOP_GLIBC_HEAP_H
#include <stddef.h>

#include "actions/target/mem_reader.h"
#include "core_notes.h"

#define HEAP_SAMPLES 4
#define HEAP_SAMPLE_BYTES 32

/* Where malloc keeps its state (offline/core_heap reads it from libc's DWARF). */
struct glibc_layout {
    unsigned long long main_arena, mp; /* addresses of the two variables */
    size_t ms_flags, ms_fastbins, ms_top, ms_next, ms_system_mem, ms_size;
    int nfastbins;
    size_t mp_sbrk_base, mp_n_mmaps, mp_mmapped_mem, mp_hp_pagesize;
    size_t hi_ar_ptr, hi_prev, hi_size, hi_sizeof;
};

/* In-use chunks of one size. */
struct heap_class {
    unsigned long long chunk_size; /* header included, as malloc rounds a request: 16-byte steps from 32 */
    unsigned long long count, bytes;
    unsigned long long sample[HEAP_SAMPLES]; /* user addresses (chunk + 16) */
    unsigned char head[HEAP_SAMPLES][HEAP_SAMPLE_BYTES]; /* their first bytes */
    int nsample;
};

struct glibc_heap {
    int arenas;
    unsigned long long in_use_bytes, in_use_chunks;   /* chunk sizes, headers included */
    unsigned long long free_bytes, free_chunks;       /* in bins, the tcache and fastbins */
    unsigned long long cached_chunks;                 /* of those, in the tcache and fastbins */
    unsigned long long top_bytes;                     /* the arenas' top chunks */
    unsigned long long mmapped_bytes, mmapped_chunks; /* found; mp_ says how many there are */
    long long mmapped_expected;                       /* mp_.n_mmaps */
    unsigned long long system_bytes;                  /* the arenas' system_mem */
    struct heap_class *classes;                       /* in-use chunks by size, most bytes first */
    int nclasses;
    char warning[200];                                /* a walk that stopped early, and why; "" */
};

/* Walks the heap. loads: the core's memory segments (where mmapped chunks are looked for). Returns 0, or -1 with
 * the reason (the arenas cannot be read, a layout this walker does not know). */
int glibc_heap_walk(const struct glibc_layout *l, const struct mem_reader *mem, const struct core_load *loads,
                    int nloads, struct glibc_heap *out, char *err, size_t errlen);
void glibc_heap_free(struct glibc_heap *h);
#endif
