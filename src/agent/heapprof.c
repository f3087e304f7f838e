/* heapprof: the byte-sampled heap profile. Each thread counts down an exponentially distributed number of bytes
 * (mean agent_g.interval); the allocation that crosses zero is sampled, so an allocation of s bytes is sampled
 * with probability 1 - exp(-s / interval), and stands for 1 / that probability allocations of its size (the
 * estimator of tcmalloc and Go's runtime). A sample keeps its block's pointer, size and stack (the stack interned
 * in a table of distinct stacks); free() finds sampled pointers in an open-addressed table without a lock.
 *
 * Tables (all from mmap, reserved at init with MAP_NORESERVE, so only what is used is resident):
 * - live: sampled blocks alive. Keys (pointers) in their own mapping, read by free() with atomic loads; the
 *   payload (size, stack) beside it, touched only under the lock. Linear probing with backward-shift deletion
 *   (no tombstones). A deletion moves keys, so it bumps the table's sequence number (odd while it moves them):
 *   a reader that found nothing while the number changed asks again under the lock. Growth builds a table twice
 *   the size and publishes it; the old key array stays mapped for readers still in it (all of them together are
 *   smaller than the newest), its payload is unmapped. Sized to 4x the live samples, so free()'s probe stays in a
 *   few cache lines.
 * - stacks: distinct stacks, append-only: an entry never changes after its count is published, so a reply can
 *   read frames without the lock.
 * Together they never exceed agent_g.max_bytes: a sample that would not fit is dropped and counted. */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

#define EMPTY 0
#define MIN_SLOTS 1024u
#define OFF_INTERVAL (1 << 20) /* with sampling off, the slow path only flushes counters, this often */

struct live_val {
    uint64_t size;
    uint32_t stack;
    uint32_t pad;
};

struct agent_live_table {
    uint64_t *keys;               /* in this mapping, after the header */
    struct live_val *vals;        /* own mapping, under the lock */
    uint32_t nslots, shift;       /* power of two; hash >> shift is the home slot */
    uint32_t live;                /* under the lock */
    uint32_t seq;                 /* odd while a deletion moves keys */
    size_t keys_bytes, vals_bytes;
    struct agent_live_table *older; /* retired tables, kept mapped for readers */
};

struct stack_entry {
    uint64_t hash;
    uint32_t off;     /* first frame in pcs */
    uint16_t depth, pad;
    double alloc_objects, alloc_bytes;
};

struct agent_stacks {
    uint32_t *slots;  /* entry index + 1, 0 empty */
    uint32_t nslots;
    struct stack_entry *e;
    uint32_t n;       /* published (release) after an entry is complete */
    uint32_t max;
    uintptr_t *pcs;
    size_t npcs, max_pcs;
    size_t bytes;     /* reserved */
};

/* ---- math without libm: the agent links libc only ---- */

/* ln x for x in (0, 1]: x = m 2^e, ln m = 2 atanh((m-1)/(m+1)). Accurate to ~1e-8. */
static double agent_ln(double x)
{
    union { double d; uint64_t u; } v = {x};
    int e = (int)((v.u >> 52) & 0x7ff) - 1023;
    v.u = (v.u & ((1ull << 52) - 1)) | (1023ull << 52); /* m in [1, 2) */
    double z = (v.d - 1) / (v.d + 1), z2 = z * z;
    double s = z * (1 + z2 * (1.0 / 3 + z2 * (1.0 / 5 + z2 * (1.0 / 7 + z2 * (1.0 / 9 + z2 * (1.0 / 11))))));
    return e * 0.69314718055994530942 + 2 * s;
}

/* 1 - exp(-x) for x >= 0. */
static double one_minus_exp_neg(double x)
{
    if (x < 1e-3) return x * (1 - x / 2 * (1 - x / 3 * (1 - x / 4)));
    if (x > 40) return 1;
    /* exp(-x) = 2^-k exp(-r), r = x - k ln2 in [0, ln2) */
    int k = (int)(x / 0.69314718055994530942);
    double r = x - k * 0.69314718055994530942, term = 1, sum = 1;
    for (int i = 1; i < 16; i++) {
        term *= -r / i;
        sum += term;
    }
    union { double d; uint64_t u; } p = {.u = (uint64_t)(1023 - k) << 52};
    return 1 - sum * p.d;
}

/* Objects one sample of size bytes stands for. */
static double weight(uint64_t size)
{
    double p = one_minus_exp_neg((double)size / (double)agent_g.interval);
    return p > 0 ? 1 / p : 1;
}

static uint64_t next_random(struct agent_thread *t)
{
    uint64_t x = t->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    t->rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Bytes until the next sample: exponential with mean interval. */
static int64_t draw(struct agent_thread *t)
{
    double u = (double)((next_random(t) >> 11) + 1) * (1.0 / 9007199254740992.0); /* (0, 1] */
    double b = -agent_ln(u) * (double)agent_g.interval;
    return b < 1 ? 1 : (int64_t)b;
}

static void seed(struct agent_thread *t)
{
    uint64_t s = (uint64_t)syscall(SYS_gettid) * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)t ^
                 (uint64_t)agent_now_ns(CLOCK_MONOTONIC);
    t->rng = s ? s : 0x853c49e6748fea9bull;
}

/* ---- the live table ---- */

static inline uint32_t home(const struct agent_live_table *tb, uint64_t key)
{
    return (uint32_t)(((key >> 4) * 0x9E3779B97F4A7C15ull) >> tb->shift);
}

static struct agent_live_table *live_new(uint32_t nslots)
{
    size_t kb = (sizeof(struct agent_live_table) + (size_t)nslots * sizeof(uint64_t) + 4095) & ~(size_t)4095;
    size_t vb = ((size_t)nslots * sizeof(struct live_val) + 4095) & ~(size_t)4095;
    struct agent_live_table *tb = agent_map(kb);
    struct live_val *vals = tb ? agent_map(vb) : NULL;
    if (!vals) {
        agent_unmap(tb, kb);
        return NULL;
    }
    tb->keys = (uint64_t *)(tb + 1);
    tb->vals = vals;
    tb->nslots = nslots;
    tb->shift = 64 - (uint32_t)__builtin_ctz(nslots);
    tb->keys_bytes = kb;
    tb->vals_bytes = vb;
    return tb;
}

/* The most slots the cap allows: half of it for the live table (keys, payload and retired keys). */
static uint32_t live_max_slots(void)
{
    size_t per = sizeof(uint64_t) * 2 + sizeof(struct live_val); /* keys, retired keys, payload */
    size_t n = agent_g.max_bytes / 2 / per;
    uint32_t s = MIN_SLOTS;
    while ((size_t)s * 2 <= n && s < (1u << 30)) s *= 2;
    return s;
}

/* Under the lock. counted: a new sample (live_count grows); 0 when rehashing into a new table, where live_count
 * must not dip (free() skips the table while it is 0). */
static void live_put(struct agent_live_table *tb, uint64_t key, uint64_t size, uint32_t stack, int counted)
{
    uint32_t mask = tb->nslots - 1, i = home(tb, key);
    for (;; i = (i + 1) & mask) {
        uint64_t k = tb->keys[i];
        if (k == EMPTY || k == key) {
            tb->vals[i] = (struct live_val){size, stack, 0};
            if (k == EMPTY) {
                tb->live++;
                __atomic_store_n(&tb->keys[i], key, __ATOMIC_RELEASE);
                if (counted) __atomic_add_fetch(&agent_g.live_count, 1, __ATOMIC_RELAXED);
            }
            /* k == key: a stale sample of a block freed while its thread was inside the agent (a free in a
             * signal handler): replaced */
            return;
        }
    }
}

/* Under the lock: a table with room for one more, growing when the live table is a quarter full. */
static struct agent_live_table *live_room(void)
{
    struct agent_live_table *tb = agent_g.live;
    if ((uint64_t)(tb->live + 1) * 4 <= tb->nslots) return tb;
    if (tb->nslots * 2 > live_max_slots() || tb->nslots >= (1u << 30)) {
        return (uint64_t)(tb->live + 1) * 2 <= tb->nslots ? tb : NULL; /* at the cap: fuller, then none */
    }
    struct agent_live_table *nt = live_new(tb->nslots * 2);
    if (!nt) return (uint64_t)(tb->live + 1) * 2 <= tb->nslots ? tb : NULL;
    for (uint32_t i = 0; i < tb->nslots; i++)
        if (tb->keys[i] != EMPTY) live_put(nt, tb->keys[i], tb->vals[i].size, tb->vals[i].stack, 0);
    nt->older = tb;
    __atomic_store_n(&agent_g.live, nt, __ATOMIC_RELEASE);
    agent_unmap(tb->vals, tb->vals_bytes); /* payload is read under the lock only */
    tb->vals = NULL;
    return nt;
}

/* Under the lock: removes key from the current table. Returns its size (0: not there). */
static uint64_t live_remove(uint64_t key, uint32_t *stack)
{
    struct agent_live_table *tb = agent_g.live;
    uint32_t mask = tb->nslots - 1, i = home(tb, key);
    for (;; i = (i + 1) & mask) {
        uint64_t k = tb->keys[i];
        if (k == EMPTY) return 0;
        if (k == key) break;
    }
    uint64_t size = tb->vals[i].size;
    if (stack) *stack = tb->vals[i].stack;
    __atomic_store_n(&tb->seq, tb->seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    /* Backward shift: each later key of the run moves into the hole when its home slot is not between the hole
     * and it (cyclically). Keys are copied before their old slot is overwritten, so a key is never absent. */
    uint32_t hole = i;
    for (uint32_t j = (i + 1) & mask;; j = (j + 1) & mask) {
        uint64_t k = tb->keys[j];
        if (k == EMPTY) break;
        uint32_t h = home(tb, k);
        int stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
        if (stays) continue;
        tb->vals[hole] = tb->vals[j];
        __atomic_store_n(&tb->keys[hole], k, __ATOMIC_RELAXED);
        hole = j;
    }
    __atomic_store_n(&tb->keys[hole], EMPTY, __ATOMIC_RELAXED);
    __atomic_store_n(&tb->seq, tb->seq + 1, __ATOMIC_RELEASE);
    tb->live--;
    __atomic_sub_fetch(&agent_g.live_count, 1, __ATOMIC_RELAXED);
    return size;
}

/* Without the lock: may key be in the table? 0 only when it surely is not. */
static int live_maybe(uint64_t key)
{
    struct agent_live_table *tb = __atomic_load_n(&agent_g.live, __ATOMIC_ACQUIRE);
    if (!tb) return 0;
    uint32_t s1 = __atomic_load_n(&tb->seq, __ATOMIC_ACQUIRE);
    uint32_t mask = tb->nslots - 1, i = home(tb, key);
    for (uint32_t n = 0; n < tb->nslots; n++, i = (i + 1) & mask) {
        uint64_t k = __atomic_load_n(&tb->keys[i], __ATOMIC_RELAXED);
        if (k == key) return 1;
        if (k == EMPTY) break;
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    uint32_t s2 = __atomic_load_n(&tb->seq, __ATOMIC_RELAXED);
    return (s1 & 1) || s1 != s2; /* keys moved under us: ask under the lock */
}

/* ---- the stack table ---- */

static uint64_t hash_pcs(const uintptr_t *pcs, int n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)n;
    for (int i = 0; i < n; i++) h = (h ^ pcs[i]) * 0x100000001b3ull, h ^= h >> 29;
    return h ? h : 1;
}

static int stacks_init(size_t budget)
{
    /* budget over: slots (2 per entry, 4 B), entries (32 B), frames (8 B, 24 per entry on average) */
    size_t per_entry = 2 * sizeof(uint32_t) + sizeof(struct stack_entry) + 24 * sizeof(uintptr_t);
    uint32_t max = (uint32_t)(budget / per_entry);
    if (max < 256) max = 256;
    uint32_t nslots = 512;
    while (nslots < 2 * max) nslots *= 2;
    size_t sb = (size_t)nslots * sizeof(uint32_t), eb = (size_t)max * sizeof(struct stack_entry);
    size_t max_pcs = (size_t)max * 24, pb = max_pcs * sizeof(uintptr_t);
    size_t total = sizeof(struct agent_stacks) + sb + eb + pb + 4096;
    unsigned char *m = agent_map(total);
    if (!m) return -ENOMEM;
    struct agent_stacks *st = (struct agent_stacks *)m;
    st->slots = (uint32_t *)(m + sizeof *st);
    st->e = (struct stack_entry *)((unsigned char *)st->slots + sb);
    st->pcs = (uintptr_t *)(((uintptr_t)((unsigned char *)st->e + eb) + 7) & ~(uintptr_t)7);
    st->nslots = nslots;
    st->max = max;
    st->max_pcs = max_pcs;
    st->bytes = total;
    st->n = 1; /* entry 0: the stack could not be kept (table full, or no frames) */
    agent_g.stacks = st;
    return 0;
}

/* Under the lock: the id of this stack, added if new; 0 when the table is full. */
static uint32_t stack_intern(const uintptr_t *pcs, int depth)
{
    struct agent_stacks *st = agent_g.stacks;
    if (depth <= 0) return 0;
    uint64_t h = hash_pcs(pcs, depth);
    uint32_t mask = st->nslots - 1, i = (uint32_t)(h * 0x9E3779B97F4A7C15ull >> 32) & mask;
    for (;; i = (i + 1) & mask) {
        uint32_t v = st->slots[i];
        if (!v) break;
        struct stack_entry *e = &st->e[v - 1];
        if (e->hash == h && e->depth == depth && !memcmp(st->pcs + e->off, pcs, (size_t)depth * sizeof *pcs))
            return v - 1;
    }
    if (st->n >= st->max || st->npcs + (size_t)depth > st->max_pcs) {
        agent_g.stacks_dropped++;
        return 0;
    }
    uint32_t id = st->n;
    struct stack_entry *e = &st->e[id];
    e->hash = h;
    e->off = (uint32_t)st->npcs;
    e->depth = (uint16_t)depth;
    memcpy(st->pcs + st->npcs, pcs, (size_t)depth * sizeof *pcs);
    st->npcs += (size_t)depth;
    st->slots[i] = id + 1;
    __atomic_store_n(&st->n, id + 1, __ATOMIC_RELEASE);
    return id;
}

int heapprof_stack(uint32_t id, const uintptr_t **pcs)
{
    struct agent_stacks *st = agent_g.stacks;
    if (!st || id >= __atomic_load_n(&st->n, __ATOMIC_ACQUIRE)) return 0;
    *pcs = st->pcs + st->e[id].off;
    return st->e[id].depth;
}

/* ---- the API ---- */

int heapprof_init(void)
{
    if (agent_g.live) return 0;
    if (stacks_init(agent_g.max_bytes / 2) < 0) return -ENOMEM;
    unwind_cache_init(); /* without it, unwinding is only slower */
    struct agent_live_table *tb = live_new(MIN_SLOTS);
    if (!tb) return -ENOMEM;
    __atomic_store_n(&agent_g.live, tb, __ATOMIC_RELEASE);
    return 0;
}

__attribute__((noinline)) int heapprof_decide(struct agent_thread *t, size_t size)
{
    if (t->guard) return 0; /* an allocation made by the agent itself: never sampled */
    int take = 0;
    t->guard++;
    if (AGENT_UNLIKELY(!__atomic_load_n(&agent_g.initialized, __ATOMIC_ACQUIRE))) agent_init();
    agent_flush(t); /* counts the bytes up to here (this allocation's too): left and drawn start again together */
    unsigned gen = __atomic_load_n(&agent_g.gen, __ATOMIC_ACQUIRE);
    if (!agent_g.heap_on || !agent_g.live) {
        t->left = t->drawn = OFF_INTERVAL;
        t->gen = gen;
    } else if (AGENT_UNLIKELY(t->gen != gen || !t->rng)) {
        /* A new thread, a start or a fork: a fresh interval, this allocation counted against it. */
        seed(t);
        t->gen = gen;
        t->left = t->drawn = draw(t) - (int64_t)(size > INT64_MAX ? INT64_MAX : size);
        if (t->left <= 0) {
            t->left = t->drawn = draw(t);
            take = 1;
        }
    } else {
        t->left = t->drawn = draw(t);
        take = 1;
    }
    t->guard--;
    return take;
}

__attribute__((noinline)) void heapprof_record(struct agent_thread *t, void *p, size_t size)
{
    if (t->guard) return;
    t->guard++;
    uintptr_t pcs[AGENT_MAX_FRAMES];
    double w = weight(size);
    pthread_mutex_lock(&agent_g.lock); /* the unwinder's cache is the lock's too */
    int depth = unwind_here(pcs, AGENT_MAX_FRAMES, 1);
    agent_g.samples_total++;
    uint32_t id = stack_intern(pcs, depth);
    struct stack_entry *e = &agent_g.stacks->e[id];
    e->alloc_objects += w;
    e->alloc_bytes += w * (double)size;
    struct agent_live_table *tb = live_room();
    if (tb) live_put(tb, (uint64_t)(uintptr_t)p, size, id, 1);
    else agent_g.samples_dropped++;
    pthread_mutex_unlock(&agent_g.lock);
    t->guard--;
}

size_t heapprof_forget(void *p, uint32_t *stack)
{
    uint64_t key = (uint64_t)(uintptr_t)p;
    if (!live_maybe(key)) return 0;
    struct agent_thread *t = &agent_tls;
    if (t->guard) return 0; /* a free inside the agent's own sampling (a signal handler's): left stale */
    t->guard++;
    pthread_mutex_lock(&agent_g.lock);
    size_t size = (size_t)live_remove(key, stack);
    pthread_mutex_unlock(&agent_g.lock);
    t->guard--;
    return size;
}

void heapprof_restore(void *p, size_t size, uint32_t stack)
{
    struct agent_thread *t = &agent_tls;
    if (t->guard) return;
    t->guard++;
    pthread_mutex_lock(&agent_g.lock);
    struct agent_live_table *tb = live_room();
    if (tb) live_put(tb, (uint64_t)(uintptr_t)p, size, stack, 1);
    pthread_mutex_unlock(&agent_g.lock);
    t->guard--;
}

void heapprof_after_fork_child(void)
{
    /* The lock was released by the fork handler; every thread of the child (one) draws a new interval. */
    __atomic_add_fetch(&agent_g.gen, 1, __ATOMIC_RELEASE);
}

static size_t table_bytes_locked(void)
{
    size_t b = 0;
    for (struct agent_live_table *tb = agent_g.live; tb; tb = tb->older)
        b += tb->keys_bytes + (tb->vals ? tb->vals_bytes : 0);
    struct agent_stacks *st = agent_g.stacks;
    if (st) b += (size_t)st->n * sizeof(struct stack_entry) + st->npcs * sizeof(uintptr_t) +
                 (size_t)st->nslots * sizeof(uint32_t);
    return b;
}

void heapprof_totals(uint64_t *live, size_t *table_bytes)
{
    *live = __atomic_load_n(&agent_g.live_count, __ATOMIC_RELAXED);
    *table_bytes = 0;
    if (!agent_g.live) return;
    pthread_mutex_lock(&agent_g.lock);
    *table_bytes = table_bytes_locked();
    pthread_mutex_unlock(&agent_g.lock);
}

int heapprof_snapshot(struct agent_heap_snapshot *s)
{
    memset(s, 0, sizeof *s);
    if (!agent_g.live || !agent_g.stacks) return 0;
    /* Sized before taking the lock (the mapping is the one call that could block); stacks added meanwhile
     * are counted into entry 0's row, which the reply leaves out when it has no frames. */
    uint32_t n = __atomic_load_n(&agent_g.stacks->n, __ATOMIC_ACQUIRE) + 64;
    if (n > agent_g.stacks->max) n = agent_g.stacks->max;
    s->map_bytes = ((size_t)n * sizeof *s->sites + 4095) & ~(size_t)4095;
    if (!(s->sites = agent_map(s->map_bytes))) return -ENOMEM;
    pthread_mutex_lock(&agent_g.lock);
    struct agent_stacks *st = agent_g.stacks;
    uint32_t have = st->n < n ? st->n : n;
    for (uint32_t i = 0; i < have; i++) {
        s->sites[i].stack = i;
        s->sites[i].alloc_objects = st->e[i].alloc_objects;
        s->sites[i].alloc_bytes = st->e[i].alloc_bytes;
    }
    struct agent_live_table *tb = agent_g.live;
    for (uint32_t i = 0; i < tb->nslots; i++) {
        if (tb->keys[i] == EMPTY) continue;
        uint32_t id = tb->vals[i].stack < have ? tb->vals[i].stack : 0;
        double w = weight(tb->vals[i].size);
        s->sites[id].inuse_objects += w;
        s->sites[id].inuse_bytes += w * (double)tb->vals[i].size;
    }
    s->nsites = have;
    s->live_samples = tb->live;
    s->samples_total = agent_g.samples_total;
    s->samples_dropped = agent_g.samples_dropped;
    s->stacks_dropped = agent_g.stacks_dropped;
    s->table_bytes = table_bytes_locked();
    pthread_mutex_unlock(&agent_g.lock);
    return 0;
}

void heapprof_snapshot_free(struct agent_heap_snapshot *s)
{
    agent_unmap(s->sites, s->map_bytes);
    memset(s, 0, sizeof *s);
}
