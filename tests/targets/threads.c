/* Test target: N threads (argv[1], default 8) parked in distinct named, nested functions, so stacks are
 * recognisable: main -> main_wait; worker k -> worker_outer -> worker_middle -> worker_park. Each thread is named
 * "worker-K" (prctl). Prints "ready N" once every thread is parked. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

static pthread_barrier_t all_started;

__attribute__((noinline)) static void worker_park(void)
{
    for (;;) pause();
}

__attribute__((noinline)) static void worker_middle(int k)
{
    char name[16];
    snprintf(name, sizeof name, "worker-%d", k);
    prctl(PR_SET_NAME, name);
    pthread_barrier_wait(&all_started);
    worker_park();
    __asm__ volatile("" ::: "memory"); /* keep the call from becoming a tail call */
}

__attribute__((noinline)) static void worker_outer(int k)
{
    worker_middle(k);
    __asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
    worker_outer((int)(long)arg);
    return NULL;
}

__attribute__((noinline)) static void main_wait(void)
{
    for (;;) pause();
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 8;
    if (n < 0 || n > 4000) return 2;
    pthread_barrier_init(&all_started, NULL, (unsigned)n + 1);
    for (int k = 0; k < n; k++) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, 64 * 1024);
        if (pthread_create(&t, &a, worker, (void *)(long)k) != 0) return 1;
        pthread_attr_destroy(&a);
    }
    pthread_barrier_wait(&all_started);
    printf("ready %d\n", n);
    fflush(stdout);
    main_wait();
    return 0;
}
