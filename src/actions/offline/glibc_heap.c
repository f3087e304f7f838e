#include "glibc_heap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

#define PREV_INUSE 1ULL
#define IS_MMAPPED 2ULL
#define NON_MAIN_ARENA 4ULL
#define SIZE_BITS 7ULL
#define ALIGN 16ULL
#define MINSIZE 32ULL
#define NONCONTIGUOUS 2           /* malloc_state.flags: the main arena is not one sbrk'd region */
#define HEAP_MAX (64ULL << 20)    /* a thread arena's heap: 2 * DEFAULT_MMAP_THRESHOLD_MAX on 64-bit */
#define MAX_ARENAS 4096
#define MAX_CHAIN (1u << 20)      /* a free list longer than this is a loop: corrupt */
#define TCACHE_BINS 64
#define TCACHE_CHUNK 0x290        /* tcache_perthread_struct (640 bytes) as a chunk */
#define WINDOW (1u << 20)
#define READ_BUDGET (1LL << 27)   /* reads in one walk: a corrupt heap's loops end, a real one needs ~1 per chunk */

/* ---- memory, through a window ---- */

struct window {
    const struct mem_reader *mem;
    unsigned long long base;
    size_t len;
    unsigned char *buf;
    long long budget; /* reads left: every loop of the walk reads, so a cycle in hostile links ends */
};

static int win_read(struct window *w, unsigned long long addr, void *out, size_t n)
{
    if (--w->budget < 0) return -1;
    if (addr < w->base || addr + n > w->base + w->len) {
        w->len = 0;
        unsigned long long base = addr & ~4095ULL;
        for (size_t want = WINDOW; want >= 4096 && !w->len; want /= 4)
            if (addr + n <= base + want && mem_read(w->mem, base, w->buf, want) == 0) {
                w->base = base;
                w->len = want;
            }
        if (!w->len) return mem_read(w->mem, addr, out, n); /* a read across segments, or past one's end */
    }
    memcpy(out, w->buf + (addr - w->base), n);
    return 0;
}

static int win_u64(struct window *w, unsigned long long addr, unsigned long long *v) { return win_read(w, addr, v, 8); }

/* ---- free chunks that look in use: the tcache's and the fastbins' ---- */

struct addr_set {
    unsigned long long *a;
    size_t n, cap;
    int sorted;
};

static int set_add(struct addr_set *s, unsigned long long v)
{
    if (GROW(s->a, s->cap, s->n, 1024) < 0) return -1;
    s->a[s->n++] = v;
    s->sorted = 0;
    return 0;
}

static int by_value(const void *x, const void *y)
{
    unsigned long long a = *(const unsigned long long *)x, b = *(const unsigned long long *)y;
    return a < b ? -1 : a > b;
}

static int set_has(struct addr_set *s, unsigned long long v)
{
    if (!s->n) return 0;
    if (!s->sorted) {
        qsort(s->a, s->n, sizeof *s->a, by_value);
        s->sorted = 1;
    }
    return bsearch(&v, s->a, s->n, sizeof v, by_value) != NULL;
}

/* Safe-linking (glibc 2.32): a free list's link is stored xored with its own address >> 12. */
static unsigned long long reveal(unsigned long long where, unsigned long long stored) { return (where >> 12) ^ stored; }

/* A fastbin's chunks (each of the bin's size), into free. -1 when the list is not one. */
static int walk_fastbin(struct window *w, unsigned long long p, unsigned long long size, struct addr_set *free_set)
{
    for (unsigned k = 0; p && k < MAX_CHAIN; k++) {
        unsigned long long sz, fd;
        if (p % ALIGN || win_u64(w, p + 8, &sz) < 0 || (sz & ~SIZE_BITS) != size || win_u64(w, p + 16, &fd) < 0 ||
            set_add(free_set, p) < 0)
            return -1;
        p = reveal(p + 16, fd);
    }
    return p ? -1 : 0;
}

/* Whether the chunk of user address mem is a tcache_perthread_struct: every bin's count is its list's length, each
 * entry a chunk of the bin's size, each list ending in NULL. Its entries go into free when it is. */
static int take_tcache(struct window *w, unsigned long long mem, struct addr_set *free_set)
{
    unsigned short counts[TCACHE_BINS];
    unsigned long long entries[TCACHE_BINS];
    if (win_read(w, mem, counts, sizeof counts) < 0 || win_read(w, mem + sizeof counts, entries, sizeof entries) < 0)
        return 0;
    size_t mark = free_set->n;
    for (int i = 0; i < TCACHE_BINS; i++) {
        unsigned long long e = entries[i];
        for (unsigned k = 0; k < counts[i]; k++) {
            unsigned long long sz, next;
            if (!e || e % ALIGN || win_u64(w, e - 8, &sz) < 0 || (sz & ~SIZE_BITS) != MINSIZE + ALIGN * (unsigned)i ||
                win_u64(w, e, &next) < 0 || set_add(free_set, e - 16) < 0) {
                free_set->n = mark; /* not a tcache: nothing of it is believed */
                return 0;
            }
            e = reveal(e, next);
        }
        if (e) {
            free_set->n = mark;
            return 0;
        }
    }
    return 1;
}

/* ---- the classes ---- */

struct classes {
    struct heap_class *c;
    size_t n, cap;       /* an open-addressed table by chunk_size; cap a power of two */
};

static struct heap_class *class_of(struct classes *cs, unsigned long long size)
{
    if (cs->n * 2 >= cs->cap) {
        size_t cap = cs->cap ? cs->cap * 2 : 1024;
        struct heap_class *c = calloc(cap, sizeof *c);
        if (!c) return NULL;
        for (size_t i = 0; i < cs->cap; i++) {
            if (!cs->c[i].chunk_size) continue;
            size_t h = (size_t)(cs->c[i].chunk_size / ALIGN * 0x9E3779B97F4A7C15ULL) & (cap - 1);
            while (c[h].chunk_size) h = (h + 1) & (cap - 1);
            c[h] = cs->c[i];
        }
        free(cs->c);
        cs->c = c;
        cs->cap = cap;
    }
    size_t h = (size_t)(size / ALIGN * 0x9E3779B97F4A7C15ULL) & (cs->cap - 1);
    while (cs->c[h].chunk_size && cs->c[h].chunk_size != size) h = (h + 1) & (cs->cap - 1);
    if (!cs->c[h].chunk_size) {
        cs->c[h].chunk_size = size;
        cs->n++;
    }
    return &cs->c[h];
}

/* ---- one heap region, chunk by chunk ---- */

struct walk {
    struct window w;
    struct glibc_heap *out;
    struct addr_set free_set;  /* the tcache's and fastbins' chunks */
    struct addr_set in_use;    /* chunks in use: addresses, then sizes (the tally waits for the free set) */
    struct addr_set tcaches;   /* candidate tcache_perthread_struct chunks */
};

/* Walks [start, top]: each chunk's size leads to the next; one is in use when the next says PREV_INUSE. The top
 * chunk ends the region (the main arena's, or a heap's last); a 16-byte fencepost ends an older heap. */
static void walk_region(struct walk *wk, unsigned long long start, unsigned long long top, unsigned long long end)
{
    unsigned long long p = start, size, next_size;
    if (win_u64(&wk->w, p + 8, &size) < 0) goto broken;
    while (p != top) {
        unsigned long long sz = size & ~SIZE_BITS, next = p + sz;
        if (sz < ALIGN || sz % ALIGN || next > end || next < p) goto broken;
        if (sz == ALIGN) return; /* a fencepost: the end of an older heap */
        if (win_u64(&wk->w, next + 8, &next_size) < 0) goto broken;
        if (next_size & PREV_INUSE) {
            if (set_add(&wk->in_use, p) < 0 || set_add(&wk->in_use, sz) < 0) return;
            if (sz == TCACHE_CHUNK && set_add(&wk->tcaches, p + 16) < 0) return;
        } else {
            wk->out->free_bytes += sz;
            wk->out->free_chunks++;
        }
        p = next;
        size = next_size;
    }
    wk->out->top_bytes += size & ~SIZE_BITS;
    return;
broken:
    if (!wk->out->warning[0])
        snprintf(wk->out->warning, sizeof wk->out->warning,
                 "a chunk at 0x%llx has a size that leads outside its heap (corrupt, or memory missing from the core): "
                 "that heap's walk stopped there", p);
}

static void walk_fastbins(struct walk *wk, const struct glibc_layout *l, unsigned long long arena)
{
    for (int i = 0; i < l->nfastbins; i++) {
        unsigned long long p;
        if (win_u64(&wk->w, arena + l->ms_fastbins + 8ULL * (unsigned)i, &p) == 0 && p &&
            walk_fastbin(&wk->w, p, MINSIZE + ALIGN * (unsigned)i, &wk->free_set) < 0 && !wk->out->warning[0])
            snprintf(wk->out->warning, sizeof wk->out->warning, "fastbin %d of arena 0x%llx is corrupt", i, arena);
    }
}

/* A thread arena: its heaps from the one holding top back through prev; the first heap's chunks start after the
 * arena itself, the others' after their heap_info. */
static void walk_thread_arena(struct walk *wk, const struct glibc_layout *l, unsigned long long arena,
                              unsigned long long top)
{
    unsigned long long h = top & ~(HEAP_MAX - 1), region_top = top;
    for (int k = 0; h && k < 4096; k++) {
        unsigned long long ar, prev, size;
        if (win_u64(&wk->w, h + l->hi_ar_ptr, &ar) < 0 || ar != arena || win_u64(&wk->w, h + l->hi_prev, &prev) < 0 ||
            win_u64(&wk->w, h + l->hi_size, &size) < 0 || size > HEAP_MAX) {
            snprintf(wk->out->warning, sizeof wk->out->warning, "the heap at 0x%llx of arena 0x%llx is unreadable", h,
                     arena);
            return;
        }
        unsigned long long start = prev ? h + l->hi_sizeof : arena + l->ms_size;
        start = (start + 16 + ALIGN - 1) / ALIGN * ALIGN - 16; /* chunk2mem aligned */
        walk_region(wk, start, region_top, h + size);
        region_top = 0; /* an older heap ends in fenceposts, not at top */
        h = prev;
    }
}

/* mmapped chunks: each at the start of an anonymous mapping (or one after another where the kernel merged two),
 * marked IS_MMAPPED, its size (with the alignment before it) a whole number of pages within the mapping. */
static void find_mmapped(struct walk *wk, const struct core_load *loads, int nloads)
{
    for (int i = 0; i < nloads; i++) {
        unsigned long long at = loads[i].vaddr, end = loads[i].vaddr + loads[i].memsz;
        while (at + 16 <= end) {
            unsigned long long hdr[2];
            if (win_read(&wk->w, at, hdr, sizeof hdr) < 0) break;
            unsigned long long len = (hdr[1] & ~SIZE_BITS) + hdr[0];
            if (!(hdr[1] & IS_MMAPPED) || (hdr[1] & NON_MAIN_ARENA) || hdr[0] % ALIGN || hdr[0] >= 4096 ||
                len % 4096 || len < 4096 || len > end - at)
                break;
            wk->out->mmapped_chunks++;
            wk->out->mmapped_bytes += hdr[1] & ~SIZE_BITS;
            if (set_add(&wk->in_use, at + hdr[0]) < 0 || set_add(&wk->in_use, hdr[1] & ~SIZE_BITS) < 0) return;
            at += len;
        }
    }
}

/* Tallies the chunks in use (not in the free set) by size, with the first few of each as samples. */
static int tally(struct walk *wk)
{
    struct classes cs = {0};
    for (size_t i = 0; i + 1 < wk->in_use.n; i += 2) {
        unsigned long long p = wk->in_use.a[i], sz = wk->in_use.a[i + 1];
        if (set_has(&wk->free_set, p)) { /* freed into the tcache or a fastbin: it only looks in use */
            wk->out->cached_chunks++;
            wk->out->free_bytes += sz;
            continue;
        }
        struct heap_class *c = class_of(&cs, sz);
        if (!c) {
            free(cs.c);
            return -1;
        }
        c->count++;
        c->bytes += sz;
        wk->out->in_use_chunks++;
        wk->out->in_use_bytes += sz;
        if (c->nsample < HEAP_SAMPLES) {
            c->sample[c->nsample] = p + 16;
            if (win_read(&wk->w, p + 16, c->head[c->nsample], HEAP_SAMPLE_BYTES) < 0)
                memset(c->head[c->nsample], 0, HEAP_SAMPLE_BYTES);
            c->nsample++;
        }
    }
    size_t n = 0;
    for (size_t i = 0; i < cs.cap; i++)
        if (cs.c[i].chunk_size) cs.c[n++] = cs.c[i];
    wk->out->classes = cs.c;
    wk->out->nclasses = (int)n;
    return 0;
}

static int by_bytes(const void *x, const void *y)
{
    const struct heap_class *a = x, *b = y;
    if (a->bytes != b->bytes) return a->bytes < b->bytes ? 1 : -1;
    return a->chunk_size < b->chunk_size ? -1 : a->chunk_size > b->chunk_size;
}

static int walk_arenas(struct walk *wk, const struct glibc_layout *l, char *err, size_t errlen)
{
    unsigned long long sbrk_base, arena = l->main_arena;
    int flags;
    if (win_u64(&wk->w, l->mp + l->mp_sbrk_base, &sbrk_base) < 0 ||
        win_read(&wk->w, arena + l->ms_flags, &flags, sizeof flags) < 0) {
        snprintf(err, errlen, "cannot read main_arena and mp_ in the core");
        return -1;
    }
    if (flags & NONCONTIGUOUS) {
        snprintf(err, errlen, "the main arena is not contiguous (sbrk failed and malloc fell back to mmap): not walked");
        return -1;
    }
    for (int k = 0; k < MAX_ARENAS; k++) {
        unsigned long long top, next, system;
        if (win_u64(&wk->w, arena + l->ms_top, &top) < 0 || win_u64(&wk->w, arena + l->ms_next, &next) < 0 ||
            win_u64(&wk->w, arena + l->ms_system_mem, &system) < 0) {
            snprintf(err, errlen, "cannot read the arena at 0x%llx", arena);
            return -1;
        }
        wk->out->arenas++;
        wk->out->system_bytes += system;
        walk_fastbins(wk, l, arena);
        if (arena == l->main_arena) {
            if (sbrk_base && top) walk_region(wk, sbrk_base, top, top + (1ULL << 40));
        } else {
            walk_thread_arena(wk, l, arena, top);
        }
        arena = next;
        if (arena == l->main_arena) return 0;
    }
    snprintf(wk->out->warning, sizeof wk->out->warning, "more than %d arenas: the list is not believed past them",
             MAX_ARENAS);
    return 0;
}

int glibc_heap_walk(const struct glibc_layout *l, const struct mem_reader *mem, const struct core_load *loads,
                    int nloads, struct glibc_heap *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (l->mp_hp_pagesize) {
        unsigned long long hp = 0;
        if (mem_read(mem, l->mp + l->mp_hp_pagesize, &hp, sizeof hp) == 0 && hp) {
            snprintf(err, errlen, "malloc uses huge pages (glibc.malloc.hugetlb): thread heaps are not walked yet");
            return -1;
        }
    }
    struct walk wk = {.w = {.mem = mem, .buf = malloc(WINDOW), .budget = READ_BUDGET}, .out = out};
    int n_mmaps = 0, rc = -1;
    if (!wk.w.buf) snprintf(err, errlen, "out of memory");
    else if (walk_arenas(&wk, l, err, errlen) == 0) {
        for (size_t i = 0; i < wk.tcaches.n; i++) take_tcache(&wk.w, wk.tcaches.a[i], &wk.free_set);
        find_mmapped(&wk, loads, nloads);
        out->mmapped_expected = mem_read(mem, l->mp + l->mp_n_mmaps, &n_mmaps, sizeof n_mmaps) == 0 ? n_mmaps : -1;
        rc = tally(&wk);
        if (rc < 0) snprintf(err, errlen, "out of memory");
        else if (out->nclasses) qsort(out->classes, (size_t)out->nclasses, sizeof *out->classes, by_bytes);
    }
    /* what the walk took as in use but the free lists hold: counted free */
    out->free_chunks += out->cached_chunks;
    if (wk.w.budget < 0)
        snprintf(out->warning, sizeof out->warning,
                 "the walk stopped after %lld reads: a heap this corrupt (or this large) is not read whole", READ_BUDGET);
    free(wk.w.buf);
    free(wk.free_set.a);
    free(wk.in_use.a);
    free(wk.tcaches.a);
    if (rc < 0) glibc_heap_free(out);
    return rc;
}

void glibc_heap_free(struct glibc_heap *h)
{
    free(h->classes);
    memset(h, 0, sizeof *h);
}
