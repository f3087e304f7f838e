/* Test target for a process that execs in the middle of a CPU profile. `execer [main|thread]` prints "ready" and
 * spins in spin_before (in the main thread, or in a second thread "spinner" while the main thread sleeps) until
 * SIGUSR1; then the spinning thread execve()s this program again as `execer after` (a thread that execs becomes
 * the process's only thread, with the process's PID as its TID). The new image prints "after" and spins in
 * spin_after until killed. noipa keeps GCC from merging, cloning or inlining the named functions. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define HOT __attribute__((noipa))

static volatile unsigned long sink;
static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
    (void)sig;
    go = 1;
}

HOT static void spin_before(void)
{
    unsigned long s = sink;
    for (unsigned long i = 0; i < 200000; i++) s = s * 6364136223846793005ULL + i;
    sink += s;
}

HOT static void spin_after(void)
{
    unsigned long s = sink;
    for (unsigned long i = 0; i < 200000; i++) s = s * 6364136223846793005ULL + i;
    sink += s;
}

static char self[] = "/proc/self/exe";

HOT static void *spin_then_exec(void *arg)
{
    (void)arg;
    while (!go) spin_before();
    char *argv[] = {"execer", "after", NULL};
    execv(self, argv);
    perror("execv");
    _exit(1);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "after") == 0) {
        printf("after\n");
        fflush(stdout);
        for (;;) spin_after();
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    printf("ready\n");
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "thread") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, spin_then_exec, NULL) != 0) return 1;
        pthread_setname_np(t, "spinner");
        for (;;) pause();
    }
    spin_then_exec(NULL);
    return 0;
}
