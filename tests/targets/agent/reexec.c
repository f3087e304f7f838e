/* Burns CPU for 150 ms and then execs itself with N-1 (execv, straight from the running thread), until N is 0:
 * then prints "done". Under the agent's CPU profile this is the exec that must not inherit a pending SIGPROF. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10;
    if (n == 10) {
        printf("ready %d\n", (int)getpid());
        fflush(stdout);
        usleep(500000); /* time for a profiler to start */
    }
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do {
        for (int i = 0; i < 100000; i++) sink = sink * 31 + (unsigned long)i;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 150);
    if (n <= 0) {
        printf("done\n");
        return 0;
    }
    char next[16];
    snprintf(next, sizeof next, "%d", n - 1);
    execv("/proc/self/exe", (char *[]){argv[0], next, NULL});
    perror("execv");
    return 1;
}
