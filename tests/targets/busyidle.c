/* Test target for the History tab: spins on one CPU for BUSY seconds (argv[1], default 3), then sleeps IDLE
 * seconds (argv[2], default 3), over and over, so its CPU% history alternates high and low. Prints "ready". */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double busy = argc > 1 ? atof(argv[1]) : 3, idle = argc > 2 ? atof(argv[2]) : 3;
    printf("ready\n");
    fflush(stdout);
    volatile unsigned long n = 0;
    for (;;) {
        double until = now() + busy;
        while (now() < until)
            for (int i = 0; i < 100000; i++) n++;
        usleep((useconds_t)(idle * 1e6));
    }
}
