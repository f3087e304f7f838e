/* big_alloc: anonymous mappings advised for huge pages. */
#include "big_alloc.h"

#include <sys/mman.h>

void *big_alloc(size_t bytes)
{
    if (!bytes) bytes = 1;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return NULL;
    if (bytes >= (2u << 20)) madvise(p, bytes, MADV_HUGEPAGE); /* a hint: without THP it is 4 KiB pages */
    return p;
}

void *big_grow(void *p, size_t old, size_t bytes)
{
    if (!p) return big_alloc(bytes);
    void *q = mremap(p, old ? old : 1, bytes ? bytes : 1, MREMAP_MAYMOVE);
    if (q == MAP_FAILED) return NULL;
    if (bytes >= (2u << 20)) madvise(q, bytes, MADV_HUGEPAGE);
    return q;
}

void big_free(void *p, size_t bytes)
{
    if (p) munmap(p, bytes ? bytes : 1);
}
