#include "symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debuginfo_cache.h"

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
    int pid;
    Dwfl *dwfl;
    struct cached *buckets[CACHE_BUCKETS];
};

static const Dwfl_Callbacks proc_callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = debuginfo_cache_find, /* dwfl_standard_find_debuginfo with a decompressed-copy cache */
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
}

int symbolizer_refresh(struct symbolizer *sy, char *err, size_t errlen)
{
    cache_clear(sy);
    if (sy->dwfl) dwfl_end(sy->dwfl);
    sy->dwfl = dwfl_begin(&proc_callbacks);
    if (!sy->dwfl) {
        snprintf(err, errlen, "libdw: %s", dwfl_errmsg(-1));
        return -ENOMEM;
    }
    dwfl_report_begin(sy->dwfl);
    int rc = dwfl_linux_proc_report(sy->dwfl, sy->pid);
    dwfl_report_end(sy->dwfl, NULL, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "cannot read the mappings of %d: %s", sy->pid,
                 rc > 0 ? strerror(rc) : dwfl_errmsg(-1));
        return rc > 0 ? -rc : -EIO;
    }
    return 0;
}

struct symbolizer *symbolizer_new(int pid, char *err, size_t errlen)
{
    struct symbolizer *sy = calloc(1, sizeof *sy);
    if (!sy) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    sy->pid = pid;
    if (symbolizer_refresh(sy, err, errlen) < 0) {
        symbolizer_free(sy);
        return NULL;
    }
    return sy;
}

void symbolizer_free(struct symbolizer *sy)
{
    if (!sy) return;
    cache_clear(sy);
    if (sy->dwfl) dwfl_end(sy->dwfl);
    free(sy);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static char *basename_dup(const char *path)
{
    if (!path) return NULL;
    const char *slash = strrchr(path, '/');
    return strdup(slash ? slash + 1 : path);
}

/* The name of a DIE, following DW_AT_abstract_origin / DW_AT_specification (inlined instances carry no name). */
static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    const char *name = dwarf_diename(die);
    if (name) return name;
    Dwarf_Die origin;
    if (dwarf_attr_integrate(die, DW_AT_name, &attr)) return dwarf_formstring(&attr);
    if (dwarf_attr(die, DW_AT_abstract_origin, &attr) && dwarf_formref_die(&attr, &origin)) return die_name(&origin);
    return NULL;
}

/* File name number idx of the CU's line table. */
static const char *cu_file(Dwarf_Die *cu, Dwarf_Word idx)
{
    Dwarf_Files *files;
    size_t nfiles;
    if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || idx >= nfiles) return NULL;
    return dwarf_filesrc(files, idx, NULL, NULL);
}

/* Fills frames for pc: the inlined chain from libdw's scopes, then the containing function. */
static int lookup_uncached(struct symbolizer *sy, unsigned long long pc, int return_address, int want_source,
                           struct stack_frame *out, int max)
{
    Dwarf_Addr addr = return_address && pc > 0 ? pc - 1 : pc;
    Dwfl_Module *mod = dwfl_addrmodule(sy->dwfl, addr);
    struct stack_frame base = {.pc = pc};
    if (!mod) {
        out[0] = base;
        return 1;
    }
    Dwarf_Addr mod_start;
    const char *mod_name = dwfl_module_info(mod, NULL, &mod_start, NULL, NULL, NULL, NULL, NULL);
    base.module = basename_dup(mod_name);
    GElf_Off sym_off = 0;
    GElf_Sym sym;
    const char *fn = dwfl_module_addrinfo(mod, addr, &sym_off, &sym, NULL, NULL, NULL);
    if (fn) {
        base.function = strdup(fn);
        base.offset = pc - (addr - sym_off);
    } else {
        base.offset = pc - mod_start;
    }
    if (want_source) {
        Dwfl_Line *line = dwfl_module_getsrc(mod, addr);
        int lineno = 0;
        const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
        base.file = dup_or_null(file);
        base.line = lineno;
    }
    int n = 0;
    if (want_source) {
        /* Scopes run from the innermost: each inlined subroutine is a frame whose caller is the next scope,
         * called from DW_AT_call_file:DW_AT_call_line. */
        Dwarf_Addr bias;
        Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias);
        Dwarf_Die *scopes = NULL;
        int nscopes = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
        char *file = base.file ? strdup(base.file) : NULL;
        int line = base.line;
        for (int i = 0; i < nscopes && n < max - 1 && n < MAX_INLINE; i++) {
            if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine) continue;
            const char *name = die_name(&scopes[i]);
            out[n++] = (struct stack_frame){pc, 1, dup_or_null(name), 0, file, line, dup_or_null(base.module)};
            Dwarf_Attribute attr;
            Dwarf_Word cf = 0, cl = 0;
            if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr), &cf) == 0)
                file = dup_or_null(cu_file(cu, cf));
            else
                file = NULL;
            line = dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &cl) == 0 ? (int)cl : 0;
        }
        free(scopes);
        if (n > 0) { /* the outermost function sits at the last inlined call's call site */
            free(base.file);
            base.file = file;
            base.line = line;
        } else {
            free(file);
        }
    }
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
