#include "unwind.h"
#include "modules.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "actions/target/arch_regs.h"

#define PAGE 4096ULL
#define CACHED_PAGES 64

struct unwinder {
    struct modules *m;
    unsigned attached; /* the modules' generation whose Dwfl carries our thread callbacks; 0: none */
    int mem_fd;        /* /proc/PID/mem, for what process_vm_readv cannot read; -1 until needed */
    /* Pages of the stopped process's memory, filled on first access. */
    unsigned long long page_addr[CACHED_PAGES];
    int page_valid[CACHED_PAGES];
    unsigned char *pages; /* CACHED_PAGES * PAGE */
    int next_victim;
    /* The thread being unwound: stopped (registers read now, memory through the page cache), or a copy a sampler
     * took of its registers and of the top of its stack while it ran on (copy_stack set). */
    struct arch_regs regs;
    unsigned long long copy_regs[ARCH_DWARF_REGS];
    const unsigned char *copy_stack;
    unsigned long long copy_addr;
    size_t copy_len;
    struct unwind_frame *out;
    int n, max;
    char *why;
    size_t whylen;
};

static const unsigned char *page_of(struct unwinder *u, unsigned long long addr)
{
    unsigned long long base = addr & ~(PAGE - 1);
    for (int i = 0; i < CACHED_PAGES; i++)
        if (u->page_valid[i] && u->page_addr[i] == base) return u->pages + (size_t)i * PAGE;
    int slot = u->next_victim;
    u->next_victim = (u->next_victim + 1) % CACHED_PAGES;
    unsigned char *dst = u->pages + (size_t)slot * PAGE;
    struct iovec local = {dst, PAGE}, remote = {(void *)base, PAGE};
    int pid = modules_pid(u->m);
    int ok = process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)PAGE;
    if (!ok) { /* e.g. a page without read permission: /proc/PID/mem reads it as the debugger may */
        if (u->mem_fd < 0) {
            char path[64];
            snprintf(path, sizeof path, "/proc/%d/mem", pid);
            u->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
        }
        ok = u->mem_fd >= 0 && pread(u->mem_fd, dst, PAGE, (off_t)base) == (ssize_t)PAGE;
    }
    u->page_valid[slot] = ok;
    u->page_addr[slot] = base;
    return ok ? dst : NULL;
}

/* ---- libdwfl's thread callbacks: the state of the thread being unwound ---- */

static pid_t no_next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
    (void)dwfl, (void)arg, (void)thread_arg;
    return 0; /* threads are named by diagtop, one at a time (dwfl_getthread_frames) */
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
    (void)dwfl, (void)tid;
    *thread_arg = arg;
    return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
    (void)dwfl;
    struct unwinder *u = arg;
    if (u->copy_stack) { /* a running thread: only what was copied is known (its memory has moved on since) */
        if (addr < u->copy_addr || addr - u->copy_addr + sizeof *result > u->copy_len) return false;
        memcpy(result, u->copy_stack + (addr - u->copy_addr), sizeof *result);
        return true;
    }
    unsigned long long off = addr & (PAGE - 1);
    const unsigned char *p = page_of(u, addr);
    if (!p) return false;
    if (off + sizeof *result <= PAGE) {
        memcpy(result, p + off, sizeof *result);
        return true;
    }
    /* A word across two pages. */
    unsigned char word[sizeof *result];
    size_t first = (size_t)(PAGE - off);
    memcpy(word, p + off, first);
    const unsigned char *q = page_of(u, addr + first);
    if (!q) return false;
    memcpy(word + first, q, sizeof word - first);
    memcpy(result, word, sizeof word);
    return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
    struct unwinder *u = arg;
    unsigned long long values[ARCH_DWARF_REGS];
    Dwarf_Word regs[ARCH_DWARF_REGS];
    int n = ARCH_DWARF_REGS;
    if (u->copy_stack) memcpy(values, u->copy_regs, sizeof values);
    else n = arch_regs_dwarf(&u->regs, values, ARCH_DWARF_REGS);
    for (int i = 0; i < n; i++) regs[i] = values[i];
    if (!dwfl_thread_state_registers(thread, 0, (unsigned)n, regs)) return false;
    dwfl_thread_state_register_pc(thread, values[ARCH_DWARF_PC]);
    return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = no_next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

/* ---- the unwinder ---- */

struct unwinder *unwinder_new(struct modules *m)
{
    struct unwinder *u = calloc(1, sizeof *u);
    if (!u) return NULL;
    u->m = m;
    u->mem_fd = -1;
    u->pages = malloc(CACHED_PAGES * PAGE);
    if (!u->pages) {
        free(u);
        return NULL;
    }
    return u;
}

void unwinder_free(struct unwinder *u)
{
    if (!u) return;
    if (u->mem_fd >= 0) close(u->mem_fd);
    free(u->pages);
    free(u);
}

int unwinder_prepare(struct unwinder *u)
{
    Dwfl *dwfl = modules_dwfl(u->m);
    if (!dwfl) return -ENOMEM;
    unsigned gen = modules_generation(u->m);
    if (u->attached != gen) {
        /* A Dwfl takes thread callbacks once; a rebuilt one (new mappings) needs them again. */
        if (!dwfl_attach_state(dwfl, NULL, modules_pid(u->m), &thread_callbacks, u)) return -ENOMEM;
        u->attached = gen;
    }
    modules_prepare_unwind(u->m);
    return 0;
}

void unwinder_begin(struct unwinder *u) { memset(u->page_valid, 0, sizeof u->page_valid); }

/* Whether the modules' Dwfl carries our thread callbacks. One rebuilt since the last successful unwinder_prepare
 * (the mappings changed, and were then unreadable or empty, as a zombie leader's are, so that dwfl_attach_state
 * failed) has none: libdwfl's unwinder would follow its NULL process. */
static int prepared(struct unwinder *u)
{
    return u->attached && u->attached == modules_generation(u->m) && modules_dwfl(u->m);
}

static int on_frame(Dwfl_Frame *state, void *arg)
{
    struct unwinder *u = arg;
    Dwarf_Addr pc;
    bool activation;
    if (!dwfl_frame_pc(state, &pc, &activation)) {
        snprintf(u->why, u->whylen, "unwinding stopped: %s", dwfl_errmsg(-1));
        return DWARF_CB_ABORT;
    }
    if (pc == 0) return DWARF_CB_ABORT; /* the outermost frame's return address */
    u->out[u->n++] = (struct unwind_frame){pc, activation};
    if (u->n == u->max) {
        snprintf(u->why, u->whylen, "stopped after %d frames", u->max);
        return DWARF_CB_ABORT;
    }
    return DWARF_CB_OK;
}

/* Runs libdwfl's unwinder over the thread state set up in u. */
static int unwind_frames(struct unwinder *u, int tid, struct unwind_frame *frames, int max, char *why, size_t whylen)
{
    u->out = frames;
    u->n = 0;
    u->max = max;
    u->why = why;
    u->whylen = whylen;
    int rc = dwfl_getthread_frames(modules_dwfl(u->m), tid, on_frame, u);
    if (rc < 0 && !why[0]) /* past the last frame CFI or frame pointers could explain */
        snprintf(why, whylen, "unwinding stopped: %s (JIT or code without unwind info?)", dwfl_errmsg(-1));
    u->out = NULL;
    return u->n;
}

size_t unwind_copy_stack(int pid, unsigned long long sp, unsigned char *buf, size_t max)
{
    enum { MAX_PAGES = 64 };
    struct iovec local[MAX_PAGES + 1], remote[MAX_PAGES + 1];
    int n = 0;
    size_t off = 0;
    while (off < max && n < MAX_PAGES + 1) {
        unsigned long long addr = sp + off;
        size_t len = (size_t)(PAGE - (addr & (PAGE - 1)));
        if (len > max - off) len = max - off;
        local[n] = (struct iovec){buf + off, len};
        remote[n] = (struct iovec){(void *)addr, len};
        n++;
        off += len;
    }
    ssize_t got = process_vm_readv(pid, local, (unsigned long)n, remote, (unsigned long)n, 0);
    return got > 0 ? (size_t)got : 0;
}

int unwinder_copy(struct unwinder *u, int tid, const unsigned long long *regs, const unsigned char *stack,
                  unsigned long long stack_addr, size_t len, struct unwind_frame *frames, int max, char *why,
                  size_t whylen)
{
    why[0] = '\0';
    if (!prepared(u)) {
        snprintf(why, whylen, "unwinder not prepared");
        return 0;
    }
    memcpy(u->copy_regs, regs, sizeof u->copy_regs);
    u->copy_stack = stack;
    u->copy_addr = stack_addr;
    u->copy_len = len;
    int n = unwind_frames(u, tid, frames, max, why, whylen);
    u->copy_stack = NULL;
    return n;
}

int unwinder_thread(struct unwinder *u, int tid, struct unwind_frame *frames, int max, char *why, size_t whylen)
{
    why[0] = '\0';
    if (!prepared(u)) {
        snprintf(why, whylen, "unwinder not prepared");
        return 0;
    }
    int rc = arch_regs_read(tid, &u->regs);
    if (rc < 0) {
        snprintf(why, whylen, "cannot read registers: %s", strerror(-rc));
        return 0;
    }
    return unwind_frames(u, tid, frames, max, why, whylen);
}
