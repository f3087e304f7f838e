#include "arena.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

void arena_reserve(struct arena *a, size_t bytes)
{
    memset(a, 0, sizeof *a);
    if (!bytes) return;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) return;
    a->base = p;
    a->cap = bytes;
}

void *arena_take(struct arena *a, size_t n)
{
    if (!a || !a->base) return NULL;
    size_t at = (a->used + 15) & ~(size_t)15;
    if (at > a->cap || n > a->cap - at) return NULL;
    a->used = at + n;
    return a->base + at;
}

int arena_owns(const struct arena *a, const void *p)
{
    return a && a->base && (const unsigned char *)p >= a->base && (const unsigned char *)p < a->base + a->cap;
}

void arena_release(struct arena *a)
{
    if (a->base) munmap(a->base, a->cap);
    memset(a, 0, sizeof *a);
}
