/* Test target: wakes RATE times a second (argv[1], default 200) on an absolute clock, so that it is switched onto
 * a CPU exactly that often and otherwise sleeps. Prints "ready" once the loop starts. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    long rate = argc > 1 ? strtol(argv[1], NULL, 10) : 200;
    if (rate <= 0 || rate > 10000) return 2;
    long step = 1000000000L / rate;
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        at.tv_nsec += step;
        if (at.tv_nsec >= 1000000000L) {
            at.tv_nsec -= 1000000000L;
            at.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
    }
}
