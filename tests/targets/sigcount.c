/* Test target: counts the real-time signals (SIGRTMIN, queued one by one) it receives, in any of its 4 threads;
 * on SIGUSR2 prints "count N". A capture that swallowed a signal arriving during its stop would show here. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static int count; /* handlers run in several threads at once: atomic increments */
static volatile sig_atomic_t report;

static void on_rt(int sig) { (void)sig; __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED); }
static void on_usr2(int sig) { (void)sig; report = 1; }

static void *idle(void *arg)
{
    (void)arg;
    for (;;) pause();
    return NULL;
}

int main(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_rt;
    sigaction(SIGRTMIN, &sa, NULL);
    sa.sa_handler = on_usr2;
    sigaction(SIGUSR2, &sa, NULL);
    for (int i = 0; i < 3; i++) {
        pthread_t t;
        pthread_create(&t, NULL, idle, NULL);
    }
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        pause();
        if (report) {
            report = 0;
            printf("count %d\n", __atomic_load_n(&count, __ATOMIC_RELAXED));
            fflush(stdout);
        }
    }
}
