/* hooks: the allocator functions the agent interposes. The fast path of an allocation is a per-thread counter and
 * a subtraction from the thread's sampling interval, then a tail call to the real allocator (resolved once with
 * dlsym(RTLD_NEXT)). Only when the interval runs out does it go to the slow path, which decides whether this
 * allocation is a sample (heapprof_decide).
 *
 * A sampled block is allocated page-aligned (memalign(4096): a few bytes of padding once every 512 KiB), so that
 * free() can tell "not sampled" from the pointer alone: only page-aligned pointers (what malloc itself returns 1
 * time in 256, plus the program's own page-aligned memaligns) go on to the table of sampled blocks.
 *
 * Bootstrap: dlsym itself may allocate (its error buffer); allocations made while the real allocator is not yet
 * known come from a static buffer, page-aligned too, never given back (free ignores them, realloc copies out). */
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

#define PAGE 4096
#define ALIGNED(p) (((uintptr_t)(p) & (PAGE - 1)) == 0)

static inline int is_boot(const void *p)
{
    return (uintptr_t)p - (uintptr_t)agent_g.boot < sizeof agent_g.boot;
}

/* From the static buffer, page-aligned, the size in the 8 bytes before. */
static void *boot_alloc(size_t n, size_t align)
{
    if (align < PAGE) align = PAGE;
    for (;;) {
        size_t used = __atomic_load_n(&agent_g.boot_used, __ATOMIC_RELAXED);
        size_t start = (used + sizeof(size_t) + align - 1) & ~(align - 1);
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

/* Counts an allocation and takes its size off the interval: 1 when that ran out (the slow path decides). left > 0
 * only once the real allocator is known (the slow path sets it). A size of 2^63 or more only makes left grow: such
 * an allocation fails anyway. */
static inline int ran_out(struct agent_thread *t, size_t size)
{
    t->mallocs++;
    return AGENT_UNLIKELY((t->left -= (int64_t)size) <= 0);
}

/* A sampled block: page-aligned (align, if larger, is a power of two, so it holds too), and recorded. */
static void *sampled_alloc(struct agent_thread *t, size_t size, size_t align, int zero)
{
    void *p = agent_g.real.memalign(align > PAGE ? align : PAGE, size);
    if (p && zero) memset(p, 0, size);
    if (p) heapprof_record(t, p, size);
    return p;
}

/* Whether this allocation is a sample; also when the real allocator is not known yet (then: 0, boot != 0). */
static int slow_decide(struct agent_thread *t, size_t size, int *boot)
{
    *boot = !ready();
    return *boot ? 0 : heapprof_decide(t, size);
}

__attribute__((noinline)) static void *malloc_slow(size_t n)
{
    struct agent_thread *t = &agent_tls;
    int boot;
    if (slow_decide(t, n, &boot)) return sampled_alloc(t, n, 0, 0);
    return boot ? boot_alloc(n, 16) : agent_g.real.malloc(n);
}

AGENT_API void *malloc(size_t n)
{
    struct agent_thread *t = &agent_tls;
    if (ran_out(t, n)) return malloc_slow(n);
    return agent_g.real.malloc(n);
}

/* A page-aligned pointer: NULL, the static buffer's, a sample's (forgotten before the real free: once freed, the
 * address may be handed out and sampled again by another thread), or just aligned. */
__attribute__((noinline)) static void free_aligned(void *p)
{
    if (!p) {
        agent_tls.frees--; /* free(NULL) frees nothing */
        return;
    }
    if (is_boot(p)) return;
    if (__atomic_load_n(&agent_g.live_count, __ATOMIC_RELAXED) != 0) heapprof_forget(p, NULL);
    agent_g.real.free(p);
}

/* Every 65536 frees: threads that only free have their counts added too. */
__attribute__((noinline)) static void free_flush(void *p)
{
    agent_flush(&agent_tls);
    if (ALIGNED(p)) free_aligned(p);
    else agent_g.real.free(p);
}

AGENT_API void free(void *p)
{
    struct agent_thread *t = &agent_tls;
    if (AGENT_UNLIKELY((++t->frees & 0xffff) == 0)) return free_flush(p);
    if (AGENT_UNLIKELY(ALIGNED(p))) return free_aligned(p);
    agent_g.real.free(p);
}

__attribute__((noinline)) static void *calloc_slow(size_t n, size_t m, size_t size)
{
    struct agent_thread *t = &agent_tls;
    int boot;
    if (slow_decide(t, size, &boot)) return sampled_alloc(t, size, 0, 1);
    return boot ? boot_alloc(size, 16) : agent_g.real.calloc(n, m);
}

AGENT_API void *calloc(size_t n, size_t m)
{
    size_t size;
    if (__builtin_mul_overflow(n, m, &size)) {
        errno = ENOMEM;
        return NULL;
    }
    struct agent_thread *t = &agent_tls;
    if (ran_out(t, size)) return calloc_slow(n, m, size);
    return agent_g.real.calloc(n, m);
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
    if (AGENT_UNLIKELY(!ready())) return NULL; /* cannot happen: p came from the real allocator */
    struct agent_thread *t = &agent_tls;
    uint32_t stack = 0;
    size_t sampled = 0;
    if (AGENT_UNLIKELY((++t->frees & 0xffff) == 0)) agent_flush(t);
    if (AGENT_UNLIKELY(ALIGNED(p)) && __atomic_load_n(&agent_g.live_count, __ATOMIC_RELAXED) != 0)
        sampled = heapprof_forget(p, &stack);
    if (n && ran_out(t, n) && heapprof_decide(t, n)) {
        /* The new block is a sample: a page-aligned copy (realloc cannot be asked for alignment). */
        size_t old = agent_g.real.usable_size ? agent_g.real.usable_size(p) : 0;
        void *q = old ? sampled_alloc(t, n, 0, 0) : NULL;
        if (q) {
            memcpy(q, p, old < n ? old : n);
            agent_g.real.free(p);
            return q;
        }
    }
    void *q = agent_g.real.realloc(p, n);
    /* n == 0: glibc freed p. Otherwise, failed: p is still there, and its sample too. */
    if (!q && n && sampled) heapprof_restore(p, sampled, stack);
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

/* The aligned family: rarer, one path each. */
static void *aligned(size_t align, size_t n, void *(*real)(size_t, size_t))
{
    struct agent_thread *t = &agent_tls;
    int boot = 0;
    if (ran_out(t, n) && slow_decide(t, n, &boot)) return sampled_alloc(t, n, align, 0);
    if (boot) return boot_alloc(n, align);
    return real(align, n);
}

AGENT_API void *memalign(size_t align, size_t n)
{
    if (AGENT_UNLIKELY(!ready())) return boot_alloc(n, align);
    return aligned(align, n, agent_g.real.memalign);
}

AGENT_API void *aligned_alloc(size_t align, size_t n)
{
    if (AGENT_UNLIKELY(!ready())) return boot_alloc(n, align);
    return aligned(align, n, agent_g.real.aligned_alloc);
}

AGENT_API int posix_memalign(void **out, size_t align, size_t n)
{
    if (AGENT_UNLIKELY(!ready())) {
        void *p = boot_alloc(n, align);
        if (!p) return ENOMEM;
        *out = p;
        return 0;
    }
    if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
    struct agent_thread *t = &agent_tls;
    if (ran_out(t, n) && heapprof_decide(t, n)) {
        void *p = sampled_alloc(t, n, align, 0);
        if (!p) return ENOMEM;
        *out = p;
        return 0;
    }
    return agent_g.real.posix_memalign(out, align, n);
}

AGENT_API void *valloc(size_t n)
{
    if (AGENT_UNLIKELY(!ready())) return boot_alloc(n, PAGE);
    struct agent_thread *t = &agent_tls;
    if (ran_out(t, n) && heapprof_decide(t, n)) return sampled_alloc(t, n, PAGE, 0);
    return agent_g.real.valloc(n);
}

AGENT_API void *pvalloc(size_t n)
{
    size_t rounded = (n + PAGE - 1) & ~(size_t)(PAGE - 1);
    if (AGENT_UNLIKELY(!ready())) return boot_alloc(rounded, PAGE);
    struct agent_thread *t = &agent_tls;
    if (rounded >= n && ran_out(t, rounded) && heapprof_decide(t, rounded)) return sampled_alloc(t, rounded, PAGE, 0);
    return agent_g.real.pvalloc(n);
}

AGENT_API size_t malloc_usable_size(void *p)
{
    if (!p) return 0;
    if (AGENT_UNLIKELY(is_boot(p))) return boot_size(p);
    if (AGENT_UNLIKELY(!ready()) || !agent_g.real.usable_size) return 0;
    return agent_g.real.usable_size(p);
}
