#include "symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debuginfo_cache.h"
#include "demangle.h"
#include "dwarf_scopes.h"
#include "frame_cache.h"
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

/* A module's frames kept across runs (NULL: none, it has no build-id or the cache is off). */
struct module_frames {
    Dwfl_Module *mod;
    struct frame_cache *fc;
};

struct symbolizer {
    struct modules *m;
    unsigned generation; /* of the modules the cache was filled from */
    struct cached *buckets[CACHE_BUCKETS];
    struct dwarf_scopes *scopes; /* each unit's functions, indexed on first use */
    struct module_frames *kept;  /* one per module looked up */
    size_t nkept, cap_kept;
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
    for (size_t i = 0; i < sy->nkept; i++) frame_cache_close(sy->kept[i].fc); /* writes what was learnt */
    free(sy->kept);
    sy->kept = NULL;
    sy->nkept = sy->cap_kept = 0;
}

/* Whether the module's own file carries DWARF (not only a separate debug file). */
static int has_own_dwarf(Dwfl_Module *mod)
{
    Dwarf_Addr bias;
    Elf *elf = dwfl_module_getelf(mod, &bias);
    size_t shstrndx;
    if (!elf || elf_getshdrstrndx(elf, &shstrndx) < 0) return 0;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
        if (n && strcmp(n, ".debug_info") == 0 && sh.sh_type != SHT_NOBITS) return 1;
    }
    return 0;
}

/* The kept frames of mod, opened on its first lookup. */
static struct frame_cache *kept_frames(struct symbolizer *sy, Dwfl_Module *mod)
{
    for (size_t i = 0; i < sy->nkept; i++)
        if (sy->kept[i].mod == mod) return sy->kept[i].fc;
    if (sy->nkept == sy->cap_kept) {
        size_t c = sy->cap_kept ? sy->cap_kept * 2 : 16;
        struct module_frames *k = realloc(sy->kept, c * sizeof *k);
        if (!k) return NULL;
        sy->kept = k;
        sy->cap_kept = c;
    }
    char hex[132], name[160];
    struct frame_cache *fc = NULL;
    if (debuginfo_cache_build_id(mod, hex, sizeof hex) == 0) {
        /* A stripped copy has its original's build-id but not its DWARF: each is kept apart, so that a run shows
         * what it would have shown without the kept frames. */
        snprintf(name, sizeof name, "%s.%s", hex, has_own_dwarf(mod) ? "own" : "sep");
        fc = frame_cache_open(name);
    }
    sy->kept[sy->nkept++] = (struct module_frames){mod, fc};
    return fc;
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

/* The inlined calls at addr as frames (innermost first, at most max), each at the file:line it is in; what is left
 * for the containing function (the outermost inlined call's site) in *file and *line. */
static int inlined_frames(Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die *chain, int nchain, const struct stack_frame *base,
                          struct stack_frame *out, int max, char **file, int *line)
{
    Dwarf_Line *where = dwarf_getsrc_die(cu, addr);
    *file = where ? dup_or_null(dwarf_linesrc(where, NULL, NULL)) : NULL;
    *line = 0;
    if (where) dwarf_lineno(where, line);
    int n = 0;
    /* Each inlined call is a frame whose caller is the next scope, called from its
     * DW_AT_call_file:DW_AT_call_line; the containing function sits at the outermost inlined call's site. */
    for (int i = 0; i < nchain && n < max && n < MAX_INLINE; i++) {
        int tag = dwarf_tag(&chain[i]);
        if (tag == DW_TAG_subprogram || tag == DW_TAG_entry_point) break;
        if (tag != DW_TAG_inlined_subroutine) continue;
        out[n++] = (struct stack_frame){base->pc, 1, demangle_dup(die_name(&chain[i])), 0, *file, *line,
                                        dup_or_null(base->module)};
        Dwarf_Attribute attr;
        Dwarf_Word cf = 0, cl = 0;
        *file = dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_file, &attr), &cf) == 0 ? dup_or_null(cu_file(cu, cf))
                                                                                      : NULL;
        *line = dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_line, &attr), &cl) == 0 ? (int)cl : 0;
    }
    return n;
}

/* The frames an earlier run learnt for pc in mod (0 when none), with this run's pc and module name. */
static int kept_lookup(struct frame_cache *fc, unsigned long long pc, unsigned long long off, int return_address,
                       int want_source, const char *module, struct stack_frame *out, int max)
{
    int n = frame_cache_get(fc, off, return_address, want_source, out, max);
    for (int i = 0; i < n; i++) {
        out[i].pc = pc;
        out[i].module = dup_or_null(module);
    }
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
 * contains them. Names come from DWARF where there is any, else from the symbol table. Asks the frames kept by
 * earlier runs first (the same build-id at the same offset has the same frames) and keeps what DWARF answered. */
static int lookup_uncached(struct symbolizer *sy, unsigned long long pc, int return_address, int want_source,
                           struct stack_frame *out, int max)
{
    Dwarf_Addr addr = symbolizer_address(pc, return_address);
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
    struct frame_cache *fc = kept_frames(sy, mod);
    int n = kept_lookup(fc, pc, pc - mod_start, return_address, want_source, base.module, out, max);
    if (n > 0) {
        free(base.module);
        return n;
    }
    Dwarf_Addr go_bias;
    const struct gopclntab *go = modules_go(mod, &go_bias);
    int go_n = go ? lookup_go(go, go_bias, mod, &base, addr, want_source, out, max) : 0;
    if (go_n > 0) return go_n;
    GElf_Off sym_off = 0;
    GElf_Sym sym;
    const char *symbol = dwfl_module_addrinfo(mod, addr, &sym_off, &sym, NULL, NULL, NULL);
    /* libdwfl falls back to the nearest symbol before addr when none covers it (a sizeless one, or from .dynsym
     * of a stripped library whose hidden functions lie between its exported ones): that name would be a lie, so a
     * name only when addr is inside the symbol, else module+offset. */
    if (symbol && (sym.st_size == 0 || sym_off >= sym.st_size)) symbol = NULL;
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
    if (want_source && cu) n = inlined_frames(cu, addr - bias, chain, nchain, &base, out, max - 1, &base.file, &base.line);
    free(chain);
    out[n++] = base;
    if (cu) frame_cache_put(fc, pc - mod_start, return_address, want_source, out, n); /* only answers from DWARF */
    return n;
}

/* A program rather than a library: ET_EXEC, or a PIE with an interpreter (libc.so.6 has one too; it exports no
 * allocator entry point, which is all this is asked for). */
static int is_program(Elf *elf)
{
    GElf_Ehdr eh;
    if (!gelf_getehdr(elf, &eh)) return 1;
    if (eh.e_type == ET_EXEC) return 1;
    size_t nph;
    if (elf_getphdrnum(elf, &nph) != 0) return 1;
    for (size_t i = 0; i < nph; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP) return 1;
    }
    return 0;
}

int symbolizer_library_exports(struct symbolizer *sy, unsigned long long pc, const char *const *names)
{
    Dwfl *dwfl = modules_dwfl(sy->m);
    Dwfl_Module *mod = dwfl ? dwfl_addrmodule(dwfl, pc) : NULL;
    GElf_Addr bias;
    Elf *elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
    if (!elf || is_program(elf)) return 0;
    int n = dwfl_module_getsymtab(mod);
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr at;
        GElf_Word shndx;
        const char *name = dwfl_module_getsym_info(mod, i, &sym, &at, &shndx, NULL, NULL);
        if (!name || sym.st_shndx == SHN_UNDEF || GELF_ST_BIND(sym.st_info) == STB_LOCAL) continue;
        for (int k = 0; names[k]; k++)
            if (strcmp(name, names[k]) == 0) return 1;
    }
    return 0;
}

static struct stack_frame copy_frame(const struct stack_frame *f)
{
    struct stack_frame c = *f;
    c.function = dup_or_null(f->function);
    c.file = dup_or_null(f->file);
    c.module = dup_or_null(f->module);
    return c;
}

unsigned long long symbolizer_address(unsigned long long pc, int return_address)
{
    return return_address && pc > 0 ? pc - 1 : pc; /* the call, not what follows it */
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
