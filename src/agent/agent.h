/* agent: the inside of libdiagtop-agent.so, shared by its modules. The library lives in someone else's process,
 * so it must never break it: every allocation hook passes straight through when the agent is off, re-entered or
 * bootstrapping; the agent's own memory comes from mmap, never from the program's heap (its few libc calls that
 * allocate, in the listener thread, go to the real allocator unsampled); no lock is held across a call into the
 * allocator or the dynamic loader; a forked child inherits no lock held by another thread and no listener.
 *
 * Global state is one struct (agent_g, defined in agent.c), and per-thread state one TLS struct (agent_tls). Both
 * are documented field by field below. Everything here is hidden (-fvisibility=hidden): the library exports only
 * the allocator functions it interposes and the public API of include/diagtop-agent.h. */
#ifndef DIAGTOP_AGENT_INTERNAL_H
#define DIAGTOP_AGENT_INTERNAL_H
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define AGENT_API __attribute__((visibility("default")))
#define AGENT_LIKELY(x) __builtin_expect(!!(x), 1)
#define AGENT_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define AGENT_PROTOCOL 1
#define AGENT_MAX_FRAMES 64             /* per stack, heap sites and CPU samples */
#define AGENT_DEFAULT_INTERVAL 524288   /* mean bytes between heap samples (tcmalloc's, Go's) */
#define AGENT_DEFAULT_MAX_MB 32         /* hard cap of the heap profile's tables */

/* ---- per thread (TLS, initial-exec: no allocation on first access, safe in a signal handler) ---- */

struct agent_thread {
    int64_t left;        /* bytes until the next sample point; <= 0 sends the next allocation to the slow path */
    int64_t drawn;       /* what left was when last set: drawn - left bytes were allocated since (not counted yet) */
    uint64_t rng;        /* xorshift state for the intervals; 0 until seeded */
    unsigned gen;        /* agent_g.gen when left was drawn: a start or a fork draws again */
    int guard;           /* > 0: inside the agent: hooks pass straight through, nothing is sampled */
    int key_set;         /* the exit destructor (flushing the counters) is registered */
    int resolving;       /* inside agent_resolve: dlsym's own allocations use the static buffer */
    uint64_t mallocs, frees, bytes; /* counted here, added to the global counters now and then (bytes from left) */
};

extern __thread struct agent_thread agent_tls __attribute__((tls_model("initial-exec")));

/* ---- the real allocator (the next definition after ours: glibc's, or a preloaded one) ---- */

struct agent_real {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void *(*memalign)(size_t, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    size_t (*usable_size)(void *);
};

/* ---- the one global state ---- */

struct agent_cpu_slot;
struct unw_cache_entry;
struct agent_live_table;
struct agent_stacks;


struct agent {
    /* Set once by agent_init (the constructor, or the first hook called before it), then read-only. */
    int initialized;
    int disabled;             /* DIAGTOP_AGENT=0|off|no: hooks pass through, nothing starts */
    int heap_on;              /* heap sampling (DIAGTOP_AGENT_HEAP=0 turns it off) */
    uint64_t interval;        /* mean bytes between heap samples (DIAGTOP_AGENT_SAMPLE_INTERVAL) */
    size_t max_bytes;         /* hard cap of the heap profile's tables (DIAGTOP_AGENT_MAX_MB) */
    uintptr_t self_lo, self_hi; /* this library's mapping: its frames are left out of stacks */
    struct agent_real real;   /* resolved by agent_resolve (free last: the others are set when it is) */
    unsigned char boot[1 << 20] __attribute__((aligned(4096))); /* allocations before real is known, never freed */
    size_t boot_used;         /* atomic */
    pthread_key_t flush_key;  /* its destructor flushes an exiting thread's counters */
    int flush_key_made, atfork_done;
    int64_t start_ns;         /* CLOCK_MONOTONIC at init */

    /* Heap profile (heapprof.c). The tables are written under lock; free() reads the live table without it. */
    pthread_mutex_t lock;
    struct agent_live_table *live;  /* current table of sampled pointers (atomic pointer) */
    uint64_t live_count;            /* sampled blocks alive (atomic: free() skips the table when 0) */
    struct agent_stacks *stacks;    /* distinct allocation stacks, append-only */
    uint64_t samples_total, samples_dropped, stacks_dropped; /* under lock */
    unsigned gen;             /* bumped by a start and in a forked child: threads draw their interval again */

    /* Counters of every allocation and free (agent_flush adds threads' counts). */
    uint64_t mallocs, frees, bytes;
    /* memstats' previous reading, for the rates since then (listener only) */
    int64_t prev_ns;
    uint64_t prev_mallocs, prev_frees, prev_bytes;

    /* Endpoint and listener (endpoint.c, listener.c). */
    pid_t owner;              /* the process whose socket this is (a forked child is not it) */
    int listen_fd;            /* -1 when not listening */
    dev_t listen_dev;
    ino_t listen_ino;         /* the listening socket's inode: a descriptor the program reused is not ours */
    char path[108];           /* the socket, absolute */
    pthread_t listener;
    int listening;
    int said_why;             /* a refusal to start was written to stderr already */
    pid_t listener_tid;

    /* CPU profile (cpuprof.c): the signal handler writes slots, the listener drains them. */
    int cpu_active;           /* atomic: handlers record only while set */
    int cpu_handler_installed;
    struct agent_cpu_slot *cpu_slots;
    uint32_t cpu_nslots;
    uint64_t cpu_head, cpu_tail; /* atomic: claimed by handlers / consumed by the listener */
    uint64_t cpu_lost;        /* atomic */

    /* Scratch copies of stacks whose bounds are not known (unwind.c): claimed with an atomic flag each. */
    unsigned char *scratch;
    struct unw_cache_entry *unwind_cache; /* rows of frames seen in heap samples, under lock */
    int scratch_busy[8];
};

extern struct agent agent_g;

/* ---- agent.c ---- */
/* Reads the environment, resolves the allocator, registers fork handlers. Idempotent, safe to call from a hook
 * before the constructor ran. */
void agent_init(void);
int64_t agent_now_ns(int clock);
/* Adds this thread's counters to the global ones. */
void agent_flush(struct agent_thread *t);
/* One line on stderr, with write(2) (no stdio, no allocation). */
void agent_say(const char *a, const char *b, const char *c);

/* ---- hooks.c ---- */
/* Resolves the real allocator with dlsym(RTLD_NEXT); allocations made meanwhile come from a static buffer. */
void agent_resolve(void);

/* ---- heapprof.c ---- */
/* Sets up the tables (mmap reservations, nothing touched yet). Returns 0 or -ENOMEM. */
int heapprof_init(void);
/* The slow path of an allocation of size bytes: the thread's interval ran out (or was never drawn: a new thread, a
 * start, a fork). Draws the next interval; returns 1 when this allocation is a sample, which the caller allocates
 * page-aligned and passes to heapprof_record. */
int heapprof_decide(struct agent_thread *t, size_t size);
/* Records a sample: the stack of the allocation of p (size bytes), and p in the table of live samples. */
void heapprof_record(struct agent_thread *t, void *p, size_t size);
/* p is about to be freed (or realloc'd): forgets its sample if it has one. Returns the sampled size, or 0. */
size_t heapprof_forget(void *p, uint32_t *stack);
/* Puts back a sample forgotten for a realloc that failed. */
void heapprof_restore(void *p, size_t size, uint32_t stack);
/* A fork's child: the lock and the threads' intervals start again. */
void heapprof_after_fork_child(void);

struct agent_site {
    uint32_t stack;
    double inuse_objects, inuse_bytes, alloc_objects, alloc_bytes;
};
struct agent_heap_snapshot {
    struct agent_site *sites; /* mmap'd */
    size_t nsites, map_bytes;
    uint64_t live_samples, samples_total, samples_dropped, stacks_dropped;
    size_t table_bytes;       /* what the tables occupy now */
};
/* Estimates per allocation stack, taken under the lock (O(live samples + stacks)). Returns 0 or -ENOMEM. */
int heapprof_snapshot(struct agent_heap_snapshot *s);
void heapprof_snapshot_free(struct agent_heap_snapshot *s);
/* The frames of stack id (immutable once published). Returns their number. */
int heapprof_stack(uint32_t id, const uintptr_t **pcs);
/* Sampled blocks alive and their estimated bytes, cheap (memstats). */
void heapprof_totals(uint64_t *live, size_t *table_bytes);

/* ---- unwind.c ---- */
/* Registers in DWARF numbering (x86_64: 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15,
 * 16 the return address / rip). */
#define UNW_NREGS 17
struct unw_regs {
    uintptr_t r[UNW_NREGS];
    uint32_t valid; /* bit per register */
};
/* The return addresses of the current thread's stack, frames inside this library left out. use_cache: the caller
 * holds agent_g.lock, which guards the cache of rows. Returns how many were written (at most max). */
int unwind_here(uintptr_t *pcs, int max, int use_cache);
/* Maps the cache of rows (agent_g.unwind_cache). Returns 0 or -1. */
int unwind_cache_init(void);
/* The stack of an interrupted context (a signal handler's ucontext): pcs[0] is the exact pc, the rest return
 * addresses. Async-signal-safe. */
int unwind_context(const void *ucontext, uintptr_t *pcs, int max);
/* Maps the scratch buffers for stacks whose bounds are not known. Returns 0 or -1. */
int unwind_scratch_init(void);
/* The unwinder proper, over registers and stack memory [lo, hi) readable at base + (addr - lo). */
int unwind_regs(struct unw_regs *regs, uintptr_t lo, uintptr_t hi, const unsigned char *base, uintptr_t *pcs,
                int max, int use_cache);

/* ---- endpoint.c ---- */
/* Chooses and checks the private directory, cleans stale sockets of dead processes, binds and listens. Returns
 * the listening descriptor, or -errno with a sentence in why. */
int endpoint_open(char *path, size_t pathsz, char *why, size_t whylen);
/* Whether the peer of a connected socket may talk to us: same uid as ours, or root. */
int endpoint_peer_allowed(int fd, uid_t *uid);

/* ---- listener.c ---- */
int listener_start(char *why, size_t whylen);
void listener_stop(void);
/* Closes a served connection gracefully (FIN, a short drain), so that the peer gets the whole reply. */
void listener_finish(int c);

/* ---- reply.c: a reply being written, in mmap'd memory, capped ---- */
struct reply {
    char *buf;
    size_t len, cap, max;
    int truncated; /* something did not fit under max */
};
int reply_init(struct reply *r, size_t max);
/* printf-style append; past max the reply is marked truncated and the text dropped. Returns 0 or -1. */
int reply_add(struct reply *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends "key value\n" lines. */
void reply_u64(struct reply *r, const char *key, uint64_t v);
void reply_f64(struct reply *r, const char *key, double v);
void reply_free(struct reply *r);
/* Hex program counters " 7f1234...". */
void reply_pcs(struct reply *r, const uintptr_t *pcs, int n);

/* ---- malloc_stats.c ---- */
void malloc_stats_reply(struct reply *r);
void malloc_trim_reply(struct reply *r);

/* ---- cpuprof.c ---- */
/* A CPU profile of every thread but the listener for seconds at hz, written into r. client: the connection, watched
 * for a hang-up (which ends the profile early); lfd: the listening socket, whose callers get "busy". Returns 0 or
 * -errno with why. */
int cpuprof_run(int client, int lfd, double seconds, int hz, struct reply *r, char *why, size_t whylen);
void cpuprof_after_fork_child(void);

/* ---- small helpers (agent.c) ---- */
/* mmap'd zeroed memory (MAP_NORESERVE: only pages touched count), NULL on failure. */
void *agent_map(size_t bytes);
void agent_unmap(void *p, size_t bytes);
/* Reads a small file with open/read into buf, NUL-terminated. Returns bytes or -1. */
ssize_t agent_read_file(const char *path, char *buf, size_t bufsz);
#endif
