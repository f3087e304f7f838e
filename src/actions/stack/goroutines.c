#include "goroutines.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "actions/lang/go_runtime.h"
#include "actions/target/ptrace_session.h"
#include "go_frames.h"
#include "modules.h"
#include "stack.h"
#include "symbolize.h"
#include "util/grow.h"

/* ---- the Go program among the modules ---- */

struct go_program {
    Dwfl_Module *mod;
    const struct gopclntab *tables; /* NULL: Go, but tables of a layout diagtop does not read */
    Dwarf_Addr bias;
};

/* Whether elf is a Go program: it has the sections Go's linker writes. */
static int is_go(Elf *elf)
{
    size_t shstrndx;
    if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0) return 0;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
        if (name && (strcmp(name, ".gopclntab") == 0 || strcmp(name, ".go.buildinfo") == 0)) return 1;
    }
    return 0;
}

static int find_go(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
    (void)userdata, (void)name, (void)start;
    struct go_program *p = arg;
    Dwarf_Addr bias;
    const struct gopclntab *t = modules_go(mod, &bias);
    if (!t && !is_go(dwfl_module_getelf(mod, &bias))) return DWARF_CB_OK;
    *p = (struct go_program){mod, t, bias};
    return DWARF_CB_ABORT;
}

/* ---- reading ---- */

static void unwind_goroutine(const struct go_program *p, const struct mem_reader *mem, const struct go_goroutine *g,
                             struct goroutine *out)
{
    *out = (struct goroutine){.id = g->id, .waiting_since_s = g->waiting_since_s, .waited_s = -1, .tid = g->tid,
                              .gopc = g->gopc, .startpc = g->startpc, .wait_since_ns = g->wait_since_ns};
    snprintf(out->state, sizeof out->state, "%s", g->wait_reason[0] ? g->wait_reason : go_status_name(g->status));
    if (g->status == GO_RUNNING) { /* its saved context is stale: the thread running it holds its stack */
        if (g->tid) snprintf(out->error, sizeof out->error, "running on thread %d: its stack is that thread's", g->tid);
        else snprintf(out->error, sizeof out->error, "running: its stack is its thread's");
        return;
    }
    struct unwind_frame tmp[STACK_MAX_FRAMES];
    int n = go_frames_unwind(p->tables, p->bias, mem, g->pc, g->sp, tmp, STACK_MAX_FRAMES, out->error,
                             sizeof out->error);
    out->pcs = malloc((size_t)(n ? n : 1) * sizeof *out->pcs);
    if (!out->pcs) {
        snprintf(out->error, sizeof out->error, "out of memory");
        return;
    }
    memcpy(out->pcs, tmp, (size_t)n * sizeof *tmp);
    out->npcs = n;
}

/* The Go program among m's modules and its runtime's layout, read before anything is stopped (DWARF reading is
 * the slow part). Returns 0, or -1 with out->go and out->why_not saying why not. */
static int prepare(struct modules *m, struct go_program *p, struct go_layout *layout, struct goroutines *out)
{
    memset(out, 0, sizeof *out);
    *p = (struct go_program){0};
    dwfl_getmodules(modules_dwfl(m), find_go, p, 0);
    if (!p->mod) return -1;
    out->go = 1;
    Dwarf_Addr dwbias;
    Dwarf *dw = dwfl_module_getdwarf(p->mod, &dwbias);
    char why[160];
    if (dw && !p->tables) {
        snprintf(out->why_not, sizeof out->why_not,
                 "its PC tables (.gopclntab) are of a layout diagtop does not read: goroutines not shown");
        return -1;
    }
    if (go_layout_read(dw, dwbias, layout, why, sizeof why) < 0) {
        snprintf(out->why_not, sizeof out->why_not, "%s: goroutines not shown", why);
        return -1;
    }
    return 0;
}

/* The goroutines and their stacks' PCs, from mem. */
static void read_all(const struct go_program *p, const struct go_layout *layout, const struct mem_reader *mem,
                     struct goroutines *out)
{
    struct go_goroutine *gs;
    int n;
    char why[160];
    if (go_goroutines_read(layout, mem, &gs, &n, why, sizeof why) < 0) {
        snprintf(out->why_not, sizeof out->why_not, "%s: goroutines not shown", why);
        return;
    }
    out->list = calloc((size_t)(n ? n : 1), sizeof *out->list);
    if (!out->list) {
        snprintf(out->why_not, sizeof out->why_not, "out of memory");
        free(gs);
        return;
    }
    for (int i = 0; i < n; i++) unwind_goroutine(p, mem, &gs[i], &out->list[out->n++]);
    free(gs);
}

void goroutines_read(struct modules *m, const struct mem_reader *mem, struct goroutines *out)
{
    struct go_program p;
    struct go_layout layout;
    if (prepare(m, &p, &layout, out) == 0) read_all(&p, &layout, mem, out);
}

/* ---- naming ---- */

static int add_address(unsigned long long **addrs, size_t *n, size_t *cap, unsigned long long a)
{
    if (grow_reserve((void **)addrs, cap, *n, sizeof **addrs, 256) < 0) return -1;
    (*addrs)[(*n)++] = a;
    return 0;
}

int goroutines_addresses(const struct goroutines *gs, unsigned long long **addrs, size_t *n, size_t *cap)
{
    for (int i = 0; i < gs->n; i++) {
        const struct goroutine *g = &gs->list[i];
        for (int k = 0; k < g->npcs; k++)
            if (add_address(addrs, n, cap, symbolizer_address(g->pcs[k].pc, !g->pcs[k].exact)) < 0) return -1;
        if ((g->gopc && add_address(addrs, n, cap, symbolizer_address(g->gopc, 1)) < 0) ||
            (g->startpc && add_address(addrs, n, cap, g->startpc) < 0))
            return -1;
    }
    return 0;
}

/* Whether the runtime started it for itself, as Go's isSystemGoroutine decides: its first function is in runtime,
 * but for runtime.main (the program's main goroutine) and the handler of async events. */
static int started_by_runtime(const char *start)
{
    return start && strncmp(start, "runtime.", 8) == 0 && strcmp(start, "runtime.main") != 0 &&
           strcmp(start, "runtime.handleAsyncEvent") != 0;
}

/* The go statement at gopc, as Go's tracebacks print "created by": the function it is in, the innermost
 * file:line (an inlined call's own). */
static void name_creator(struct symbolizer *sy, struct goroutine *g, int source)
{
    struct stack_frame f[16];
    int n = g->gopc ? symbolizer_lookup(sy, g->gopc, 1, source, f, 16) : 0;
    if (n == 0) return;
    g->created_by = f[n - 1];
    if (n > 1) {
        free(g->created_by.file);
        g->created_by.file = f[0].file ? strdup(f[0].file) : NULL;
        g->created_by.line = f[0].line;
    }
    for (int i = 0; i < n - 1; i++) stack_frame_clear(&f[i]);
}

static void name_goroutine(struct symbolizer *sy, struct goroutine *g, int source)
{
    struct stack_frame tmp[STACK_MAX_FRAMES];
    int n = 0;
    for (int i = 0; i < g->npcs && n < STACK_MAX_FRAMES; i++)
        n += symbolizer_lookup(sy, g->pcs[i].pc, !g->pcs[i].exact, source, tmp + n, STACK_MAX_FRAMES - n);
    g->frames = malloc((size_t)(n ? n : 1) * sizeof *g->frames);
    if (g->frames) {
        memcpy(g->frames, tmp, (size_t)n * sizeof *tmp);
        g->nframes = n;
    } else {
        for (int i = 0; i < n; i++) stack_frame_clear(&tmp[i]);
    }
    name_creator(sy, g, source);
    struct stack_frame start[16];
    int ns = g->startpc ? symbolizer_lookup(sy, g->startpc, 0, 0, start, 16) : 0;
    g->system = ns > 0 && started_by_runtime(start[ns - 1].function);
    for (int i = 0; i < ns; i++) stack_frame_clear(&start[i]);
}

void goroutines_name(struct symbolizer *sy, struct goroutines *gs, int source)
{
    for (int i = 0; i < gs->n; i++) name_goroutine(sy, &gs->list[i], source);
}

void goroutines_free(struct goroutines *gs)
{
    for (int i = 0; i < gs->n; i++) {
        struct goroutine *g = &gs->list[i];
        for (int k = 0; k < g->nframes; k++) stack_frame_clear(&g->frames[k]);
        free(g->frames);
        free(g->pcs);
        stack_frame_clear(&g->created_by);
    }
    free(gs->list);
    memset(gs, 0, sizeof *gs);
}

/* ---- a live process ---- */

static int read_live(void *ctx, unsigned long long addr, void *buf, size_t len)
{
    struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
    return process_vm_readv(*(const int *)ctx, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

int goroutines_capture(int pid, double timeout, const volatile sig_atomic_t *cancel, struct goroutines *out,
                       char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int rc = ptrace_session_check(pid, err, errlen);
    if (rc < 0) return rc;
    struct modules *m = modules_new(pid, err, errlen);
    struct symbolizer *sy = m ? symbolizer_new(m) : NULL;
    if (!sy) {
        modules_free(m);
        return -ESRCH;
    }
    struct go_program p;
    struct go_layout layout;
    if (prepare(m, &p, &layout, out) == 0) {
        /* stopped only while the list and the stacks are read: a running program's would tear */
        struct ptrace_session s;
        rc = ptrace_session_stop(&s, pid, timeout, cancel, err, errlen);
        if (rc == 0) {
            struct mem_reader mem = {read_live, &pid};
            read_all(&p, &layout, &mem, out);
            ptrace_session_detach(&s, 0.5);
        }
        ptrace_session_free(&s);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now); /* the Go runtime's nanotime */
        long long now_ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
        for (int i = 0; i < out->n; i++)
            if (out->list[i].wait_since_ns > 0 && out->list[i].wait_since_ns <= now_ns)
                out->list[i].waited_s = (double)(now_ns - out->list[i].wait_since_ns) / 1e9;
        if (rc == 0) goroutines_name(sy, out, 1);
    }
    symbolizer_free(sy);
    modules_free(m);
    if (rc < 0) goroutines_free(out);
    return rc;
}
