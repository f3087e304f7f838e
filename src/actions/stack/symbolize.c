#include "symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "dwarf_scopes.h"
#include "gopclntab.h"
#include "modules.h"

#define CACHE_BUCKETS 1024
#define MAX_INLINE 16

struct cached {
    unsigned long long pc;
    int return_address, want_source;
    int n;
    struct stack_frame frames[MAX_INLINE + 1];
    struct cached *next;
};

struct symbolizer {
    struct modules *m;
    unsigned generation; /* of the modules the cache was filled from */
    struct cached *buckets[CACHE_BUCKETS];
    struct dwarf_scopes *scopes; /* each unit's functions, indexed on first use */
};

void stack_frame_clear(struct stack_frame *f)
{
    free(f->function);
    free(f->file);
    free(f->module);
    memset(f, 0, sizeof *f);
}

static void cache_clear(struct symbolizer *sy)
{
    for (int i = 0; i < CACHE_BUCKETS; i++) {
        for (struct cached *c = sy->buckets[i], *next; c; c = next) {
            next = c->next;
            for (int k = 0; k < c->n; k++) stack_frame_clear(&c->frames[k]);
            free(c);
        }
        sy->buckets[i] = NULL;
    }
    dwarf_scopes_clear(sy->scopes);
}

struct symbolizer *symbolizer_new(struct modules *m)
{
    struct symbolizer *sy = calloc(1, sizeof *sy);
    if (!sy || !(sy->scopes = dwarf_scopes_new())) {
        free(sy);
        return NULL;
    }
    sy->m = m;
    sy->generation = modules_generation(m);
    return sy;
}

void symbolizer_free(struct symbolizer *sy)
{
    if (!sy) return;
    cache_clear(sy);
    dwarf_scopes_free(sy->scopes);
    free(sy);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static char *basename_dup(const char *path)
{
    if (!path) return NULL;
    const char *slash = strrchr(path, '/');
    return strdup(slash ? slash + 1 : path);
}

/* The name of a function's DIE as eu-stack and gdb show it: the linkage name (the symbol, so C++ overloads and
 * glibc's internal aliases are told apart), else DW_AT_name; both through DW_AT_abstract_origin and
 * DW_AT_specification, since inlined instances and out-of-line definitions carry neither themselves. */
static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
    if (!name) name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
    if (!name) name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
    return name;
}

/* File name number idx of the CU's line table. */
static const char *cu_file(Dwarf_Die *cu, Dwarf_Word idx)
{
    Dwarf_Files *files;
    size_t nfiles;
    if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || idx >= nfiles) return NULL;
    return dwarf_filesrc(files, idx, NULL, NULL);
}

/* The chain of DIEs containing addr, innermost first, up to its function, the way eu-stack -i finds it: the
 * innermost function-like scope of dwarf_getscopes (which continues past an inlined call into its abstract
 * definition), then dwarf_getscopes_die (which follows where it was inlined). Both walk the unit from its start:
 * only for what the index of functions does not hold. */
static int chain_at(struct symbolizer *sy, Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die **chain)
{
    int n = dwarf_scopes_chain(sy->scopes, cu, addr, chain);
    if (n != 0) return n;
    Dwarf_Die *scopes = NULL, *inner = NULL;
    int nscopes = dwarf_getscopes(cu, addr, &scopes);
    for (int i = 0; i < nscopes && !inner; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine || tag == DW_TAG_entry_point)
            inner = &scopes[i];
    }
    n = inner ? dwarf_getscopes_die(inner, chain) : 0;
    free(scopes);
    return n;
}

/* A file name of a Go program's tables as libdw gives DWARF's: a relative one joined to the unit's directory,
 * which Go's linker writes as ".". */
static char *go_file(const char *name)
{
    if (name[0] == '/') return strdup(name);
    char *joined = malloc(strlen(name) + 3);
    if (joined) {
        memcpy(joined, "./", 2);
        strcpy(joined + 2, name);
    }
    return joined;
}

/* A PC of a Go program from its own tables, as its DWARF would name it (gopclntab.h): 1 + the inlined calls; -1
 * when no function of the tables holds it (the C of runtime/cgo: Go's linker keeps no DWARF of it either), 0 when
 * they cannot say (then its DWARF is asked). */
static int lookup_go(const struct gopclntab *go, Dwarf_Addr bias, Dwfl_Module *mod, struct stack_frame *base,
                     Dwarf_Addr addr, int want_source, struct stack_frame *out, int max)
{
    struct gopclntab_func fn;
    struct gopclntab_frame fr[MAX_INLINE + 1];
    if (gopclntab_find(go, addr - bias, &fn) < 0) return -1;
    int nfr = gopclntab_frames(go, &fn, addr - bias, fr, max < MAX_INLINE + 1 ? max : MAX_INLINE + 1);
    if (nfr <= 0) return 0;
    /* The tables shorten the type arguments of generic functions and of some generated ones to "[...]"; DWARF
     * and the symbol table have them in full. */
    for (int i = 0; i < nfr - 1; i++)
        if (strstr(fr[i].function, "[...]")) return 0;
    if (strstr(fr[nfr - 1].function, "[...]")) {
        GElf_Off off;
        GElf_Sym sym;
        const char *symbol = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
        if (!symbol || addr - off != fn.entry + bias) return 0;
        fr[nfr - 1].function = symbol;
    }
    base->offset = base->pc - (fn.entry + bias);
    int n = 0;
    if (want_source)
        for (; n < nfr - 1; n++)
            out[n] = (struct stack_frame){base->pc, 1, demangle_dup(fr[n].function), 0, go_file(fr[n].file),
                                          fr[n].line, dup_or_null(base->module)};
    base->function = demangle_dup(fr[nfr - 1].function);
    if (want_source) {
        base->file = go_file(fr[nfr - 1].file);
        base->line = fr[nfr - 1].line;
    }
    out[n++] = *base;
    return n;
}

/* Fills frames for pc: the chain of inlined calls from libdw's scopes (innermost first), then the function that
 * contains them. Names come from DWARF where there is any, else from the symbol table. */
static int lookup_uncached(struct symbolizer *sy, unsigned long long pc, int return_address, int want_source,
                           struct stack_frame *out, int max)
{
    Dwarf_Addr addr = return_address && pc > 0 ? pc - 1 : pc;
    /* No Dwfl when the modules' last rebuild failed; libdwfl's dwfl_addrmodule(NULL, ...) returns stack garbage. */
    Dwfl *dwfl = modules_dwfl(sy->m);
    Dwfl_Module *mod = dwfl ? dwfl_addrmodule(dwfl, addr) : NULL;
    struct stack_frame base = {.pc = pc};
    if (!mod) {
        out[0] = base;
        return 1;
    }
    Dwarf_Addr mod_start;
    const char *mod_name = dwfl_module_info(mod, NULL, &mod_start, NULL, NULL, NULL, NULL, NULL);
    base.module = basename_dup(mod_name);
    Dwarf_Addr go_bias;
    const struct gopclntab *go = modules_go(mod, &go_bias);
    int go_n = go ? lookup_go(go, go_bias, mod, &base, addr, want_source, out, max) : 0;
    if (go_n > 0) return go_n;
    GElf_Off sym_off = 0;
    GElf_Sym sym;
    const char *symbol = dwfl_module_addrinfo(mod, addr, &sym_off, &sym, NULL, NULL, NULL);
    base.offset = symbol ? pc - (addr - sym_off) : pc - mod_start;

    /* Inlined calls, innermost first, up to the function that contains them. */
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = go_n < 0 ? NULL : modules_addrdie(sy->m, mod, addr, &bias);
    Dwarf_Die *chain = NULL;
    int nchain = cu ? chain_at(sy, cu, addr - bias, &chain) : 0;
    if (nchain < 0) nchain = 0;
    const char *function = NULL;
    for (int i = 0; i < nchain && !function; i++)
        if (dwarf_tag(&chain[i]) == DW_TAG_subprogram || dwarf_tag(&chain[i]) == DW_TAG_entry_point)
            function = die_name(&chain[i]);
    base.function = demangle_dup(function ? function : symbol);

    int n = 0;
    if (want_source && cu) {
        Dwarf_Line *where = dwarf_getsrc_die(cu, addr - bias);
        char *file = where ? dup_or_null(dwarf_linesrc(where, NULL, NULL)) : NULL;
        int line = 0;
        if (where) dwarf_lineno(where, &line);
        /* Each inlined call is a frame whose caller is the next scope, called from its
         * DW_AT_call_file:DW_AT_call_line; the containing function sits at the outermost inlined call's site. */
        for (int i = 0; i < nchain && n < max - 1 && n < MAX_INLINE; i++) {
            int tag = dwarf_tag(&chain[i]);
            if (tag == DW_TAG_subprogram || tag == DW_TAG_entry_point) break;
            if (tag != DW_TAG_inlined_subroutine) continue;
            out[n++] = (struct stack_frame){pc, 1, demangle_dup(die_name(&chain[i])), 0, file, line,
                                            dup_or_null(base.module)};
            Dwarf_Attribute attr;
            Dwarf_Word cf = 0, cl = 0;
            if (dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_file, &attr), &cf) == 0)
                file = dup_or_null(cu_file(cu, cf));
            else
                file = NULL;
            line = dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_line, &attr), &cl) == 0 ? (int)cl : 0;
        }
        base.file = file;
        base.line = line;
    }
    free(chain);
    out[n++] = base;
    return n;
}

static struct stack_frame copy_frame(const struct stack_frame *f)
{
    struct stack_frame c = *f;
    c.function = dup_or_null(f->function);
    c.file = dup_or_null(f->file);
    c.module = dup_or_null(f->module);
    return c;
}

int symbolizer_lookup(struct symbolizer *sy, unsigned long long pc, int return_address, int want_source,
                      struct stack_frame *out, int max)
{
    if (max <= 0) return 0;
    if (sy->generation != modules_generation(sy->m)) { /* the mappings changed: old answers may be wrong */
        cache_clear(sy);
        sy->generation = modules_generation(sy->m);
    }
    struct cached **b = &sy->buckets[(pc >> 2) % CACHE_BUCKETS];
    struct cached *c;
    for (c = *b; c; c = c->next)
        if (c->pc == pc && c->return_address == return_address && c->want_source == want_source) break;
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c) return 0;
        c->pc = pc;
        c->return_address = return_address;
        c->want_source = want_source;
        c->n = lookup_uncached(sy, pc, return_address, want_source, c->frames, MAX_INLINE + 1);
        c->next = *b;
        *b = c;
    }
    int n = c->n < max ? c->n : max;
    for (int i = 0; i < n; i++) out[i] = copy_frame(&c->frames[i]);
    return n;
}
