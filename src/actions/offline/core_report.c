#include "core_report.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core_auxv.h"
#include "actions/stack/debuginfo_cache.h"
#include "actions/stack/modules.h"
#include "actions/stack/symbolize.h"
#include "util/grow.h"
#include "core_memory.h"
#include "core_heap.h"

/* ---- the threads, unwound by libdw from the core ---- */

struct unwind_walk {
    struct stack_result *r;
    int max;
};

static int on_frame(Dwfl_Frame *state, void *arg)
{
    struct stack_thread *t = arg;
    Dwarf_Addr pc;
    bool activation;
    if (!dwfl_frame_pc(state, &pc, &activation)) return DWARF_CB_ABORT;
    t->pcs[t->npcs++] = (struct unwind_frame){.pc = pc, .exact = activation};
    return t->npcs < STACK_MAX_FRAMES ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static int on_thread(Dwfl_Thread *thread, void *arg)
{
    struct unwind_walk *w = arg;
    if (w->r->nthreads == w->max) return DWARF_CB_ABORT;
    struct stack_thread *t = &w->r->threads[w->r->nthreads++];
    t->tid = (int)dwfl_thread_tid(thread);
    t->cpu_percent = -1;
    int rc = dwfl_thread_getframes(thread, on_frame, t);
    if (rc < 0 && t->npcs == 0) snprintf(t->error, sizeof t->error, "%s", dwfl_errmsg(-1));
    else if (rc < 0) snprintf(t->error, sizeof t->error, "unwinding stopped: %s", dwfl_errmsg(-1));
    else if (t->npcs == STACK_MAX_FRAMES) snprintf(t->error, sizeof t->error, "more than %d frames", STACK_MAX_FRAMES);
    return DWARF_CB_OK;
}

static int unwind_threads(Dwfl *dwfl, Elf *core, struct core_report *r, char *err, size_t errlen)
{
    r->stacks.threads = calloc((size_t)r->notes.nthreads, sizeof *r->stacks.threads);
    if (!r->stacks.threads) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (dwfl_core_file_attach(dwfl, core) < 0) {
        snprintf(err, errlen, "cannot read the core's threads: %s", dwfl_errmsg(-1));
        return -1;
    }
    struct unwind_walk w = {&r->stacks, r->notes.nthreads};
    if (dwfl_getthreads(dwfl, on_thread, &w) < 0 && r->stacks.nthreads == 0) {
        snprintf(err, errlen, "cannot read the core's threads: %s", dwfl_errmsg(-1));
        return -1;
    }
    return 0;
}

/* A kernel core lists the dumping thread first: when it was taking the signal NT_SIGINFO names, that is the thread
 * that took it (a crash's faulting thread), marked and put first. */
static void mark_signal_thread(struct core_report *r)
{
    const struct core_signal *s = &r->notes.signal;
    if (!s->present || r->notes.threads[0].cursig != s->signo) return;
    r->signal_tid = r->notes.threads[0].tid;
    for (int i = 0; i < r->stacks.nthreads; i++) {
        struct stack_thread *t = &r->stacks.threads[i];
        if (t->tid != r->signal_tid) continue;
        char what[sizeof t->mark - 8];
        snprintf(t->mark, sizeof t->mark, "took %s", core_notes_signal_describe(s, what, sizeof what));
        struct stack_thread first = r->stacks.threads[0];
        r->stacks.threads[0] = *t;
        *t = first;
        return;
    }
}

/* ---- the mapped files ---- */

struct module_walk {
    struct core_report *r;
    size_t cap;
};

static int on_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
    (void)userdata, (void)start;
    struct module_walk *w = arg;
    struct core_report *r = w->r;
    if (GROW(r->modules, w->cap, r->nmodules, 32) < 0) return DWARF_CB_ABORT;
    Dwarf_Addr bias, lo, hi;
    const char *file = NULL, *debug = NULL;
    Elf *elf = dwfl_module_getelf(mod, &bias); /* finds the file, if not yet */
    dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, &file, &debug);
    /* libdwfl opens a file the core's link map names itself, checking its build-id, and then names no file */
    if (!file && elf && name && name[0] == '/' && modules_file_matches(mod, name)) file = name;
    struct core_module *m = &r->modules[r->nmodules];
    *m = (struct core_module){.name = strdup(name ? name : "?"), .file = file ? strdup(file) : NULL,
                              .debug_file = debug ? strdup(debug) : NULL, .start = lo, .end = hi,
                              .in_core = elf && !file};
    if (debuginfo_cache_build_id(mod, m->build_id, sizeof m->build_id) < 0) m->build_id[0] = '\0';
    r->nmodules++;
    return DWARF_CB_OK;
}

static int by_start(const void *a, const void *b)
{
    const struct core_module *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Counts each module's frames, and the modules missing although frames are in them. */
static void count_frames(struct core_report *r)
{
    for (int i = 0; i < r->stacks.nthreads; i++)
        for (int k = 0; k < r->stacks.threads[i].npcs; k++) {
            unsigned long long pc = r->stacks.threads[i].pcs[k].pc;
            int lo = 0, hi = r->nmodules;
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                if (r->modules[mid].end <= pc) lo = mid + 1;
                else hi = mid;
            }
            if (lo < r->nmodules && r->modules[lo].start <= pc) r->modules[lo].frames++;
        }
    for (int i = 0; i < r->nmodules; i++)
        r->missing += r->modules[i].frames && !r->modules[i].file && !r->modules[i].in_core;
}

static void list_modules(Dwfl *dwfl, struct core_report *r)
{
    struct module_walk w = {r, 0};
    dwfl_getmodules(dwfl, on_module, &w, 0);
    if (r->nmodules) qsort(r->modules, (size_t)r->nmodules, sizeof *r->modules, by_start);
    count_frames(r);
}

/* ---- the whole report ---- */

static void fill_identity(struct core_report *r)
{
    r->stacks.offline = 1;
    r->stacks.pid = r->notes.pid ? r->notes.pid : r->notes.threads[0].tid;
    snprintf(r->stacks.comm, sizeof r->stacks.comm, "%s", r->notes.fname);
}

/* With the threads unwound: the goroutines and the heap's allocator found, every address the report will look up
 * told to the modules (so that a first run inflates only the DWARF those need), then all named and walked. */
/* A core diagtop wrote says when the process was stopped, on the clock the Go runtime keeps: how long each
 * goroutine had waited then (as live), not only since when after the runtime's start. */
static void waited_when_taken(struct core_report *r)
{
    long long taken = r->notes.taken_monotonic_ns;
    for (int i = 0; taken > 0 && i < r->goroutines.n; i++) {
        struct goroutine *g = &r->goroutines.list[i];
        if (g->wait_since_ns > 0 && g->wait_since_ns <= taken) g->waited_s = (double)(taken - g->wait_since_ns) / 1e9;
    }
}

/* A NUL-terminated string of the process's memory (at most AUXV_STRING_MAX bytes), or NULL when unreadable. */
#define AUXV_STRING_MAX 256
static char *read_string(const struct mem_reader *mem, unsigned long long addr)
{
    char buf[AUXV_STRING_MAX];
    for (size_t i = 0; i < sizeof buf; i++) {
        if (mem_read(mem, addr + i, &buf[i], 1) < 0) return NULL;
        if (!buf[i]) return strdup(buf);
    }
    return NULL; /* no end within the bound: not a string we show */
}

/* The strings the auxiliary vector points to, from the core's memory (the stack's top holds them). */
static void read_auxv_strings(struct core_report *r, const struct mem_reader *mem)
{
    if (!r->notes.nauxv || !(r->auxv_strings = calloc((size_t)r->notes.nauxv, sizeof *r->auxv_strings))) return;
    for (int i = 0; i < r->notes.nauxv; i++)
        if (core_auxv_format(r->notes.auxv[i].type) == AUXV_STR && r->notes.auxv[i].value)
            r->auxv_strings[i] = read_string(mem, r->notes.auxv[i].value);
}

static void read_contents(struct core_report *r, int fd, struct modules *m, struct symbolizer *sy,
                          const struct core_options *o)
{
    struct core_memory cm = {fd, &r->notes, modules_dwfl(m)};
    struct mem_reader mem = core_memory_reader(&cm);
    unsigned long long *also = NULL, malloc_addr = 0;
    size_t nalso = 0, cap = 0;
    goroutines_read(m, &mem, &r->goroutines);
    if (o->heap && r->goroutines.go)
        snprintf(r->heap.why_not, sizeof r->heap.why_not, "a Go program: its heap is the Go runtime's, not malloc's");
    else if (o->heap)
        core_heap_find(modules_dwfl(m), &r->heap, &malloc_addr);
    if (goroutines_addresses(&r->goroutines, &also, &nalso, &cap) < 0) nalso = 0;
    if (malloc_addr && GROW(also, cap, nalso, 16) == 0) also[nalso++] = malloc_addr; /* malloc.c: the heap's layout */
    stack_name_frames(m, also, nalso, sy, &r->stacks, o->source);
    free(also);
    goroutines_name(sy, &r->goroutines, o->source);
    waited_when_taken(r);
    core_heap_read(m, malloc_addr, &mem, &r->notes, &r->heap);
    mark_signal_thread(r);
    list_modules(modules_dwfl(m), r);
    read_auxv_strings(r, &mem);
}

int core_report_read(const char *path, const struct core_options *o, struct core_report *r, char *err,
                     size_t errlen)
{
    memset(r, 0, sizeof *r);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %m", path);
        return -1;
    }
    int rc = core_report_read_fd(fd, path, o, r, err, errlen);
    close(fd);
    return rc;
}

int core_report_read_fd(int fd, const char *path, const struct core_options *o, struct core_report *r, char *err,
                        size_t errlen)
{
    memset(r, 0, sizeof *r);
    char why[256];
    if (core_notes_read(fd, &r->notes, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s: %s", path, why);
        return -1;
    }
    fill_identity(r);
    elf_version(EV_CURRENT);
    Elf *core = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    struct modules *m = core ? modules_new_core(core, r->stacks.pid, o->exe, o->sysroot, why, sizeof why) : NULL;
    struct symbolizer *sy = m ? symbolizer_new(m) : NULL;
    int rc = -1;
    if (!core) snprintf(err, errlen, "%s: %s", path, elf_errmsg(-1));
    else if (!m || !sy) snprintf(err, errlen, "%s: %s", path, m ? "out of memory" : why);
    else if (unwind_threads(modules_dwfl(m), core, r, why, sizeof why) < 0) snprintf(err, errlen, "%s: %s", path, why);
    else {
        read_contents(r, fd, m, sy, o);
        rc = 0;
    }
    symbolizer_free(sy);
    modules_free(m);
    elf_end(core);
    if (rc < 0) core_report_free(r);
    return rc;
}

void core_report_free(struct core_report *r)
{
    for (int i = 0; i < r->nmodules; i++) {
        free(r->modules[i].name);
        free(r->modules[i].file);
        free(r->modules[i].debug_file);
    }
    free(r->modules);
    for (int i = 0; r->auxv_strings && i < r->notes.nauxv; i++) free(r->auxv_strings[i]);
    free(r->auxv_strings);
    goroutines_free(&r->goroutines);
    glibc_heap_free(&r->heap.h);
    stack_result_free(&r->stacks);
    core_notes_free(&r->notes);
    memset(r, 0, sizeof *r);
}
