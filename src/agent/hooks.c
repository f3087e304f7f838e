/* hooks: the allocator functions the agent interposes. Each calls the real one (resolved once with
 * dlsym(RTLD_NEXT)), counts the call in per-thread counters and subtracts the size from the thread's sampling
 * interval; only when the interval runs out does it go to the slow path (heapprof_sample). free() looks a pointer
 * up in the table of sampled blocks only while there is one, without a lock.
 *
 * Bootstrap: dlsym itself may allocate (its error buffer); allocations made while the real allocator is not yet
 * known come from a static buffer that is never given back (free ignores its pointers, realloc copies out). */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

#define BOOT_HEADER 16

static int is_boot(const void *p)
{
    const unsigned char *b = agent_g.boot;
    return (const unsigned char *)p >= b && (const unsigned char *)p < b + sizeof agent_g.boot;
}

/* From the static buffer: 16-byte header holding the size, aligned to align (a power of two >= 16). */
static void *boot_alloc(size_t n, size_t align)
{
    if (align < 16) align = 16;
    for (;;) {
        size_t used = __atomic_load_n(&agent_g.boot_used, __ATOMIC_RELAXED);
        size_t start = (used + BOOT_HEADER + align - 1) & ~(align - 1);
        if (n > sizeof agent_g.boot || start + n > sizeof agent_g.boot) return NULL;
        if (__atomic_compare_exchange_n(&agent_g.boot_used, &used, start + n, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
            memcpy(agent_g.boot + start - sizeof(size_t), &n, sizeof n);
            return agent_g.boot + start; /* the buffer is zero and never reused: calloc needs nothing more */
        }
    }
}

static size_t boot_size(const void *p)
{
    size_t n;
    memcpy(&n, (const unsigned char *)p - sizeof(size_t), sizeof n);
    return n;
}

#define RESOLVE(field, name, fallback)                                                                              \
    do {                                                                                                            \
        void *s = dlsym(RTLD_NEXT, name);                                                                           \
        r.field = s ? (__typeof__(r.field))s : (fallback);                                                          \
    } while (0)

static void *fallback_aligned_alloc(size_t a, size_t n) { return agent_g.real.memalign(a, n); }
static int fallback_posix_memalign(void **out, size_t a, size_t n)
{
    void *p = agent_g.real.memalign(a, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void agent_resolve(void)
{
    if (__atomic_load_n(&agent_g.real.free, __ATOMIC_ACQUIRE)) return;
    struct agent_thread *t = &agent_tls;
    if (t->resolving) return; /* dlsym allocating: the caller falls back on the static buffer */
    t->resolving = 1;
    struct agent_real r;
    RESOLVE(malloc, "malloc", __libc_malloc);
    RESOLVE(calloc, "calloc", __libc_calloc);
    RESOLVE(realloc, "realloc", __libc_realloc);
    RESOLVE(memalign, "memalign", __libc_memalign);
    RESOLVE(valloc, "valloc", __libc_valloc);
    RESOLVE(pvalloc, "pvalloc", __libc_pvalloc);
    RESOLVE(aligned_alloc, "aligned_alloc", fallback_aligned_alloc);
    RESOLVE(posix_memalign, "posix_memalign", fallback_posix_memalign);
    RESOLVE(usable_size, "malloc_usable_size", NULL);
    RESOLVE(free, "free", __libc_free);
    agent_g.real.malloc = r.malloc;
    agent_g.real.calloc = r.calloc;
    agent_g.real.realloc = r.realloc;
    agent_g.real.memalign = r.memalign;
    agent_g.real.valloc = r.valloc;
    agent_g.real.pvalloc = r.pvalloc;
    agent_g.real.aligned_alloc = r.aligned_alloc;
    agent_g.real.posix_memalign = r.posix_memalign;
    agent_g.real.usable_size = r.usable_size;
    __atomic_store_n(&agent_g.real.free, r.free, __ATOMIC_RELEASE); /* last: the others are set when it is */
    t->resolving = 0;
}

/* Whether the real allocator can be called; else the caller uses the static buffer. */
static inline int ready(void)
{
    if (AGENT_LIKELY(__atomic_load_n(&agent_g.real.free, __ATOMIC_ACQUIRE) != NULL)) return 1;
    agent_resolve();
    return __atomic_load_n(&agent_g.real.free, __ATOMIC_ACQUIRE) != NULL;
}

/* Counts an allocation of size bytes that returned p, and samples it when the thread's interval ran out. */
static inline void allocated(void *p, size_t size)
{
    struct agent_thread *t = &agent_tls;
    int64_t s = (int64_t)size;
    if (AGENT_UNLIKELY(s < 0)) s = INT64_MAX;
    t->mallocs++;
    t->bytes += size;
    if (AGENT_UNLIKELY((t->left -= s) <= 0)) heapprof_sample(t, p, size);
}

/* Counts a free, and forgets p's sample if it has one (before the real free: once freed, the address may be
 * handed out and sampled again by another thread). */
static inline void freeing(void *p)
{
    struct agent_thread *t = &agent_tls;
    if (AGENT_UNLIKELY((++t->frees & 0xffff) == 0)) agent_flush(t);
    if (AGENT_UNLIKELY(__atomic_load_n(&agent_g.live_count, __ATOMIC_RELAXED) != 0)) heapprof_forget(p, NULL);
}

AGENT_API void *malloc(size_t n)
{
    if (AGENT_UNLIKELY(!ready())) return boot_alloc(n, 16);
    void *p = agent_g.real.malloc(n);
    allocated(p, n);
    return p;
}

AGENT_API void free(void *p)
{
    if (AGENT_UNLIKELY(!p || is_boot(p))) return;
    if (AGENT_UNLIKELY(!ready())) return; /* cannot happen: p came from the real allocator */
    freeing(p);
    agent_g.real.free(p);
}

AGENT_API void *calloc(size_t n, size_t m)
{
    size_t size;
    if (__builtin_mul_overflow(n, m, &size)) {
        errno = ENOMEM;
        return NULL;
    }
    if (AGENT_UNLIKELY(!ready())) return boot_alloc(size, 16);
    void *p = agent_g.real.calloc(n, m);
    allocated(p, size);
    return p;
}

AGENT_API void *realloc(void *p, size_t n)
{
    if (!p) return malloc(n);
    if (AGENT_UNLIKELY(is_boot(p))) { /* out of the static buffer: copy into a real block */
        size_t old = boot_size(p);
        void *q = malloc(n);
        if (q) memcpy(q, p, old < n ? old : n);
        return q;
    }
    if (AGENT_UNLIKELY(!ready())) return NULL;
    struct agent_thread *t = &agent_tls;
    uint32_t stack = 0;
    size_t sampled = 0;
    if (AGENT_UNLIKELY((++t->frees & 0xffff) == 0)) agent_flush(t);
    if (AGENT_UNLIKELY(__atomic_load_n(&agent_g.live_count, __ATOMIC_RELAXED) != 0))
        sampled = heapprof_forget(p, &stack);
    void *q = agent_g.real.realloc(p, n);
    if (!q) {
        /* n == 0: glibc freed p. Otherwise p is still there: its sample too. */
        if (n && sampled) heapprof_restore(p, sampled, stack);
        return NULL;
    }
    allocated(q, n);
    return q;
}

AGENT_API void *reallocarray(void *p, size_t n, size_t m)
{
    size_t size;
    if (__builtin_mul_overflow(n, m, &size)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, size);
}

AGENT_API void *memalign(size_t align, size_t n)
{
    if (AGENT_UNLIKELY(!ready())) return boot_alloc(n, align);
    void *p = agent_g.real.memalign(align, n);
    allocated(p, n);
    return p;
}

AGENT_API int posix_memalign(void **out, size_t align, size_t n)
{
    if (AGENT_UNLIKELY(!ready())) {
        void *p = boot_alloc(n, align);
        if (!p) return ENOMEM;
        *out = p;
        return 0;
    }
    int rc = agent_g.real.posix_memalign(out, align, n);
    if (rc == 0) allocated(*out, n);
    return rc;
}

AGENT_API void *aligned_alloc(size_t align, size_t n)
{
    if (AGENT_UNLIKELY(!ready())) return boot_alloc(n, align);
    void *p = agent_g.real.aligned_alloc(align, n);
    allocated(p, n);
    return p;
}

AGENT_API void *valloc(size_t n)
{
    if (AGENT_UNLIKELY(!ready())) return boot_alloc(n, 4096);
    void *p = agent_g.real.valloc(n);
    allocated(p, n);
    return p;
}

AGENT_API void *pvalloc(size_t n)
{
    if (AGENT_UNLIKELY(!ready())) return boot_alloc((n + 4095) & ~(size_t)4095, 4096);
    void *p = agent_g.real.pvalloc(n);
    allocated(p, n);
    return p;
}

AGENT_API size_t malloc_usable_size(void *p)
{
    if (!p) return 0;
    if (AGENT_UNLIKELY(is_boot(p))) return boot_size(p);
    if (AGENT_UNLIKELY(!ready()) || !agent_g.real.usable_size) return 0;
    return agent_g.real.usable_size(p);
}
