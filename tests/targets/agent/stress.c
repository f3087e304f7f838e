/* Allocation stress under the agent: THREADS threads (default 4) for SECONDS (default 4) call every function the
 * agent interposes in random order on blocks they fill with a pattern and check before freeing, hand blocks to
 * one another (freed by another thread), and start and join short-lived threads; meanwhile the main thread
 * forks every 20 ms: a child allocates and frees (checking) and leaves by _exit, exit, or an exec of this program
 * in "child" mode (which allocates and exits) or of /bin/true. Prints "ready" first and, at the end,
 * "done forks F execs E threads T bad B"; exits 0 only when every check and every child passed. */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 256
#define HANDOFF 64

static atomic_int stop, bad, threads_made;
static _Atomic(void *) handoff[HANDOFF];
static const char *self;

struct block {
    unsigned char *p;
    size_t n;
    unsigned char mark;
};

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void fill(struct block *b, unsigned char mark)
{
    b->mark = mark;
    if (b->p) memset(b->p, mark, b->n);
}

static void check(const struct block *b)
{
    for (size_t i = 0; b->p && i < b->n; i += 61)
        if (b->p[i] != b->mark) {
            atomic_fetch_add(&bad, 1);
            return;
        }
}

/* One random operation on slot b. */
static void op(struct block *b, uint64_t *s)
{
    size_t n = 1 + next(s) % (next(s) % 16 == 0 ? 200000 : 2000);
    unsigned char mark = (unsigned char)(1 + next(s) % 250);
    check(b);
    switch (next(s) % 10) {
    case 0: free(b->p); b->p = malloc(n); break;
    case 1: free(b->p); b->p = calloc(1, n); if (b->p) for (size_t i = 0; i < n; i += 97) if (b->p[i]) atomic_fetch_add(&bad, 1); break;
    case 2: { /* realloc keeps the old contents */
        size_t keep = b->n < n ? b->n : n;
        unsigned char *q = realloc(b->p, n);
        if (q) for (size_t i = 0; i < keep; i += 61) if (q[i] != b->mark) { atomic_fetch_add(&bad, 1); break; }
        if (q || !b->p) b->p = q;
        else n = b->n;
        break;
    }
    case 3: free(b->p); b->p = memalign(64 << (next(s) % 7), n); break;
    case 4: { free(b->p); void *q = NULL; b->p = posix_memalign(&q, 16 << (next(s) % 9), n) == 0 ? q : NULL; break; }
    case 5: free(b->p); b->p = aligned_alloc(256, (n + 255) & ~(size_t)255); n = (n + 255) & ~(size_t)255; break;
    case 6: free(b->p); b->p = valloc(n); break;
    case 7: b->p = reallocarray(b->p, n, 1); break; /* contents not checked: the mark is rewritten below */
    case 8: { /* hand the block to another thread, take one from it */
        void *mine = b->p;
        if (mine) memset(mine, 0xAB, 1);
        void *theirs = atomic_exchange(&handoff[next(s) % HANDOFF], mine);
        free(theirs);
        b->p = malloc(n);
        break;
    }
    default: free(b->p); b->p = NULL; n = 0; break;
    }
    if (b->p && (uintptr_t)b->p % 16) atomic_fetch_add(&bad, 1);
    b->n = b->p ? n : 0;
    fill(b, mark);
}

static void *short_lived(void *arg)
{
    uint64_t s = (uintptr_t)arg | 1;
    struct block b[8] = {{0}};
    for (int i = 0; i < 2000; i++) op(&b[next(&s) % 8], &s);
    for (int i = 0; i < 8; i++) free(b[i].p);
    return NULL;
}

static void *worker(void *arg)
{
    uint64_t s = 0x9E3779B97F4A7C15ull * ((uintptr_t)arg + 1);
    static _Thread_local struct block b[SLOTS];
    for (unsigned long i = 0; !atomic_load(&stop); i++) {
        op(&b[next(&s) % SLOTS], &s);
        if (i % 20000 == 0) {
            pthread_t t;
            if (pthread_create(&t, NULL, short_lived, (void *)(uintptr_t)i) == 0) {
                pthread_join(t, NULL);
                atomic_fetch_add(&threads_made, 1);
            }
        }
    }
    for (int i = 0; i < SLOTS; i++) free(b[i].p);
    return NULL;
}

/* A child: some allocations, checked, then one of the ways out. */
static void child(unsigned way)
{
    uint64_t s = (uint64_t)getpid() * 0x2545F4914F6CDD1Dull;
    struct block b[16] = {{0}};
    for (int i = 0; i < 3000; i++) op(&b[next(&s) % 16], &s);
    int ok = atomic_load(&bad) == 0;
    if (way % 4 == 0) execl(self, self, "child", (char *)NULL);
    if (way % 4 == 1) execl("/bin/true", "true", (char *)NULL);
    if (way % 4 == 2) exit(ok ? 0 : 3);
    _exit(ok ? 0 : 3);
}

int main(int argc, char **argv)
{
    self = "/proc/self/exe";
    if (argc > 1 && !strcmp(argv[1], "child")) { /* an exec'd child: allocate under a fresh agent, and go */
        uint64_t s = (uint64_t)getpid();
        struct block b[32] = {{0}};
        for (int i = 0; i < 20000; i++) op(&b[next(&s) % 32], &s);
        for (int i = 0; i < 32; i++) free(b[i].p);
        return atomic_load(&bad) ? 3 : 0;
    }
    int nthreads = argc > 1 ? atoi(argv[1]) : 4;
    double seconds = argc > 2 ? atof(argv[2]) : 4;
    pthread_t t[64];
    if (nthreads < 1 || nthreads > 64) nthreads = 4;
    for (int i = 0; i < nthreads; i++) pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int forks = 0, execs = 0, child_bad = 0;
    do {
        pid_t c = fork();
        if (c == 0) child((unsigned)forks);
        if (c > 0) {
            int st;
            while (waitpid(c, &st, 0) < 0 && errno == EINTR)
                ;
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) child_bad++;
            execs += forks % 4 < 2;
            forks++;
        }
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
    atomic_store(&stop, 1);
    for (int i = 0; i < nthreads; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < HANDOFF; i++) free(atomic_load(&handoff[i]));
    printf("done forks %d execs %d threads %d bad %d children_bad %d\n", forks, execs, atomic_load(&threads_made),
           atomic_load(&bad), child_bad);
    return atomic_load(&bad) || child_bad ? 1 : 0;
}
