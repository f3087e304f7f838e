#include "go_runtime.h"

#include "dwarf_layout.h"
#include "util/arena.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GOROUTINES (1 << 22) /* allglen beyond this is not believed: a corrupt or hostile image */
#define MAX_G_SIZE 65536
#define GSCAN 0x1000             /* _Gscan: the GC is scanning the stack; the status is the rest */

/* ---- the layout, from DWARF ---- */

enum { V_ALLGS, V_ALLGLEN, V_WAIT_REASONS, V_INIT_TIME, S_G, NWANTED };
static const struct {
    const char *name;
    int tag;
} wanted[NWANTED] = {
    {"runtime.allgs", DW_TAG_variable},
    {"runtime.allglen", DW_TAG_variable},
    {"runtime.waitReasonStrings", DW_TAG_variable},
    {"runtime.runtimeInitTime", DW_TAG_variable},
    {"runtime.g", DW_TAG_structure_type},
};

/* The top-level DIEs named in wanted, in one pass over the compilation units (Go puts the runtime's types in the
 * runtime's unit, its variables where they are declared). found[i] says which were. */
static void find_wanted(Dwarf *dw, Dwarf_Die *dies, int *found)
{
    Dwarf_Off off = 0, next;
    size_t hsize;
    int left = NWANTED;
    while (left && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu, child;
        if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &child) == 0) do {
                const char *name = dwarf_diename(&child);
                if (!name || strncmp(name, "runtime.", 8) != 0) continue;
                for (int i = 0; i < NWANTED; i++)
                    if (!found[i] && dwarf_tag(&child) == wanted[i].tag && strcmp(name, wanted[i].name) == 0) {
                        dies[i] = child;
                        found[i] = 1;
                        left--;
                    }
            } while (left && dwarf_siblingof(&child, &child) == 0);
        off = next;
    }
}

/* runtime.g's fields, and those of the structs it holds (sched: runtime.gobuf; m: *runtime.m). */
static const char *read_g(Dwarf_Die *g, struct go_layout *l)
{
    Dwarf_Die gobuf, mptr, m, stack;
    size_t sched, at;
    if (dwarf_layout_size(g, &l->g_size) < 0 || l->g_size > MAX_G_SIZE) return "runtime.g has no size";
    if (dwarf_layout_member(g, "goid", 8, &l->goid, NULL) < 0) return "runtime.g.goid";
    if (dwarf_layout_member(g, "atomicstatus", 4, &l->status, NULL) < 0) return "runtime.g.atomicstatus";
    if (dwarf_layout_member(g, "waitreason", 1, &l->wait_reason, NULL) < 0) return "runtime.g.waitreason";
    if (dwarf_layout_member(g, "waitsince", 8, &l->wait_since, NULL) < 0) return "runtime.g.waitsince";
    if (dwarf_layout_member(g, "gopc", 8, &l->gopc, NULL) < 0) return "runtime.g.gopc";
    if (dwarf_layout_member(g, "startpc", 8, &l->startpc, NULL) < 0) return "runtime.g.startpc";
    if (dwarf_layout_member(g, "syscallsp", 8, &l->syscall_sp, NULL) < 0) return "runtime.g.syscallsp";
    if (dwarf_layout_member(g, "syscallpc", 8, &l->syscall_pc, NULL) < 0) return "runtime.g.syscallpc";
    if (dwarf_layout_member(g, "sched", 0, &sched, &gobuf) < 0) return "runtime.g.sched";
    if (dwarf_layout_member(&gobuf, "sp", 8, &at, NULL) < 0) return "runtime.gobuf.sp";
    l->sched_sp = sched + at;
    if (dwarf_layout_member(&gobuf, "pc", 8, &at, NULL) < 0) return "runtime.gobuf.pc";
    l->sched_pc = sched + at;
    if (dwarf_layout_member(&gobuf, "bp", 8, &at, NULL) < 0) return "runtime.gobuf.bp";
    l->sched_bp = sched + at;
    if (dwarf_layout_member(g, "stack", 0, &sched, &stack) < 0 || dwarf_layout_member(&stack, "hi", 8, &at, NULL) < 0)
        return "runtime.g.stack.hi";
    l->stack_hi = sched + at;
    if (dwarf_layout_member(g, "m", 8, &l->m, &mptr) < 0 || dwarf_tag(&mptr) != DW_TAG_pointer_type || dwarf_layout_type(&mptr, &m) < 0 ||
        dwarf_layout_member(&m, "procid", 8, &l->m_procid, NULL) < 0)
        return "runtime.m.procid";
    return go_layout_check(l) < 0 ? "a field beyond runtime.g's size" : NULL;
}

int go_layout_check(const struct go_layout *l)
{
    const struct {
        size_t off, width;
    } fields[] = {{l->goid, 8},       {l->status, 4},     {l->wait_reason, 1}, {l->wait_since, 8},
                  {l->gopc, 8},       {l->startpc, 8},    {l->m, 8},           {l->sched_sp, 8},
                  {l->sched_pc, 8},   {l->sched_bp, 8},   {l->syscall_sp, 8},  {l->syscall_pc, 8},
                  {l->stack_hi, 8}};
    if (l->g_size == 0 || l->g_size > MAX_G_SIZE) return -1;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (fields[i].off > l->g_size || fields[i].width > l->g_size - fields[i].off) return -1;
    return 0;
}

int go_layout_read(Dwarf *dw, unsigned long long bias, struct go_layout *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    Dwarf_Die dies[NWANTED];
    int found[NWANTED] = {0};
    if (!dw) {
        snprintf(err, errlen, "no DWARF (a stripped binary?)");
        return -1;
    }
    find_wanted(dw, dies, found);
    if (!found[V_ALLGS] || !found[V_ALLGLEN] || !found[S_G]) {
        snprintf(err, errlen, "no runtime.allgs, runtime.allglen or runtime.g in its DWARF: not Go, or stripped of it");
        return -1;
    }
    const char *bad = NULL;
    if (dwarf_layout_address(&dies[V_ALLGS], bias, &out->allgs) < 0) bad = "runtime.allgs's address";
    else if (dwarf_layout_address(&dies[V_ALLGLEN], bias, &out->allglen) < 0) bad = "runtime.allglen's address";
    else bad = read_g(&dies[S_G], out);
    if (bad) {
        snprintf(err, errlen, "an unknown runtime layout (%s is missing or of another size)", bad);
        return -1;
    }
    Dwarf_Die type;
    size_t size;
    if (found[V_WAIT_REASONS] && dwarf_layout_address(&dies[V_WAIT_REASONS], bias, &out->wait_reasons) == 0 &&
        dwarf_layout_type(&dies[V_WAIT_REASONS], &type) == 0 && dwarf_tag(&type) == DW_TAG_array_type &&
        dwarf_layout_size(&type, &size) == 0)
        out->nwait_reasons = (int)(size / 16); /* [N]string: {data, len} each */
    else
        out->wait_reasons = 0;
    if (!found[V_INIT_TIME] || dwarf_layout_address(&dies[V_INIT_TIME], bias, &out->init_time) < 0) out->init_time = 0;
    return 0;
}

/* ---- the goroutines, from memory ---- */

static unsigned long long word_at(const unsigned char *g, size_t off)
{
    unsigned long long v;
    memcpy(&v, g + off, sizeof v);
    return v;
}

/* waitReasonStrings[reason] (the runtime's words for it) into out; "" when it cannot be read. */
static void wait_reason_name(const struct go_layout *l, const struct mem_reader *mem, unsigned reason, char *out,
                             size_t outsz)
{
    unsigned long long s[2];
    out[0] = '\0';
    if (!l->wait_reasons || (int)reason >= l->nwait_reasons ||
        mem_read(mem, l->wait_reasons + 16ULL * reason, s, sizeof s) < 0)
        return;
    size_t len = s[1] < outsz - 1 ? (size_t)s[1] : outsz - 1;
    if (len && mem_read(mem, s[0], out, len) < 0) len = 0;
    out[len] = '\0';
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] >= 0x7f) out[i] = '?'; /* the runtime's are ASCII */
}

static void fill_goroutine(const struct go_layout *l, const struct mem_reader *mem, const unsigned char *g,
                           long long init_time, char (*reasons)[48], struct go_goroutine *out)
{
    unsigned status;
    memcpy(&status, g + l->status, sizeof status);
    status &= ~(unsigned)GSCAN;
    *out = (struct go_goroutine){
        .id = (long long)word_at(g, l->goid), .status = status, .waiting_since_s = -1,
        .pc = word_at(g, l->sched_pc), .sp = word_at(g, l->sched_sp), .bp = word_at(g, l->sched_bp),
        .gopc = word_at(g, l->gopc), .startpc = word_at(g, l->startpc), .stack_hi = word_at(g, l->stack_hi)};
    if (status == GO_SYSCALL) { /* its sched is stale: the system call's entry is where it stands */
        out->pc = word_at(g, l->syscall_pc);
        out->sp = word_at(g, l->syscall_sp);
        out->bp = 0;
    }
    long long since = (long long)word_at(g, l->wait_since);
    if (status == GO_WAITING) {
        unsigned reason = g[l->wait_reason];
        if (reason < 64 && !reasons[reason][0]) wait_reason_name(l, mem, reason, reasons[reason], sizeof reasons[0]);
        if (reason < 64) snprintf(out->wait_reason, sizeof out->wait_reason, "%s", reasons[reason]);
        if (since > 0) out->wait_since_ns = since;
        if (since > 0 && init_time > 0 && since >= init_time) out->waiting_since_s = (double)(since - init_time) / 1e9;
    }
    unsigned long long m = word_at(g, l->m), procid;
    if (m && (status == GO_RUNNING || status == GO_SYSCALL) && mem_read(mem, m + l->m_procid, &procid, 8) == 0)
        out->tid = (int)procid;
}

static int by_address(const void *a, const void *b)
{
    unsigned long long x = **(const unsigned long long *const *)a, y = **(const unsigned long long *const *)b;
    return x < y ? -1 : x > y;
}

#define G_RUN_MAX (256u << 10) /* bytes of neighbouring g's read as one range */

/* Every g (addresses gs[i], 0: none) read, spans[i] saying where (in *run_bytes, freed by the caller unless
 * scratch holds it; else g + i * g_size) and whether. The runtime allocates
 * g's next to one another: neighbours are read as one range (each range a span: a live process's reader takes
 * them all in one system call), so the kernel walks a page once, not once per g. A range that cannot be read is
 * read again g by g. */
static void read_gs(const struct go_layout *l, const struct mem_reader *mem, struct arena *scratch,
                    const unsigned long long *gs, size_t len, unsigned char *g, struct mem_span *spans,
                    unsigned char **run_bytes)
{
    const unsigned long long **order = malloc((len ? len : 1) * sizeof *order);
    struct mem_span *runs = calloc(len ? len : 1, sizeof *runs);
    size_t nruns = 0, total = 0;
    unsigned char *bytes = NULL;
    for (size_t i = 0; order && i < len; i++) order[i] = &gs[i];
    if (order) qsort(order, len, sizeof *order, by_address);
    /* the ranges: sorted g's whose gaps are under one g */
    for (size_t i = 0; order && runs && i < len;) {
        size_t j = i;
        if (!*order[i]) { i++; continue; }
        unsigned long long start = *order[i], end = start + l->g_size;
        while (j + 1 < len && *order[j + 1] <= end + l->g_size && *order[j + 1] + l->g_size - start <= G_RUN_MAX)
            end = *order[++j] + l->g_size > end ? *order[j] + l->g_size : end;
        runs[nruns++] = (struct mem_span){start, (void *)(uintptr_t)total, (size_t)(end - start), 0};
        total += (size_t)(end - start);
        i = j + 1;
    }
    if (order && runs && ((bytes = arena_take(scratch, total)) || (bytes = malloc(total ? total : 1)))) {
        for (size_t r = 0; r < nruns; r++) runs[r].buf = bytes + (uintptr_t)runs[r].buf;
        mem_read_spans(mem, runs, nruns);
    }
    size_t r = 0;
    for (size_t k = 0; k < len; k++) { /* in address order, runs too */
        size_t i = order ? (size_t)(order[k] - gs) : k;
        spans[i] = (struct mem_span){gs[i], g + i * l->g_size, l->g_size, 0};
        if (!gs[i]) continue;
        while (bytes && r < nruns && gs[i] >= runs[r].addr + runs[r].len) r++;
        if (bytes && r < nruns && runs[r].ok && gs[i] >= runs[r].addr) { /* read where it lies in its range */
            spans[i].buf = (unsigned char *)runs[r].buf + (gs[i] - runs[r].addr);
            spans[i].ok = 1;
        } else {
            spans[i].ok = mem_read(mem, gs[i], spans[i].buf, l->g_size) == 0;
        }
    }
    *run_bytes = bytes;
    free(runs);
    free(order);
}

long long go_goroutines_count(const struct go_layout *l, const struct mem_reader *mem)
{
    unsigned long long len;
    return mem_read(mem, l->allglen, &len, sizeof len) == 0 && len <= MAX_GOROUTINES ? (long long)len : -1;
}

int go_goroutines_read(const struct go_layout *l, const struct mem_reader *mem, struct arena *scratch,
                       struct go_goroutine **out, int *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    if (go_layout_check(l) < 0) {
        snprintf(err, errlen, "an unknown runtime layout (a field beyond runtime.g's size)");
        return -1;
    }
    unsigned long long len, slice[3]; /* allglen first: the slice's entries below it are published */
    if (mem_read(mem, l->allglen, &len, sizeof len) < 0 || mem_read(mem, l->allgs, slice, sizeof slice) < 0) {
        snprintf(err, errlen, "cannot read runtime.allgs");
        return -1;
    }
    if (len > slice[1]) len = slice[1];
    if (len > MAX_GOROUTINES) {
        snprintf(err, errlen, "runtime.allglen says %llu goroutines: not believed", len);
        return -1;
    }
    unsigned long long *gs = malloc((len ? len : 1) * sizeof *gs);
    unsigned char *g = malloc((len ? len : 1) * l->g_size); /* every g, read together */
    struct mem_span *spans = calloc(len ? len : 1, sizeof *spans);
    struct go_goroutine *list = calloc(len ? len : 1, sizeof *list);
    char(*reasons)[48] = calloc(64, sizeof *reasons);
    long long init_time = 0;
    int rc = 0;
    if (!gs || !g || !spans || !list || !reasons) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    } else if (len && mem_read(mem, slice[0], gs, len * sizeof *gs) < 0) {
        snprintf(err, errlen, "cannot read the %llu entries of runtime.allgs at 0x%llx", len, slice[0]);
        rc = -1;
    }
    if (rc == 0 && l->init_time && mem_read(mem, l->init_time, &init_time, sizeof init_time) < 0) init_time = 0;
    unsigned char *run_bytes = NULL;
    if (rc == 0) read_gs(l, mem, scratch, gs, (size_t)len, g, spans, &run_bytes);
    for (size_t i = 0; rc == 0 && i < len; i++) {
        if (!spans[i].ok) continue; /* unreadable: not shown, never guessed */
        fill_goroutine(l, mem, spans[i].buf, init_time, reasons, &list[*n]);
        if (list[*n].status != GO_DEAD && list[*n].status != GO_IDLE) (*n)++;
    }
    free(gs);
    free(g);
    free(spans);
    if (!arena_owns(scratch, run_bytes)) free(run_bytes);
    free(reasons);
    if (rc < 0) {
        free(list);
        *n = 0;
        return -1;
    }
    *out = list;
    return 0;
}

const char *go_status_name(unsigned status)
{
    switch (status) {
    case GO_IDLE: return "idle";
    case GO_RUNNABLE: return "runnable";
    case GO_RUNNING: return "running";
    case GO_SYSCALL: return "syscall";
    case GO_WAITING: return "waiting";
    case GO_DEAD: return "dead";
    case GO_COPYSTACK: return "copystack";
    case GO_PREEMPTED: return "preempted";
    default: return "unknown status";
    }
}
