/* mem_cache: a mem_reader in front of another that fetches whole pages and keeps the last few hundred, so that a
 * walker reading many small fields (goroutine structures, return addresses a word at a time) makes one read per
 * page instead of one per field: a thousand goroutines' stacks cost a few thousand fewer process_vm_readv calls
 * while the process is stopped. Only for memory that holds still while it is read (a stopped process, a core). */
#ifndef DIAGTOP_MEM_CACHE_H
#define DIAGTOP_MEM_CACHE_H
#include "mem_reader.h"

#define MEM_CACHE_PAGE 4096
#define MEM_CACHE_SLOTS 256 /* 1 MiB */

struct mem_cache {
    const struct mem_reader *under;
    unsigned long long tag[MEM_CACHE_SLOTS]; /* page address + 1; 0: empty */
    unsigned char (*pages)[MEM_CACHE_PAGE];
};

/* A reader over c (set up by mem_cache_init, freed by mem_cache_free). Returns -1 when out of memory, and the
 * reader then reads through under directly. */
int mem_cache_init(struct mem_cache *c, const struct mem_reader *under, struct mem_reader *out);
void mem_cache_free(struct mem_cache *c);
#endif
