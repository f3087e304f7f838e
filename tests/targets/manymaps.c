/* Test target for cores with more program headers than e_phnum can count. Usage: manymaps [COUNT]
 * Maps COUNT (default 70000) one-page private anonymous regions next to each other with alternating protections
 * (PROT_READ, PROT_READ|PROT_WRITE) so that the kernel cannot merge them into fewer mappings, writes a byte into
 * every one before (so that a core holds each of them), and a known string into the highest of them, kept
 * writable. Prints "ready maps=N string=0xADDR" once done.
 * vm.max_map_count must allow COUNT plus the usual few dozen mappings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const char known[] = "DIAGTOP-MANYMAPS-STRING-7007";

int main(int argc, char **argv)
{
    long count = argc > 1 ? strtol(argv[1], NULL, 10) : 70000;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), len = (size_t)count * page;
    /* One reservation, then each page remapped in place: the regions are adjacent, in one known range. */
    char *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    for (long i = 0; i < count; i++) {
        char *p = base + (size_t)i * page;
        /* Alternate protections; writing first so every region has a private page (and smaps Anonymous:). */
        p[0] = (char)(i & 0x7f);
        if (i % 2 == 0 && mprotect(p, page, PROT_READ) < 0) {
            perror("mprotect");
            return 1;
        }
    }
    /* The highest region is writable already for an even count; for an odd one it merges with its neighbour. */
    char *top = base + len - page;
    if (mprotect(top, page, PROT_READ | PROT_WRITE) < 0) {
        perror("mprotect");
        return 1;
    }
    strcpy(top, known);
    printf("ready maps=%ld string=%p\n", count, (void *)top);
    fflush(stdout);
    for (;;) pause();
}
