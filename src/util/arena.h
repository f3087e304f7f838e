/* arena: memory taken in order and given back all at once, its pages faulted in up front (MAP_POPULATE). For
 * what is read while a process is stopped: on a paravirtualized guest a page fault costs microseconds, and a
 * thousand goroutines' structures and stacks fault hundreds of fresh pages; reserved before the stop, none
 * falls inside it. */
#ifndef DIAGTOP_ARENA_H
#define DIAGTOP_ARENA_H
#include <stddef.h>

struct arena {
    unsigned char *base;
    size_t used, cap;
};

/* Reserves and faults in bytes (0 or failure: an empty arena, every take then fails). */
void arena_reserve(struct arena *a, size_t bytes);
/* n bytes (16-aligned) from a, or NULL when it is full or a is NULL: the caller then mallocs. */
void *arena_take(struct arena *a, size_t n);
/* Whether p came from a (so it is not freed alone). */
int arena_owns(const struct arena *a, const void *p);
void arena_release(struct arena *a);
#endif
