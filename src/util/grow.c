#include "grow.h"

#include <errno.h>
#include <stdlib.h>

int grow_reserve(void **items, size_t *cap, size_t n, size_t elem_size, size_t initial)
{
    if (n < *cap) return 0;
    size_t ncap = *cap ? *cap * 2 : initial;
    void *p = realloc(*items, ncap * elem_size);
    if (!p) return -ENOMEM;
    *items = p;
    *cap = ncap;
    return 0;
}
