/* Test target for JIT code without unwind info: an anonymous PROT_READ|PROT_WRITE|PROT_EXEC mapping (no file, so
 * no module, no symbols, no CFI) holding a small function of hand-written x86-64 machine code that counts its
 * argument down to zero in %rbp and returns. Like code built without frame pointers, it uses %rbp as a plain
 * register, so neither CFI nor the frame-pointer fallback can find its caller while it runs. jit_loop, a C
 * function, calls it over and over, so nearly all the CPU time is spent in the anonymous mapping.
 * Prints "ready jit=0xADDR loop=0xLO-0xHI": the mapping's address and the addresses [LO, HI) of the loop's two
 * instructions. Elsewhere than x86-64 it prints "unsupported" and exits 2. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define HOT __attribute__((noipa))

#if defined(__x86_64__)
static const unsigned char code[] = {
    0x55,             /* 0: push %rbp */
    0x48, 0x89, 0xfd, /* 1: mov  %rdi,%rbp */
    0x48, 0xff, 0xcd, /* 4: dec  %rbp           <- the loop: */
    0x75, 0xfb,       /* 7: jnz  4 */
    0x5d,             /* 9: pop  %rbp */
    0xc3,             /* 10: ret */
};
enum { LOOP_START = 4, LOOP_END = 9 };

typedef void jit_fn(unsigned long count);

HOT static void jit_loop(jit_fn *fn)
{
    for (;;) fn(50UL * 1000 * 1000);
}

int main(void)
{
    unsigned char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    memcpy(m, code, sizeof code);
    __builtin___clear_cache((char *)m, (char *)m + sizeof code);
    jit_fn *fn = (jit_fn *)(void *)m;
    fn(1000); /* it runs and returns */
    printf("ready jit=%p loop=%p-%p\n", (void *)m, (void *)(m + LOOP_START), (void *)(m + LOOP_END));
    fflush(stdout);
    jit_loop(fn);
}
#else
int main(void)
{
    printf("unsupported\n");
    return 2;
}
#endif
