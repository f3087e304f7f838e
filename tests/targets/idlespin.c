/* Test target for watch and the history: idles IDLE seconds (argv[1], default 2), then spins on one CPU for SPIN
 * seconds (argv[2], default 6), then idles for good, or with "repeat" (argv[3]) idles and spins again, over and
 * over. Prints "ready" at start and "spin" (with the monotonic time) each time it starts spinning. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    double idle = argc > 1 ? atof(argv[1]) : 2, spin = argc > 2 ? atof(argv[2]) : 6;
    printf("ready\n");
    fflush(stdout);
    int repeat = argc > 3 && strcmp(argv[3], "repeat") == 0;
    volatile unsigned long long n = 0;
    do {
        usleep((useconds_t)(idle * 1e6));
        double start = now();
        printf("spin %.3f\n", start);
        fflush(stdout);
        while (now() - start < spin) n++;
    } while (repeat);
    for (;;) pause();
}
