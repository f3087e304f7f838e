/* Test target: N threads (argv[1], default 8) parked in distinct named, nested functions, so stacks are
 * recognisable: main -> main_wait; worker -> worker_outer -> worker_middle -> worker_inlined_wait (inlined) ->
 * worker_park. Each thread is named "worker-K" (prctl). Prints "ready N" once every thread is parked.
 * With a second argument FILE, one more thread ("gapmeter") wakes every millisecond and keeps in FILE the largest
 * gap between wake-ups beyond that millisecond, in microseconds: how long the process was stopped, measured from
 * inside. SIGUSR2 resets it.
 * noipa keeps GCC from merging, cloning or inlining the named functions (only worker_inlined_wait is inlined). */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

static pthread_barrier_t all_started;
static volatile int parked;

__attribute__((noipa)) static void worker_park(void)
{
    for (;;) pause();
}

static inline __attribute__((always_inline)) void worker_inlined_wait(void)
{
    parked++;
    worker_park();
}

__attribute__((noipa)) static void worker_middle(int k)
{
    char name[16];
    snprintf(name, sizeof name, "worker-%d", k);
    prctl(PR_SET_NAME, name);
    pthread_barrier_wait(&all_started);
    worker_inlined_wait();
    __asm__ volatile("" ::: "memory"); /* keep the call from becoming a tail call */
}

__attribute__((noipa)) static void worker_outer(int k)
{
    worker_middle(k);
    __asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
    worker_outer((int)(long)arg);
    return NULL;
}

static volatile sig_atomic_t gap_reset;
static void on_usr2(int sig) { (void)sig; gap_reset = 1; }

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void *gap_meter(void *arg)
{
    int fd = open((const char *)arg, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    prctl(PR_SET_NAME, "gapmeter");
    double last = now_us(), worst = 0;
    for (;;) {
        struct timespec ms = {0, 1000000};
        clock_nanosleep(CLOCK_MONOTONIC, 0, &ms, NULL);
        double t = now_us(), gap = t - last - 1000.0;
        last = t;
        if (gap_reset) {
            gap_reset = 0;
            worst = 0;
            gap = 0;
        }
        if (gap > worst || worst == 0) {
            if (gap > worst) worst = gap;
            char buf[32];
            int n = snprintf(buf, sizeof buf, "%.0f\n", worst);
            pwrite(fd, buf, (size_t)n, 0);
            ftruncate(fd, n);
        }
    }
    return NULL;
}

__attribute__((noipa)) static void main_wait(void)
{
    for (;;) sleep(3600);
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
    if (argc > 2) {
        signal(SIGUSR2, on_usr2);
        pthread_t t;
        if (pthread_create(&t, NULL, gap_meter, argv[2]) != 0) return 1;
    }
    pthread_barrier_wait(&all_started);
    printf("ready %d\n", n);
    fflush(stdout);
    main_wait();
    return 0;
}
