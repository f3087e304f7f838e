/* A program that leaks from one known line at a known rate, next to one that allocates as much but keeps a
 * constant amount live, for the native agent's tests and the leak view.
 *   leaky [--rate BYTES_PER_SECOND] [--burst BYTES]
 * leak_block() (the leak site) keeps blocks of 64..8191 bytes forever: --rate of them per second, and --burst
 * more at each SIGUSR1 (default 16 MiB); after each burst it prints "leaked N" (the exact total kept so far,
 * requested bytes). steady_block() (the steady site) replaces one of 4096 blocks of 16..4111 bytes at a time,
 * ~200,000 times a second, from another thread. Prints "ready" when both run; SIGTERM ends it. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t bursts, stop;
static void on_usr1(int s) { (void)s; bursts++; }
static void on_term(int s) { (void)s; stop = 1; }

static uint64_t rng = 88172645463325252ull;
static uint64_t next(uint64_t *s) { *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17; return *s; }

struct kept { struct kept *next; };
static struct kept *kept_list;
static unsigned long long leaked;

__attribute__((noinline)) static void *leak_block(size_t n)
{
    struct kept *k = malloc(n); /* the leak site */
    if (!k) abort();
    memset(k, 1, n < 64 ? n : 64);
    k->next = kept_list;
    kept_list = k;
    leaked += n;
    return k;
}

__attribute__((noinline)) static void leak_bytes(unsigned long long bytes)
{
    unsigned long long done = 0;
    while (done < bytes) {
        size_t n = 64 + next(&rng) % 8128;
        leak_block(n);
        done += n;
    }
}

__attribute__((noinline)) static void *steady_block(size_t n)
{
    void *p = malloc(n); /* the steady site */
    if (p) memset(p, 2, n < 32 ? n : 32);
    return p;
}

static void *steady(void *arg)
{
    (void)arg;
    static void *ring[4096];
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (unsigned long i = 0; !stop; i++) {
        unsigned slot = (unsigned)(next(&s) % 4096);
        free(ring[slot]);
        ring[slot] = steady_block(16 + next(&s) % 4096);
        if (i % 2000 == 0) {
            struct timespec ts = {0, 10000000};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double rate = 0;
    unsigned long long burst = 16ull << 20;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--rate")) rate = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--burst")) burst = strtoull(argv[i + 1], NULL, 10);
    }
    signal(SIGUSR1, on_usr1);
    signal(SIGTERM, on_term);
    pthread_t t;
    pthread_create(&t, NULL, steady, NULL);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    double t0 = now();
    unsigned long long by_rate = 0;
    int seen = 0;
    while (!stop) {
        if (rate > 0) { /* catch up with the clock, so that the rate holds whatever the scheduling */
            unsigned long long due = (unsigned long long)((now() - t0) * rate);
            if (due > by_rate) {
                unsigned long long before = leaked;
                leak_bytes(due - by_rate);
                by_rate += leaked - before;
            }
        }
        while (seen < bursts) {
            leak_bytes(burst);
            seen++;
            printf("leaked %llu\n", leaked);
            fflush(stdout);
        }
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    pthread_join(t, NULL);
    return 0;
}
