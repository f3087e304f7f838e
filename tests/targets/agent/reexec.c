/* reexec [N [MS]]: burns MS ms of CPU (default 150) and then execs itself with N-1 (execv, straight from the
 * running thread), until N is 0: then prints "done". Prints "ready" first and waits 0.5 s. Under the agent's CPU
 * profile this is the exec that must not inherit a pending SIGPROF. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10;
    int ms = argc > 2 ? atoi(argv[2]) : 150;
    if (argc < 4) {
        printf("ready %d\n", (int)getpid());
        fflush(stdout);
        usleep(500000); /* time for a profiler to start */
    }
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do {
        for (int i = 0; i < 100000; i++) sink = sink * 31 + (unsigned long)i;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
    if (n <= 0) {
        printf("done\n");
        return 0;
    }
    char next[16], burn[16];
    snprintf(next, sizeof next, "%d", n - 1);
    snprintf(burn, sizeof burn, "%d", ms);
    execv("/proc/self/exe", (char *[]){argv[0], next, burn, "again", NULL});
    perror("execv");
    return 1;
}
