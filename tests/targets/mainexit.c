/* Test target for a process whose main thread exits first: a thread "spinner" spins in spin_on, and the main
 * thread, after printing "ready", waits for SIGUSR1 and then calls pthread_exit. The process lives on in its other
 * thread, its leader a zombie (whose /proc/PID/maps is empty) until the process ends. noipa keeps GCC from
 * merging, cloning or inlining the named functions. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

#define HOT __attribute__((noipa))

static volatile unsigned long sink;

HOT static void spin_on(void)
{
    unsigned long s = sink;
    for (unsigned long i = 0; i < 200000; i++) s = s * 6364136223846793005ULL + i;
    sink += s;
}

HOT static void *spinner(void *arg)
{
    (void)arg;
    for (;;) spin_on();
    return NULL;
}

int main(void)
{
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL); /* the spinner inherits the mask: sigwait below takes it */
    pthread_t t;
    if (pthread_create(&t, NULL, spinner, NULL) != 0) return 1;
    pthread_setname_np(t, "spinner");
    printf("ready\n");
    fflush(stdout);
    int sig;
    sigwait(&usr1, &sig);
    pthread_exit(NULL);
}
