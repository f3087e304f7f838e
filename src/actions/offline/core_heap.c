#include "core_heap.h"

#include <dwarf.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "actions/lang/dwarf_layout.h"
#include "actions/stack/debuginfo_cache.h"
#include "actions/stack/modules.h"
#include "util/fileio.h"

/* ---- which allocator ---- */

/* The address of the function malloc as this module defines and exports it (.dynsym), 0 when it does not: read
 * from the file's own symbols, so that no debug file is opened yet. */
static unsigned long long exported_malloc(Dwfl_Module *mod)
{
    Dwarf_Addr bias;
    Elf *elf = dwfl_module_getelf(mod, &bias);
    for (Elf_Scn *scn = elf ? elf_nextscn(elf, NULL) : NULL; scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        Elf_Data *d;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || sh.sh_entsize == 0 || !(d = elf_getdata(scn, NULL)))
            continue;
        for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym sym;
            const char *name = gelf_getsym(d, (int)i, &sym) ? elf_strptr(elf, sh.sh_link, sym.st_name) : NULL;
            if (name && strcmp(name, "malloc") == 0 && sym.st_shndx != SHN_UNDEF &&
                (GELF_ST_TYPE(sym.st_info) == STT_FUNC || GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC))
                return sym.st_value + bias;
        }
    }
    return 0;
}

struct allocator_search {
    char other[32];             /* an allocator that is not glibc's */
    unsigned long long libc_malloc;
};

static int look_at_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
    (void)userdata, (void)start;
    struct allocator_search *s = arg;
    const char *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name ? name : "";
    int is_libc = strncmp(base, "libc.so", 7) == 0 || strncmp(base, "libc-", 5) == 0;
    if (strstr(base, "jemalloc")) snprintf(s->other, sizeof s->other, "jemalloc");
    else if (strstr(base, "tcmalloc")) snprintf(s->other, sizeof s->other, "tcmalloc");
    else if (strncmp(base, "ld-linux", 8) == 0 || strncmp(base, "linux-vdso", 10) == 0) return DWARF_CB_OK;
    else if (is_libc) s->libc_malloc = exported_malloc(mod);
    else if (!s->other[0] && exported_malloc(mod)) snprintf(s->other, sizeof s->other, "%.20s's own", base);
    return DWARF_CB_OK;
}

void core_heap_find(Dwfl *dwfl, struct core_heap *out, unsigned long long *malloc_addr)
{
    memset(out, 0, sizeof *out);
    struct allocator_search s = {0};
    dwfl_getmodules(dwfl, look_at_module, &s, 0);
    *malloc_addr = 0;
    if (s.other[0]) {
        snprintf(out->allocator, sizeof out->allocator, "%s", s.other);
        snprintf(out->why_not, sizeof out->why_not, "the program allocates with %s malloc: not supported yet", s.other);
    } else if (s.libc_malloc) {
        snprintf(out->allocator, sizeof out->allocator, "glibc");
        *malloc_addr = s.libc_malloc;
    } else {
        snprintf(out->why_not, sizeof out->why_not, "no glibc malloc found (statically linked, or not glibc)");
    }
}

/* ---- glibc's layout, from the unit of libc that holds malloc ---- */

static int variable(Dwarf_Die *cu, const char *name, unsigned long long bias, unsigned long long *addr)
{
    Dwarf_Die v;
    return dwarf_layout_child(cu, DW_TAG_variable, name, &v) == 0 && dwarf_layout_address(&v, bias, addr) == 0 ? 0 : -1;
}

static int member(Dwarf_Die *st, const char *name, size_t want, size_t *off)
{
    return dwarf_layout_member(st, name, want, off, NULL);
}

static int layout_read(Dwarf_Die *cu, unsigned long long bias, struct glibc_layout *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    Dwarf_Die ms, mp, hi;
    size_t ms_size;
    size_t fast_off, top_off;
    const char *bad = NULL;
    if (variable(cu, "main_arena", bias, &out->main_arena) < 0 || variable(cu, "mp_", bias, &out->mp) < 0)
        bad = "main_arena and mp_";
    else if (dwarf_layout_struct(cu, "malloc_state", &ms) < 0 || dwarf_layout_size(&ms, &ms_size) < 0) bad = "malloc_state";
    else if (member(&ms, "flags", 4, &out->ms_flags) < 0 || member(&ms, "fastbinsY", 0, &fast_off) < 0 ||
             member(&ms, "top", 8, &top_off) < 0 || member(&ms, "next", 8, &out->ms_next) < 0 ||
             member(&ms, "system_mem", 8, &out->ms_system_mem) < 0)
        bad = "malloc_state's fields";
    else if (dwarf_layout_struct(cu, "malloc_par", &mp) < 0 || member(&mp, "sbrk_base", 8, &out->mp_sbrk_base) < 0 ||
             member(&mp, "n_mmaps", 4, &out->mp_n_mmaps) < 0 || member(&mp, "mmapped_mem", 8, &out->mp_mmapped_mem) < 0)
        bad = "malloc_par";
    else if (dwarf_layout_struct(cu, "heap_info", &hi) < 0 || member(&hi, "ar_ptr", 8, &out->hi_ar_ptr) < 0 ||
             member(&hi, "prev", 8, &out->hi_prev) < 0 || member(&hi, "size", 8, &out->hi_size) < 0 ||
             dwarf_layout_size(&hi, &out->hi_sizeof) < 0)
        bad = "heap_info";
    if (bad) {
        snprintf(err, errlen, "libc's debug information has no %s: the heap cannot be walked", bad);
        return -1;
    }
    out->ms_size = ms_size;
    out->ms_fastbins = fast_off;
    out->ms_top = top_off;
    out->nfastbins = (int)((top_off - fast_off) / 8); /* fastbinsY[] runs up to top */
    if (member(&mp, "hp_pagesize", 8, &out->mp_hp_pagesize) < 0) out->mp_hp_pagesize = 0; /* before glibc 2.35 */
    return 0;
}


/* ---- the layout kept per libc build ---- */

/* The kept file of this libc build's layout ("<build-id>.malloc" beside the debug copies); -1 without a build-id. */
static int layout_name(Dwfl_Module *mod, char *name, size_t len)
{
    char id[128];
    if (debuginfo_cache_build_id(mod, id, sizeof id) < 0) return -1;
    return snprintf(name, len, "%s.malloc", id) < (int)len ? 0 : -1;
}

#define LAYOUT_FORMAT "diagtop-malloc-layout 1 %llx %llx %zu %zu %zu %zu %zu %zu %d %zu %zu %zu %zu %zu %zu %zu %zu\n"
#define LAYOUT_FIELDS(l, at)                                                                                         \
    at(l)->main_arena, at(l)->mp, at(l)->ms_flags, at(l)->ms_fastbins, at(l)->ms_top, at(l)->ms_next,                \
        at(l)->ms_system_mem, at(l)->ms_size, at(l)->nfastbins, at(l)->mp_sbrk_base, at(l)->mp_n_mmaps,              \
        at(l)->mp_mmapped_mem, at(l)->mp_hp_pagesize, at(l)->hi_ar_ptr, at(l)->hi_prev, at(l)->hi_size,              \
        at(l)->hi_sizeof
#define VALUE(l) (l)
#define ADDRESS(l) &(l)

/* A layout kept by an earlier run: what DWARF said of this very build (addresses kept relative to the module's
 * start). 0, or -1 when there is none. */
static int layout_load(Dwfl_Module *mod, struct glibc_layout *l)
{
    char name[160];
    Dwarf_Addr start;
    dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
    FILE *f = layout_name(mod, name, sizeof name) == 0 ? debuginfo_cache_open_kept(name) : NULL;
    if (!f) return -1;
    memset(l, 0, sizeof *l);
    int n = fscanf(f, LAYOUT_FORMAT, LAYOUT_FIELDS(l, ADDRESS));
    fclose(f);
    if (n != 17 || l->nfastbins <= 0 || l->nfastbins > 64) return -1;
    l->main_arena += start;
    l->mp += start;
    return 0;
}

/* Keeps the layout for the next run. */
static void layout_save(Dwfl_Module *mod, const struct glibc_layout *found)
{
    char name[160];
    Dwarf_Addr start;
    dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
    if (layout_name(mod, name, sizeof name) < 0) return;
    struct glibc_layout l = *found;
    l.main_arena -= start;
    l.mp -= start;
    debuginfo_cache_keep(name, LAYOUT_FORMAT, LAYOUT_FIELDS(&l, VALUE));
}

/* The layout: kept from an earlier run of this build, else read from the unit of libc's DWARF holding malloc
 * (through cu_index: libdw's aranges refuse a debug file inflated only as far as the lookups need). */
static int layout_of(struct modules *m, Dwfl_Module *mod, unsigned long long malloc_addr, struct glibc_layout *l,
                     char *why, size_t whylen)
{
    if (layout_load(mod, l) == 0) return 0;
    Dwarf_Addr bias;
    Dwarf_Die *cu = modules_addrdie(m, mod, malloc_addr, &bias);
    if (!cu) {
        snprintf(why, whylen, "no debug information for libc (libc6-dbg, found by build-id): the heap is not walked");
        return -1;
    }
    if (layout_read(cu, bias, l, why, whylen) < 0) return -1;
    layout_save(mod, l);
    return 0;
}

void core_heap_read(struct modules *m, unsigned long long malloc_addr, const struct mem_reader *mem,
                    const struct core_notes *notes, struct core_heap *out)
{
    if (!malloc_addr) return;
    Dwfl_Module *mod = dwfl_addrmodule(modules_dwfl(m), malloc_addr);
    struct glibc_layout l;
    char why[200];
    if (!mod) return;
    if (layout_of(m, mod, malloc_addr, &l, why, sizeof why) < 0 ||
        glibc_heap_walk(&l, mem, notes->loads, notes->nloads, &out->h, why, sizeof why) < 0) {
        snprintf(out->why_not, sizeof out->why_not, "%s", why);
        return;
    }
    out->walked = 1;
}
