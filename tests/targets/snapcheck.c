/* Test target for snapshot dumps: memory that keeps changing, in a way a core must show at one instant.
 * Usage: snapcheck SWEEP_MIB
 * - The main thread and three others each count in a loop (assembly, so that the registers say exactly what
 *   memory holds): slot = r12; r12++ (r13 follows r12), 20,000 times, then nanosleep 1 ms through a raw syscall.
 *   At any instant the slot holds r12 - 1, or r12 when the thread stands at snap_count_inc (just stored).
 *   Each thread checks itself at the top of the loop (r12 == r13 == xmm8, slot == r12 - 1): a thread whose
 *   registers (general or SSE) were not restored exactly after an injection prints "BAD" and the process exits
 *   with status 3.
 * - A sweeper writes a generation number into the first 8 bytes of every page of SWEEP_MIB, in order, pausing
 *   50 us every 256 pages, then sleeps 3 ms (r12 the generation, r13 the page, rbx the base): at one instant the
 *   pages read G..G then G-1..G-1, the boundary where r13 says.
 * - Regions a fork does not copy faithfully, each filled with a known string: MADV_DONTFORK, MADV_WIPEONFORK, a
 *   small and a big (8 MiB) MAP_SHARED anonymous mapping.
 * Prints "ready slots=0xADDR sweep=0xADDR pages=N dontfork=0xADDR wipeonfork=0xADDR shared=0xADDR
 * bigshared=0xADDR". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* long snap_count(long *slot, const struct timespec *pause): returns only if the thread finds itself corrupt. */
__asm__(".text\n"
        ".globl snap_count\n"
        ".type snap_count, @function\n"
        "snap_count:\n"
        "  push %rbx; push %r12; push %r13; push %r14; push %r15\n"
        "  mov %rdi, %rbx\n"
        "  mov %rsi, %r14\n"
        "  mov $1, %r12\n"
        "  mov $1, %r13\n"
        "  movq %r12, %xmm8\n"
        "  mov $20000, %r15\n"
        "1:\n"
        "  cmp %r12, %r13\n"
        "  jne 9f\n"
        "  movq %xmm8, %rax\n"
        "  cmp %rax, %r12\n"
        "  jne 9f\n"
        "  lea -1(%r12), %rax\n"
        "  cmp (%rbx), %rax\n"
        "  jne 9f\n"
        ".globl snap_count_store\n"
        "snap_count_store:\n"
        "  mov %r12, (%rbx)\n"
        ".globl snap_count_inc\n"
        "snap_count_inc:\n"
        "  inc %r12\n"
        "  inc %r13\n"
        "  movq %r12, %xmm8\n"
        "  dec %r15\n"
        "  jnz 1b\n"
        "  mov $20000, %r15\n"
        "  mov $35, %eax\n" /* nanosleep(pause, NULL) */
        "  mov %r14, %rdi\n"
        "  xor %esi, %esi\n"
        "  syscall\n"
        "  jmp 1b\n"
        "9:\n"
        "  mov $-1, %rax\n"
        "  pop %r15; pop %r14; pop %r13; pop %r12; pop %rbx\n"
        "  ret\n"
        ".globl snap_count_end\n"
        "snap_count_end:\n"
        ".size snap_count, .-snap_count\n"
        /* void snap_sweep(char *base, long pages, const struct timespec *pause, const struct timespec *pause256) */
        ".globl snap_sweep\n"
        ".type snap_sweep, @function\n"
        "snap_sweep:\n"
        "  push %rbx; push %rbp; push %r12; push %r13; push %r14; push %r15\n"
        "  mov %rdi, %rbx\n"
        "  mov %rsi, %r14\n"
        "  mov %rdx, %rbp\n"
        "  mov %rcx, %r15\n"
        "  mov $1, %r12\n"
        ".globl snap_sweep_top\n"
        "snap_sweep_top:\n"
        "  xor %r13d, %r13d\n"
        ".globl snap_sweep_page\n"
        "snap_sweep_page:\n"
        "  mov %r13, %rax\n"
        "  shl $12, %rax\n"
        ".globl snap_sweep_store\n"
        "snap_sweep_store:\n"
        "  mov %r12, (%rbx,%rax)\n"
        ".globl snap_sweep_inc\n"
        "snap_sweep_inc:\n"
        "  inc %r13\n"
        "  test $255, %r13\n"
        "  jnz 4f\n"
        "  mov $35, %eax\n" /* nanosleep(pause256, NULL) every 256 pages: a sweep lasts a few ms */
        "  mov %r15, %rdi\n"
        "  xor %esi, %esi\n"
        "  syscall\n"
        "4:\n"
        "  cmp %r14, %r13\n"
        "  jb snap_sweep_page\n"
        ".globl snap_sweep_done\n"
        "snap_sweep_done:\n"
        "  inc %r12\n"
        ".globl snap_sweep_next\n"
        "snap_sweep_next:\n"
        "  mov $35, %eax\n"
        "  mov %rbp, %rdi\n"
        "  xor %esi, %esi\n"
        "  syscall\n"
        "  jmp snap_sweep_top\n"
        ".globl snap_sweep_end\n"
        "snap_sweep_end:\n"
        ".size snap_sweep, .-snap_sweep\n");
long snap_count(long *slot, const struct timespec *pause);
void snap_sweep(char *base, long pages, const struct timespec *pause, const struct timespec *pause256);

static long *slots; /* one cache line each */
static const struct timespec count_pause = {0, 1000000}, sweep_pause = {0, 3000000}, page_pause = {0, 50000};

static void *counter(void *arg)
{
    if (snap_count(&slots[(long)arg * 8], &count_pause) < 0) {
        printf("BAD counter %ld: registers and memory disagree\n", (long)arg);
        fflush(stdout);
        exit(3);
    }
    return NULL;
}

struct sweep {
    char *base;
    long pages;
};

static void *sweeper(void *arg)
{
    struct sweep *s = arg;
    snap_sweep(s->base, s->pages, &sweep_pause, &page_pause);
    return NULL;
}

static char *filled(size_t len, int flags, int advice, const char *text)
{
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) exit(1);
    for (size_t i = 0; i < len; i += 4096) snprintf(p + i, 4096, "%s", text);
    if (advice >= 0 && madvise(p, len, advice) < 0) exit(1);
    return p;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 32;
    slots = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    static struct sweep s;
    s.pages = (long)(mib << 20) / 4096;
    s.base = mmap(NULL, mib << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (slots == MAP_FAILED || s.base == MAP_FAILED) return 1;
    memset(s.base, 0, mib << 20);
    char *dontfork = filled(4096, MAP_PRIVATE, MADV_DONTFORK, "DIAGTOP-DONTFORK-REGION");
    char *wipe = filled(4096, MAP_PRIVATE, 18 /* MADV_WIPEONFORK */, "DIAGTOP-WIPEONFORK-REGION");
    char *shared = filled(65536, MAP_SHARED, -1, "DIAGTOP-SHARED-SMALL");
    char *big = filled(8 << 20, MAP_SHARED, -1, "DIAGTOP-SHARED-BIG");
    pthread_t t;
    for (long i = 1; i <= 3; i++) pthread_create(&t, NULL, counter, (void *)i);
    pthread_create(&t, NULL, sweeper, &s);
    printf("ready slots=%p sweep=%p pages=%ld dontfork=%p wipeonfork=%p shared=%p bigshared=%p\n", (void *)slots,
           (void *)s.base, s.pages, (void *)dontfork, (void *)wipe, (void *)shared, (void *)big);
    fflush(stdout);
    counter((void *)0);
    return 0;
}
