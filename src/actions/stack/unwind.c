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
#include "gopclntab.h"
#include "stack.h"

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
    /* Go frames are unwound with the program's own tables (go_unwind), the others by libdw; between the two the
     * frame's registers pass: r (known: the bits of set), its pc, and whether the pc is exact. */
    int libdw_only;   /* a Go frame the tables could not explain: libdw does the whole stack */
    int resuming;     /* libdw starts from the frame below, not from the thread's registers */
    int seg_first;    /* the next frame libdw reports is its segment's first */
    int handed_back;  /* libdw stopped at a Go frame, now in the fields below */
    unsigned long long r[ARCH_DWARF_REGS];
    unsigned set;
    unsigned long long pc;
    int exact;
    unsigned long long prev_lookup; /* the previous frame's lookup address, in a libdw segment */
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
    if (u->resuming) { /* only the registers libdw would know at this frame */
        for (int i = 0; i < ARCH_DWARF_REGS; i++) {
            Dwarf_Word v = u->r[i];
            if ((u->set >> i & 1) && !dwfl_thread_state_registers(thread, i, 1, &v)) return false;
        }
        /* A return address goes in as the call's last byte: libdw looks up the initial frame's CFI at its pc,
         * the others' at pc - 1. */
        dwfl_thread_state_register_pc(thread, u->exact ? u->pc : u->pc - 1);
        return true;
    }
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

/* The Go tables serving the module at addr, with its bias; NULL for any other code. */
static const struct gopclntab *go_at(struct unwinder *u, unsigned long long addr, Dwarf_Addr *bias)
{
    Dwfl_Module *mod = dwfl_addrmodule(modules_dwfl(u->m), addr);
    return mod ? modules_go(mod, bias) : NULL;
}

/* Whether the CFI libdw used for the frame at addr marks a signal frame (its caller's pc is then exact). */
static int signal_cfi(struct unwinder *u, unsigned long long addr)
{
    Dwfl_Module *mod = dwfl_addrmodule(modules_dwfl(u->m), addr);
    Dwarf_Addr bias;
    Dwarf_CFI *cfis[2] = {mod ? dwfl_module_eh_cfi(mod, &bias) : NULL, NULL};
    for (int i = 0; i < 2; i++) {
        if (i == 1 && mod) cfis[1] = dwfl_module_dwarf_cfi(mod, &bias);
        Dwarf_Frame *frame = NULL;
        if (!cfis[i] || dwarf_cfi_addrframe(cfis[i], addr - bias, &frame) != 0) continue;
        bool signalp = false;
        dwarf_frame_info(frame, NULL, NULL, &signalp);
        free(frame);
        return signalp;
    }
    return 0;
}

static int on_frame(Dwfl_Frame *state, void *arg)
{
    struct unwinder *u = arg;
    Dwarf_Addr pc;
    bool activation;
    int first = u->seg_first;
    u->seg_first = 0;
    if (!first && !u->libdw_only && dwfl_frame_pc(state, &pc, NULL) && pc != 0) {
        Dwarf_Addr bias;
        if (go_at(u, pc - 1, &bias)) { /* Go's tables take over from here, before libdw unwinds this frame */
            u->set = 0;
            for (int i = 0; i < ARCH_DWARF_PC; i++) {
                Dwarf_Word v;
                if (dwfl_frame_reg(state, (unsigned)i, &v) == 0) u->r[i] = v, u->set |= 1u << i;
            }
            u->pc = u->r[ARCH_DWARF_PC] = pc;
            u->set |= 1u << ARCH_DWARF_PC;
            u->exact = signal_cfi(u, u->prev_lookup);
            u->handed_back = 1;
            return DWARF_CB_ABORT;
        }
    }
    if (!dwfl_frame_pc(state, &pc, &activation)) {
        snprintf(u->why, u->whylen, "unwinding stopped: %s", dwfl_errmsg(-1));
        return DWARF_CB_ABORT;
    }
    if (first && u->resuming && !u->exact) pc++, activation = false; /* it went in as pc - 1 */
    if (pc == 0) return DWARF_CB_ABORT; /* the outermost frame's return address */
    u->prev_lookup = activation ? pc : pc - 1;
    u->out[u->n++] = (struct unwind_frame){pc, activation};
    if (u->n == u->max) {
        snprintf(u->why, u->whylen, "stopped after %d frames", u->max);
        return DWARF_CB_ABORT;
    }
    return DWARF_CB_OK;
}

/* libdw from the thread's registers, or from the frame in u (resume). 1 when it handed a Go frame back. */
static int libdw_segment(struct unwinder *u, int tid, int resume)
{
    u->resuming = resume;
    u->seg_first = 1;
    u->handed_back = 0;
    int rc = dwfl_getthread_frames(modules_dwfl(u->m), tid, on_frame, u);
    u->resuming = 0;
    if (u->handed_back) return 1;
    if (rc < 0 && !u->why[0]) /* past the last frame CFI or frame pointers could explain */
        snprintf(u->why, u->whylen, "unwinding stopped: %s (JIT or code without unwind info?)", dwfl_errmsg(-1));
    return 0;
}

#define DWARF_SAME_VALUE 0xf041u /* what libdw's x86-64 ABI rules keep across a frame: DWARF 0, 6, 12-15 */
#define DWARF_RBP 6

enum { GO_DONE, GO_LIBDW, GO_CONFUSED };

/* Unwinds the Go frames from the one in u, as libdw would from the program's .debug_frame (one entry per
 * function, from these very tables: CFA = SP + the frame's size + 8, the return address just below it, the other
 * registers by libdw's x86-64 rules). GO_LIBDW when a frame outside Go's code is reached (its registers in u),
 * GO_DONE at the end of the stack, GO_CONFUSED when the tables or the memory do not allow what libdw would do
 * to be known (then libdw unwinds the whole stack). */
static int go_unwind(struct unwinder *u)
{
    for (;;) {
        Dwarf_Addr bias;
        unsigned long long lookup = u->exact ? u->pc : u->pc - 1;
        const struct gopclntab *go = go_at(u, lookup, &bias);
        if (!go) return GO_LIBDW;
        u->out[u->n++] = (struct unwind_frame){u->pc, u->exact};
        if (u->n == u->max) {
            snprintf(u->why, u->whylen, "stopped after %d frames", u->max);
            return GO_DONE;
        }
        struct gopclntab_func fn;
        Dwarf_Word ra, sp = u->r[ARCH_DWARF_SP], fp = u->r[DWARF_RBP];
        long long delta = -2;
        if (gopclntab_find(go, lookup - bias, &fn) == 0) {
            if (stack_go_end(gopclntab_name(go, &fn))) return GO_DONE; /* what lies past it is not this stack */
            delta = gopclntab_spdelta(go, &fn, lookup - bias);
            if (delta == -1) return GO_CONFUSED;
        }
        if (delta >= 0) {
            if (!(u->set >> ARCH_DWARF_SP & 1)) return GO_CONFUSED;
            Dwarf_Addr cfa = sp + (unsigned long long)delta + 8;
            if (!memory_read(NULL, cfa - 8, &ra, u)) return GO_CONFUSED;
            u->set = (u->set & DWARF_SAME_VALUE) | 1u << ARCH_DWARF_SP | 1u << ARCH_DWARF_PC;
            u->r[ARCH_DWARF_SP] = cfa;
        } else {
            /* Code without an entry (runtime/cgo's C, a function's padding): libdw finds no CFI and tries the frame pointer
             * (elfutils' x86_64_unwind), else stops. */
            Dwarf_Word prev_fp = 0;
            int ok = (u->set >> DWARF_RBP & 1) && fp != 0;
            if (ok && !memory_read(NULL, fp, &prev_fp, u)) prev_fp = 0;
            ok = ok && memory_read(NULL, fp + 8, &ra, u);
            if (ok && (u->set >> ARCH_DWARF_SP & 1) && sp >= fp + 16) ok = 0;
            if (!ok) {
                snprintf(u->why, u->whylen,
                         "unwinding stopped: no matching address range (JIT or code without unwind info?)");
                return GO_DONE;
            }
            u->set = 1u << DWARF_RBP | 1u << ARCH_DWARF_SP;
            u->r[DWARF_RBP] = prev_fp;
            u->r[ARCH_DWARF_SP] = fp + 16;
        }
        if (ra == 0) return GO_DONE; /* the outermost frame */
        u->r[ARCH_DWARF_PC] = u->pc = ra;
        u->exact = 0;
    }
}

/* The thread state set up in u, unwound: libdw and Go's tables in turns. */
static int unwind_frames(struct unwinder *u, int tid, struct unwind_frame *frames, int max, char *why, size_t whylen)
{
    u->out = frames;
    u->n = 0;
    u->max = max;
    u->why = why;
    u->whylen = whylen;
    u->libdw_only = 0;
    unsigned long long values[ARCH_DWARF_REGS];
    int nregs = ARCH_DWARF_REGS;
    if (u->copy_stack) memcpy(values, u->copy_regs, sizeof values);
    else nregs = arch_regs_dwarf(&u->regs, values, ARCH_DWARF_REGS);
    Dwarf_Addr bias;
    int go = nregs == ARCH_DWARF_REGS && go_at(u, values[ARCH_DWARF_PC], &bias);
    if (go) {
        memcpy(u->r, values, sizeof u->r);
        u->set = (1u << ARCH_DWARF_REGS) - 1;
        u->pc = values[ARCH_DWARF_PC];
        u->exact = 1;
    } else if (!libdw_segment(u, tid, 0)) {
        u->out = NULL;
        return u->n;
    }
    for (;;) {
        int r = go_unwind(u);
        if (r == GO_DONE) break;
        if (r == GO_CONFUSED) {
            u->n = 0;
            why[0] = '\0';
            u->libdw_only = 1;
            libdw_segment(u, tid, 0);
            break;
        }
        if (!libdw_segment(u, tid, 1)) break;
    }
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
