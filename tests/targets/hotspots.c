/* Test target for the CPU profiler: one thread ("burn") spends its time in two hot functions at a known ratio of
 * work, 3:1: burn_direct called directly, and burn_compare called back by glibc's qsort (unwinding must go through
 * glibc to reach burn_round). Built -O2, so without frame pointers. The main thread sleeps in main_wait.
 * Prints "ready" once the worker runs. With ROUNDS [DELAY_MS] (bench/profile): prints "ready", waits DELAY_MS
 * (default 300) for a profiler to attach, does ROUNDS rounds, prints "elapsed_us N" for them and exits. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "spin.h"

#define NOINLINE __attribute__((noinline))
#define UNIT 20000 /* iterations of one unit of work */

static volatile int spins_per_compare = UNIT / 64;

/* Three units per round. */
NOINLINE static void burn_direct(void) { SPIN(3UL * UNIT); }

/* One unit per round, spread over qsort's comparisons (64 elements sorted: about 64 * log2(64) / 6 = 64 calls on
 * average is what UNIT / 64 per call assumes; the count is measured below and the spin per call adjusted). */
static volatile long compares;
NOINLINE static int burn_compare(const void *a, const void *b)
{
    compares++;
    SPIN((unsigned long)spins_per_compare);
    return *(const int *)a - *(const int *)b;
}

NOINLINE static void burn_sorted(void)
{
    int v[64];
    for (int i = 0; i < 64; i++) v[i] = (int)((i * 7919) % 64);
    qsort(v, 64, sizeof v[0], burn_compare);
}

NOINLINE static void burn_round(void)
{
    burn_direct();
    burn_sorted();
    sink++; /* not a tail call: burn_round stays on the stack */
}

static long rounds_to_do; /* 0: for ever */
static int delay_ms = 300;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void *burn(void *arg)
{
    (void)arg;
    /* Calibrate: the comparisons of one sort together do one unit. */
    compares = 0;
    burn_sorted();
    if (compares > 0) spins_per_compare = (int)(UNIT / compares);
    if (rounds_to_do > 0) {
        usleep((useconds_t)delay_ms * 1000);
        double t0 = now_us();
        for (long i = 0; i < rounds_to_do; i++) burn_round();
        printf("elapsed_us %.0f\n", now_us() - t0);
        fflush(stdout);
        exit(0);
    }
    for (;;) burn_round();
    return NULL;
}

NOINLINE static void main_wait(void)
{
    for (;;) sleep(1000);
}

int main(int argc, char **argv)
{
    if (argc > 1) rounds_to_do = atol(argv[1]);
    if (argc > 2) delay_ms = atoi(argv[2]);
    pthread_t t;
    if (pthread_create(&t, NULL, burn, NULL) != 0) return 1;
    pthread_setname_np(t, "burn");
    usleep(50000);
    printf("ready\n");
    fflush(stdout);
    main_wait();
    return 0;
}
