/* Test target: grows its resident memory by MIB_PER_SEC (argv[1], default 8) every second, up to 512 MiB. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    size_t step = (argc > 1 ? strtoul(argv[1], NULL, 10) : 8) << 20;
    for (size_t total = 0; total < (512u << 20); total += step) {
        char *p = malloc(step);
        if (!p) break;
        memset(p, 0x5A, step); /* leaked on purpose */
        usleep(250000);
        p = malloc(0);
        free(p);
        usleep(750000);
    }
    for (;;) pause();
}
