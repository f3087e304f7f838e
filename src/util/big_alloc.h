/* big_alloc: large arrays (a heap dump's index: tens to hundreds of MiB each) in their own anonymous mappings,
 * backed by transparent huge pages where the kernel offers them (madvise mode): one fault per 2 MiB instead of
 * 512, which on a paravirtualized guest was a fifth of a heap dump's read. A reservation costs nothing until
 * touched, so an array may be sized for the worst case up front and never grown or copied. */
#ifndef DIAGTOP_BIG_ALLOC_H
#define DIAGTOP_BIG_ALLOC_H
#include <stddef.h>

/* bytes of zeroed memory, or NULL. */
void *big_alloc(size_t bytes);
/* The array at p (old bytes) resized to bytes, moved if need be, the new part zeroed; NULL on failure (p stays). */
void *big_grow(void *p, size_t old, size_t bytes);
/* Frees what big_alloc(bytes) returned (NULL is fine). */
void big_free(void *p, size_t bytes);
#endif
