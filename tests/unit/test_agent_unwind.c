/* The native agent's local unwinder (src/agent/unwind.c, compiled in here): the return addresses it finds equal
 * glibc's backtrace() through this binary's own frames (ASan-built, -O1), through glibc's qsort (no frame pointers),
 * with its cache of rows cold and warm; from a signal handler's context; on a stack it does not know the bounds of
 * (a makecontext stack in the heap: copied first); and it stops, without faulting, on registers that point
 * nowhere. */
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "agent/unwind.c"
#include "check.h"

struct agent agent_g;

void *agent_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void agent_unmap(void *p, size_t bytes) { munmap(p, bytes); }

#define NOINLINE __attribute__((noinline))

static uintptr_t got[AGENT_MAX_FRAMES], want[AGENT_MAX_FRAMES];
static int ngot, nwant, use_cache;
static volatile int sink;

/* Both unwinds from one function: backtrace() gives its return address into this function first, unwind_here its
 * own frame's pc first and then the same return addresses as backtrace from the caller of this function on. */
static NOINLINE void capture(void)
{
    void *bt[AGENT_MAX_FRAMES];
    nwant = backtrace(bt, AGENT_MAX_FRAMES);
    for (int i = 0; i < nwant; i++) want[i] = (uintptr_t)bt[i];
    ngot = unwind_here(got, AGENT_MAX_FRAMES, use_cache);
    sink++;
}

/* The common frames: from the return address into capture's caller on (the two calls in capture differ, and
 * backtrace may start in a sanitizer's interceptor of itself), as many as backtrace has. */
static int same_frames(void)
{
    /* got: [unwind_here's pc, into capture, into capture's caller, ...]; want: [..., into capture, into caller] */
    if (getenv("UNWIND_DEBUG"))
        for (int i = 0; i < 8; i++) printf("  %d got %#lx want %#lx\n", i, (unsigned long)got[i], (unsigned long)want[i]);
    int k = 0;
    while (k < nwant && ngot > 2 && want[k] != got[2]) k++;
    if (ngot < 4 || k >= nwant) {
        printf("  got %d frames, backtrace %d, no common frame\n", ngot, nwant);
        return 0;
    }
    int n = 0;
    for (int i = 2; k < nwant && i < ngot; i++, k++, n++)
        if (got[i] != want[k]) {
            printf("  frame %d: %#lx, backtrace says %#lx\n", i, (unsigned long)got[i], (unsigned long)want[k]);
            return 0;
        }
    return n >= 3;
}

static NOINLINE void level3(void) { capture(); sink++; }
static NOINLINE void level2(void) { level3(); sink++; }
static NOINLINE void level1(void) { level2(); sink++; }

static void test_own_frames(void)
{
    use_cache = 0;
    level1();
    CHECK(same_frames());
    CHECK(unwind_cache_init() == 0);
    use_cache = 1;
    level1(); /* cold cache */
    CHECK(same_frames());
    level1(); /* warm */
    CHECK(same_frames());
}

static int captured;

static int compare_and_capture(const void *a, const void *b)
{
    if (!captured++) capture();
    return *(const int *)a - *(const int *)b;
}

static void test_through_qsort(void)
{
    int v[64];
    for (int i = 0; i < 64; i++) v[i] = (i * 37) % 64;
    for (use_cache = 0; use_cache < 2; use_cache++) {
        ngot = nwant = captured = 0;
        qsort(v, 64, sizeof v[0], compare_and_capture);
        CHECK(same_frames());
        /* glibc's own frames are in it, not just this binary's */
        struct dl_find_object self, o;
        _dl_find_object((void *)test_through_qsort, &self);
        int libc = 0;
        for (int i = 0; i < ngot; i++)
            if (_dl_find_object((void *)got[i], &o) == 0 && o.dlfo_map_start != self.dlfo_map_start) libc++;
        CHECK(libc >= 2);
        *(volatile int *)&v[0] = 0;
    }
}

static uintptr_t handler_got[AGENT_MAX_FRAMES];
static int handler_n;
static uintptr_t interrupted_caller;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)si;
    handler_n = unwind_context(uc, handler_got, AGENT_MAX_FRAMES);
}

static NOINLINE void raise_here(void)
{
    interrupted_caller = (uintptr_t)__builtin_return_address(0);
    raise(SIGUSR1);
    sink++;
}

static void test_signal_context(void)
{
    struct sigaction sa = {.sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO};
    sigaction(SIGUSR1, &sa, NULL);
    raise_here();
    /* from where raise was interrupted (inside libc) out through raise_here to its caller */
    int found = 0;
    for (int i = 1; i < handler_n; i++) found |= handler_got[i] == interrupted_caller;
    CHECK(handler_n >= 4);
    CHECK(found);
    signal(SIGUSR1, SIG_DFL);
}

static ucontext_t main_ctx, co_ctx;
static uintptr_t co_entry_return;

static NOINLINE void on_coroutine_inner(void)
{
    ngot = unwind_here(got, AGENT_MAX_FRAMES, 0);
    sink++;
}

static NOINLINE void on_coroutine(void)
{
    co_entry_return = (uintptr_t)__builtin_return_address(0);
    on_coroutine_inner();
    sink++;
}

static void test_unknown_stack(void)
{
    CHECK(unwind_scratch_init() == 0);
    size_t size = 256 * 1024;
    char *stack = malloc(size); /* in the heap: neither the main stack nor a glibc thread's */
    getcontext(&co_ctx);
    co_ctx.uc_stack.ss_sp = stack;
    co_ctx.uc_stack.ss_size = size;
    co_ctx.uc_link = &main_ctx;
    makecontext(&co_ctx, on_coroutine, 0);
    ngot = 0;
    swapcontext(&main_ctx, &co_ctx);
    int found = 0;
    for (int i = 0; i < ngot; i++) found |= got[i] == co_entry_return;
    CHECK(ngot >= 3);
    CHECK(found); /* read from the copy, through on_coroutine into makecontext's trampoline */
    for (int i = 0; i < 8; i++) CHECK_INT(agent_g.scratch_busy[i], 0);
    free(stack);
}

static void test_nowhere(void)
{
    uintptr_t pcs[AGENT_MAX_FRAMES];
    unsigned char mem[256] = {0};
    struct unw_regs r = {.valid = (1u << UNW_NREGS) - 1};
    r.r[16] = 0x1234; /* no module */
    r.r[7] = (uintptr_t)mem;
    CHECK_INT(unwind_regs(&r, (uintptr_t)mem, (uintptr_t)mem + sizeof mem, mem, pcs, AGENT_MAX_FRAMES, 0), 1);
    /* a pc in libc, a stack pointer outside the memory given: the frame's reads fail, it stops */
    struct unw_regs r2 = {.valid = (1u << UNW_NREGS) - 1};
    r2.r[16] = (uintptr_t)qsort + 16;
    r2.r[7] = 0x10;
    r2.r[6] = 0x20;
    CHECK_INT(unwind_regs(&r2, (uintptr_t)mem, (uintptr_t)mem + sizeof mem, mem, pcs, AGENT_MAX_FRAMES, 0), 1);
    /* a stack of garbage: whatever it finds, it stops within the memory and the frame limit */
    unsigned char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)(i * 131 + 7);
    struct unw_regs r3 = {.valid = (1u << UNW_NREGS) - 1};
    r3.r[16] = (uintptr_t)qsort + 32;
    r3.r[7] = (uintptr_t)junk;
    int n = unwind_regs(&r3, (uintptr_t)junk, (uintptr_t)junk + sizeof junk, junk, pcs, AGENT_MAX_FRAMES, 0);
    CHECK(n >= 1 && n <= AGENT_MAX_FRAMES);
}

/* Hostile CFI from a module must never trap in the host: INT64_MIN / -1 is the one division that does. */
static void test_expression_division(void)
{
    struct unw_regs regs = {0};
    struct mem m = {0};
    uintptr_t out = 0;
    /* DW_OP_const8s INT64_MIN, DW_OP_const1s -1, DW_OP_div */
    const uint8_t div_min[] = {0x0f, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x09, 0xff, 0x1b};
    CHECK(eval(div_min, sizeof div_min, &regs, &m, 0, 0, &out) == 0);
    CHECK(out == (uintptr_t)INT64_MIN);
    const uint8_t div_neg[] = {0x08, 7, 0x09, 0xfe, 0x1b}; /* 7 / -2 */
    CHECK(eval(div_neg, sizeof div_neg, &regs, &m, 0, 0, &out) == 0);
    CHECK((intptr_t)out == -3);
    const uint8_t div_zero[] = {0x08, 7, 0x08, 0, 0x1b};
    CHECK(eval(div_zero, sizeof div_zero, &regs, &m, 0, 0, &out) < 0);
}

int main(void)
{
    check_suite = "agent_unwind";
    RUN(test_own_frames);
    RUN(test_through_qsort);
    RUN(test_signal_context);
    RUN(test_unknown_stack);
    RUN(test_nowhere);
    RUN(test_expression_division);
    return check_failed_tests ? 1 : 0;
}
