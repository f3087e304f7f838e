/* bench/agent's workload: N (default 10 M) random 16..1039-byte malloc/free pairs over a pool of 1024 blocks, and
 * one block of the same sizes leaked from leak_one() every 100 pairs (100,000 blocks, ~52.7 MB for 10 M). Prints
 * "elapsed_us T cpu_us C leaked_bytes B leaked_blocks K" for the loop (wall and CPU time); with --wait it then prints "ready" and waits for
 * SIGTERM (so that a heap profile can be taken of the end state). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct kept { struct kept *next; };
static struct kept *kept;
static unsigned long long leaked_bytes, leaked_blocks;

__attribute__((noinline)) static void leak_one(size_t n)
{
    struct kept *k = malloc(n); /* the leak */
    k->next = kept;
    kept = k;
    leaked_bytes += n;
    leaked_blocks++;
}

static inline uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000000;
    int wait_at_end = argc > 2 && !strcmp(argv[2], "--wait");
    static void *pool[1024];
    uint64_t s = 0x2545F4914F6CDD1Dull;
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    for (long i = 0; i < n; i++) {
        unsigned k = (unsigned)(next(&s) % 1024);
        free(pool[k]);
        char *p = malloc(16 + next(&s) % 1024);
        p[0] = (char)i;
        pool[k] = p;
        if (i % 100 == 0) leak_one(16 + next(&s) % 1024);
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("elapsed_us %lld cpu_us %lld leaked_bytes %llu leaked_blocks %llu\n",
           (long long)((t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000),
           (long long)((c1.tv_sec - c0.tv_sec) * 1000000 + (c1.tv_nsec - c0.tv_nsec) / 1000), leaked_bytes,
           leaked_blocks);
    fflush(stdout);
    if (wait_at_end) {
        printf("ready\n");
        fflush(stdout);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigprocmask(SIG_BLOCK, &set, NULL);
        int sig;
        sigwait(&set, &sig);
    }
    for (unsigned k = 0; k < 1024; k++) free(pool[k]);
    return 0;
}
