/* Test target for unwinding, built several ways by the Makefile (-fomit-frame-pointer; only .debug_frame; a
 * stripped PIE with its debug info in a separate file): threads parked in known nested functions, one of them a
 * frameless leaf spinning on a CPU, one blocked in read(), one parked inside a qsort() comparator (unwinding
 * through glibc), and the main thread in main_wait. Prints "ready" once every thread is in place. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink, rounds = 1000000; /* volatile: each call is made, none hoisted */
static int pipe_fds[2];
static pthread_barrier_t started;

/* A leaf without a frame of its own: under a frame-pointer walk its caller is lost. */
NOINLINE static unsigned long spin_leaf(unsigned long n)
{
    unsigned long s = 0;
    for (unsigned long i = 0; i < n; i++) s += i ^ (s >> 3);
    return s;
}

NOINLINE static void spin_middle(void)
{
    for (;;) sink += spin_leaf(rounds); /* the loop keeps the call from becoming a tail call */
}

NOINLINE static void *spinner(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&started);
    spin_middle();
    return NULL;
}

NOINLINE static void read_blocked(void)
{
    char c;
    while (read(pipe_fds[0], &c, 1) != 0) {}
    sink++;
}

NOINLINE static void *reader(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&started);
    read_blocked();
    return NULL;
}

/* Parks inside qsort(): the stack runs through glibc's sorting code back to sorter(). */
NOINLINE static int compare_parked(const void *a, const void *b)
{
    for (;;) pause();
    return *(const int *)a - *(const int *)b;
}

NOINLINE static void *sorter(void *arg)
{
    (void)arg;
    int v[64];
    for (int i = 0; i < 64; i++) v[i] = 64 - i;
    pthread_barrier_wait(&started);
    qsort(v, 64, sizeof v[0], compare_parked);
    sink += (unsigned long)v[0];
    return NULL;
}

NOINLINE static void main_wait(void)
{
    for (;;) sleep(1000);
}

int main(void)
{
    if (pipe(pipe_fds) < 0) return 1;
    pthread_barrier_init(&started, NULL, 4);
    pthread_t t[3];
    void *(*fn[3])(void *) = {spinner, reader, sorter};
    const char *names[3] = {"spinner", "reader", "sorter"};
    for (int i = 0; i < 3; i++) {
        if (pthread_create(&t[i], NULL, fn[i], NULL) != 0) return 1;
        pthread_setname_np(t[i], names[i]);
    }
    pthread_barrier_wait(&started);
    usleep(100000); /* each thread reaches its blocking call */
    printf("ready\n");
    fflush(stdout);
    main_wait();
    return 0;
}
