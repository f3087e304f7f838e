/* grow: room for one more element in a growable array (doubling), the pattern every list here needs. */
#ifndef DIAGTOP_GROW_H
#define DIAGTOP_GROW_H
#include <stddef.h>

/* Ensures (*items) has room for n + 1 elements of elem_size, doubling *cap (from initial). Returns 0 or -ENOMEM
 * (the array is then unchanged). */
int grow_reserve(void **items, size_t *cap, size_t n, size_t elem_size, size_t initial);
#define GROW(arr, cap, n, initial) grow_reserve((void **)&(arr), &(cap), (size_t)(n), sizeof *(arr), (initial))
#endif
