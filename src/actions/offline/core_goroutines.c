#include "core_goroutines.h"

#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/lang/go_runtime.h"
#include "actions/stack/go_frames.h"
#include "actions/stack/modules.h"
#include "actions/stack/symbolize.h"
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
                             struct core_goroutine *out)
{
    *out = (struct core_goroutine){.id = g->id, .waiting_since_s = g->waiting_since_s, .tid = g->tid,
                                   .gopc = g->gopc, .startpc = g->startpc};
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

void core_goroutines_read(struct modules *m, struct core_memory *cm, struct core_goroutines *out)
{
    memset(out, 0, sizeof *out);
    struct go_program p = {0};
    dwfl_getmodules(modules_dwfl(m), find_go, &p, 0);
    if (!p.mod) return;
    out->go = 1;
    Dwarf_Addr dwbias;
    Dwarf *dw = dwfl_module_getdwarf(p.mod, &dwbias);
    struct go_layout layout;
    char why[160];
    if (dw && !p.tables) {
        snprintf(out->why_not, sizeof out->why_not,
                 "its PC tables (.gopclntab) are of a layout diagtop does not read: goroutines not shown");
        return;
    }
    if (go_layout_read(dw, dwbias, &layout, why, sizeof why) < 0) {
        snprintf(out->why_not, sizeof out->why_not, "%s: goroutines not shown", why);
        return;
    }
    struct mem_reader mem = core_memory_reader(cm);
    struct go_goroutine *gs;
    int n;
    if (go_goroutines_read(&layout, &mem, &gs, &n, why, sizeof why) < 0) {
        snprintf(out->why_not, sizeof out->why_not, "%s: goroutines not shown", why);
        return;
    }
    out->list = calloc((size_t)(n ? n : 1), sizeof *out->list);
    if (!out->list) {
        snprintf(out->why_not, sizeof out->why_not, "out of memory");
        free(gs);
        return;
    }
    for (int i = 0; i < n; i++) unwind_goroutine(&p, &mem, &gs[i], &out->list[out->n++]);
    free(gs);
}

/* ---- naming ---- */

static int add_address(unsigned long long **addrs, size_t *n, size_t *cap, unsigned long long a)
{
    if (grow_reserve((void **)addrs, cap, *n, sizeof **addrs, 256) < 0) return -1;
    (*addrs)[(*n)++] = a;
    return 0;
}

int core_goroutines_addresses(const struct core_goroutines *gs, unsigned long long **addrs, size_t *n, size_t *cap)
{
    for (int i = 0; i < gs->n; i++) {
        const struct core_goroutine *g = &gs->list[i];
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
static void name_creator(struct symbolizer *sy, struct core_goroutine *g, int source)
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

static void name_goroutine(struct symbolizer *sy, struct core_goroutine *g, int source)
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

void core_goroutines_name(struct symbolizer *sy, struct core_goroutines *gs, int source)
{
    for (int i = 0; i < gs->n; i++) name_goroutine(sy, &gs->list[i], source);
}

void core_goroutines_free(struct core_goroutines *gs)
{
    for (int i = 0; i < gs->n; i++) {
        struct core_goroutine *g = &gs->list[i];
        for (int k = 0; k < g->nframes; k++) stack_frame_clear(&g->frames[k]);
        free(g->frames);
        free(g->pcs);
        stack_frame_clear(&g->created_by);
    }
    free(gs->list);
    memset(gs, 0, sizeof *gs);
}
