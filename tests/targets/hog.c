/* Test target: allocates and touches MIB mebibytes (argv[1]), reports "ready" on stdout, then sleeps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
    size_t len = mib << 20;
    unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    memset(p, 0xA5, len); /* every page resident and non-zero */
    printf("ready %zu\n", len);
    fflush(stdout);
    for (;;) pause();
}
