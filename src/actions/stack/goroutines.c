#include "goroutines.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "actions/lang/go_runtime.h"
#include "actions/target/mem_cache.h"
#include "debuginfo_cache.h"
#include "actions/target/ptrace_session.h"
#include "go_frames.h"
#include "modules.h"
#include "stack.h"
#include "symbolize.h"
#include "util/arena.h"
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

/* ---- the layout kept per Go build ---- */

/* The Go build id (the ".note.go.buildid" note, "Go" type 4) made a file name, when the binary also carries
 * DWARF (the layout is what that DWARF says). 0, or -1. */
static int go_build_key(Elf *elf, char *key, size_t keysz)
{
    size_t shstrndx;
    int dwarf = 0, found = 0;
    if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0) return -1;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
        if (!name) continue;
        dwarf |= strcmp(name, ".debug_info") == 0 || strcmp(name, ".zdebug_info") == 0;
        Elf_Data *d = strcmp(name, ".note.go.buildid") == 0 && sh.sh_type == SHT_NOTE ? elf_getdata(scn, NULL) : NULL;
        GElf_Nhdr nh;
        size_t off = 0, name_off, desc_off;
        while (d && !found && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
            /* Go's linker writes the name "Go" padded to 4 bytes, and counts the padding */
            if (nh.n_type != 4 || (nh.n_namesz != 3 && nh.n_namesz != 4) || memcmp((char *)d->d_buf + name_off, "Go", 3) != 0)
                continue;
            size_t n = nh.n_descsz < keysz - 4 ? nh.n_descsz : keysz - 4;
            memcpy(key, "go-", 3);
            for (size_t i = 0; i < n; i++) { /* "abc/def/...": only [A-Za-z0-9_-] go into a file name */
                char c = ((const char *)d->d_buf)[desc_off + i];
                key[3 + i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ? c : '_';
            }
            key[3 + n] = '\0';
            found = n > 0;
        }
    }
    return found && dwarf ? 0 : -1;
}

static int layout_name(Elf *elf, char *name, size_t len)
{
    char key[160];
    if (go_build_key(elf, key, sizeof key) < 0) return -1;
    return snprintf(name, len, "%s.golayout", key) < (int)len ? 0 : -1;
}

#define GO_LAYOUT_FORMAT "diagtop-go-layout 1 %llx %llx %llx %llx %d %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu\n"
#define GO_LAYOUT_FIELDS(l, at)                                                                                      \
    at(l)->allgs, at(l)->allglen, at(l)->wait_reasons, at(l)->init_time, at(l)->nwait_reasons, at(l)->g_size,       \
        at(l)->goid, at(l)->status, at(l)->wait_reason, at(l)->wait_since, at(l)->gopc, at(l)->startpc, at(l)->m,  \
        at(l)->sched_sp, at(l)->sched_pc, at(l)->sched_bp, at(l)->stack_hi, at(l)->syscall_sp, at(l)->syscall_pc,  \
        at(l)->m_procid
#define GO_VALUE(l) (l)
#define GO_ADDRESS(l) &(l)

/* Variables' addresses are kept without the load bias (0 where absent). */
static void rebias(struct go_layout *l, long long by)
{
    unsigned long long *vars[] = {&l->allgs, &l->allglen, &l->wait_reasons, &l->init_time};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (*vars[i]) *vars[i] += (unsigned long long)by;
}

/* A layout an earlier run read from this very build's DWARF: 0, or -1 when there is none (or it fails the
 * checks every layout must pass). */
static int layout_load(Elf *elf, Dwarf_Addr bias, struct go_layout *l)
{
    char name[200];
    FILE *f = layout_name(elf, name, sizeof name) == 0 ? debuginfo_cache_open_kept(name) : NULL;
    if (!f) return -1;
    memset(l, 0, sizeof *l);
    int n = fscanf(f, GO_LAYOUT_FORMAT, GO_LAYOUT_FIELDS(l, GO_ADDRESS));
    fclose(f);
    if (n != 20 || !l->allgs || !l->allglen || l->nwait_reasons < 0 || go_layout_check(l) < 0) return -1;
    rebias(l, (long long)bias);
    return 0;
}

/* Keeps the layout for the next run. */
static void layout_save(Elf *elf, Dwarf_Addr bias, const struct go_layout *found)
{
    char name[200];
    if (layout_name(elf, name, sizeof name) < 0) return;
    struct go_layout l = *found;
    rebias(&l, -(long long)bias);
    debuginfo_cache_keep(name, GO_LAYOUT_FORMAT, GO_LAYOUT_FIELDS(&l, GO_VALUE));
}

/* The Go program among m's modules and its runtime's layout, read before anything is stopped: kept from an earlier
 * run of this build, else from its DWARF (the slow part: 18 ms of a 1,000-goroutine capture). Returns 0, or -1
 * with out->go and out->why_not saying why not. */
static int prepare(struct modules *m, struct go_program *p, struct go_layout *layout, struct goroutines *out)
{
    memset(out, 0, sizeof *out);
    *p = (struct go_program){0};
    dwfl_getmodules(modules_dwfl(m), find_go, p, 0);
    if (!p->mod) return -1;
    out->go = 1;
    Dwarf_Addr elfbias;
    Elf *elf = dwfl_module_getelf(p->mod, &elfbias);
    if (p->tables && layout_load(elf, elfbias, layout) == 0) return 0;
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
    if (p->tables && dwbias == elfbias) layout_save(elf, elfbias, layout);
    return 0;
}

/* The goroutines (not yet unwound) into out->list's room and *gs. Returns their count, or -1 (out->why_not says). */
static int read_list(const struct go_layout *layout, const struct mem_reader *mem, struct arena *scratch,
                     struct go_goroutine **gs, struct goroutines *out)
{
    int n;
    char why[160];
    if (go_goroutines_read(layout, mem, scratch, gs, &n, why, sizeof why) < 0) {
        snprintf(out->why_not, sizeof out->why_not, "%s: goroutines not shown", why);
        return -1;
    }
    if (!(out->list = calloc((size_t)(n ? n : 1), sizeof *out->list))) {
        snprintf(out->why_not, sizeof out->why_not, "out of memory");
        free(*gs);
        return -1;
    }
    return n;
}

void goroutines_read(struct modules *m, const struct mem_reader *mem, struct goroutines *out)
{
    struct go_program p;
    struct go_layout layout;
    struct go_goroutine *gs;
    int n = prepare(m, &p, &layout, out) == 0 ? read_list(&layout, mem, NULL, &gs, out) : -1;
    for (int i = 0; i < n; i++) unwind_goroutine(&p, mem, &gs[i], &out->list[out->n++]);
    if (n >= 0) free(gs);
}

/* ---- a live process: stacks copied during the stop, walked after it ---- */

#define STACK_COPY_MAX (1u << 20)    /* one goroutine's stack copied (deeper ones are walked during the stop) */
#define STACK_COPY_TOTAL (256u << 20) /* all of them */
/* Scratch reserved per goroutine before a stop: its g (read in ranges with gaps) and a parked stack's used part. */
#define SCRATCH_PER_GOROUTINE(g_size) (2 * (size_t)(g_size) + 4096)
#define SCRATCH_MAX (64u << 20) /* beyond, what does not fit is malloc'd during the stop */

/* A goroutine's stack as it was during the stop: a span [addr, addr + len) of the process, buf NULL when it was not
 * copied. */
static int read_copy(void *ctx, unsigned long long addr, void *buf, size_t len)
{
    const struct mem_span *c = ctx;
    if (!c->buf || addr < c->addr || addr - c->addr > c->len || len > c->len - (addr - c->addr)) return -1;
    memcpy(buf, (const unsigned char *)c->buf + (addr - c->addr), len);
    return 0;
}

static void drop_copy(struct arena *scratch, struct mem_span *c)
{
    if (!arena_owns(scratch, c->buf)) free(c->buf);
    c->buf = NULL;
}

/* Each goroutine's stack from sp to the top (copies[i], one span per goroutine), all read together: walking frames
 * is what takes time, so it is done from the copies once the process runs again. One too deep, past the total or
 * unreadable is walked here and now (a running one has nothing to walk). */
static void copy_stacks(const struct go_program *p, const struct mem_reader *mem, struct arena *scratch,
                        struct go_goroutine *gs, int n, struct mem_span *copies, struct goroutines *out)
{
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        const struct go_goroutine *g = &gs[i];
        size_t len = g->stack_hi > g->sp ? (size_t)(g->stack_hi - g->sp) : 0;
        void *buf = NULL;
        if (g->status != GO_RUNNING && len && len <= STACK_COPY_MAX && total + len <= STACK_COPY_TOTAL &&
            ((buf = arena_take(scratch, len)) || (buf = malloc(len))))
            total += len;
        copies[i] = (struct mem_span){g->sp, buf, buf ? len : 0, 0};
    }
    mem_read_spans(mem, copies, (size_t)n);
    for (int i = 0; i < n; i++) {
        if (copies[i].buf && !copies[i].ok) drop_copy(scratch, &copies[i]);
        if (!copies[i].buf) unwind_goroutine(p, mem, &gs[i], &out->list[i]);
    }
}

/* After the stop: the copied stacks walked. */
static void walk_copies(const struct go_program *p, struct arena *scratch, struct go_goroutine *gs, int n,
                        struct mem_span *copies, struct goroutines *out)
{
    for (int i = 0; i < n; i++) {
        if (!copies[i].buf) continue;
        struct mem_reader from_copy = {read_copy, &copies[i], NULL};
        unwind_goroutine(p, &from_copy, &gs[i], &out->list[i]);
        drop_copy(scratch, &copies[i]);
    }
    out->n = n;
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

#define SPANS_PER_CALL 1024 /* IOV_MAX */

/* Up to SPANS_PER_CALL spans in one process_vm_readv: it stops at the first range it cannot read, so the bytes
 * it returns say how many spans came whole. */
static size_t read_live_spans(void *ctx, struct mem_span *spans, size_t n)
{
    struct iovec local[SPANS_PER_CALL] = {{0}}, remote[SPANS_PER_CALL] = {{0}};
    if (n == 0) return 0;
    if (n > SPANS_PER_CALL) n = SPANS_PER_CALL;
    for (size_t i = 0; i < n; i++) {
        local[i] = (struct iovec){spans[i].buf, spans[i].len};
        remote[i] = (struct iovec){(void *)(uintptr_t)spans[i].addr, spans[i].len};
    }
    ssize_t got = process_vm_readv(*(const int *)ctx, local, (unsigned long)n, remote, (unsigned long)n, 0);
    size_t whole = 0;
    for (size_t done = 0; got > 0 && whole < n && done + spans[whole].len <= (size_t)got; whole++)
        done += spans[whole].len;
    return whole;
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
        struct go_goroutine *gs = NULL;
        struct mem_span *copies = NULL;
        int n = -1;
        struct mem_reader live = {read_live, &pid, read_live_spans}, mem;
        /* room for the g's and their stacks, faulted in now: none of it faults during the stop */
        struct arena scratch;
        long long count = go_goroutines_count(&layout, &live);
        size_t want = count > 0 ? SCRATCH_PER_GOROUTINE(layout.g_size) * (size_t)count * 5 / 4 + (1u << 20) : 0;
        arena_reserve(&scratch, want < SCRATCH_MAX ? want : SCRATCH_MAX);
        rc = ptrace_session_stop(&s, pid, timeout, cancel, err, errlen);
        if (rc == 0) {
            struct mem_cache cache; /* a page per read, not a field per read: the stop is shorter */
            mem_cache_init(&cache, &live, &mem);
            n = read_list(&layout, &mem, &scratch, &gs, out);
            if (n >= 0 && !(copies = calloc((size_t)(n ? n : 1), sizeof *copies))) {
                for (int i = 0; i < n; i++) unwind_goroutine(&p, &mem, &gs[i], &out->list[out->n++]);
                free(gs);
                n = -1;
            }
            if (n >= 0) copy_stacks(&p, &mem, &scratch, gs, n, copies, out);
            mem_cache_free(&cache);
            ptrace_session_detach(&s, 0.5);
            out->stopped_ms = ptrace_session_stopped_ms(&s);
        }
        ptrace_session_free(&s);
        if (n >= 0) {
            walk_copies(&p, &scratch, gs, n, copies, out);
            free(gs);
        }
        free(copies);
        arena_release(&scratch);
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
