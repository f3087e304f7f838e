#include "gopclntab.h"

#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GO118_MAGIC 0xfffffff0u /* Go 1.18 and 1.19; 1.20 changed _func and the inline tree */
#define FUNC_SIZE 40            /* _func up to and including nfuncdata */
#define INLCALL_SIZE 20         /* runtime.inlinedCall of 1.19 */
#define PCDATA_INLTREEINDEX 2
#define FUNCDATA_INLTREE 3

struct span {
    const unsigned char *p;
    size_t n;
};

struct gopclntab {
    unsigned long long text;                  /* textStart: entry offsets are relative to it */
    size_t nfunc;
    unsigned quantum;                         /* minLC: pc deltas are in these units */
    struct span names, cutab, files, pctab, pcln; /* funcnametab, cutab, filetab, pctab, pclntable */
    struct span gofunc;                       /* go.func.*, to the end of its section: funcdata is relative to it */
};

static uint32_t u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint64_t u64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* A NUL-terminated string at off of s, or NULL. */
static const char *str_at(struct span s, uint64_t off)
{
    if (off >= s.n || !memchr(s.p + off, '\0', s.n - off)) return NULL;
    return (const char *)s.p + off;
}

static Elf_Scn *section_named(Elf *elf, const char *name, GElf_Shdr *out)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0) return NULL;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
        if (n && strcmp(n, name) == 0) {
            if (out) *out = sh;
            return scn;
        }
    }
    return NULL;
}

/* The bytes at address addr to the end of the loaded section holding it. */
static int span_at_address(Elf *elf, uint64_t addr, struct span *out)
{
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || sh.sh_type == SHT_NOBITS) continue;
        if (addr < sh.sh_addr || addr - sh.sh_addr >= sh.sh_size) continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (!d || !d->d_buf || d->d_size != sh.sh_size) return -1;
        *out = (struct span){(const unsigned char *)d->d_buf + (addr - sh.sh_addr), sh.sh_size - (addr - sh.sh_addr)};
        return 0;
    }
    return -1;
}

/* The address of go.func.* (go:func.* since 1.20), from the symbol table. */
static int gofunc_address(Elf *elf, uint64_t *addr)
{
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || sh.sh_entsize == 0) continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t n = d ? d->d_size / sizeof(Elf64_Sym) : 0;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym sym;
            const char *name = gelf_getsym(d, (int)i, &sym) ? elf_strptr(elf, sh.sh_link, sym.st_name) : NULL;
            if (name && (strcmp(name, "go.func.*") == 0 || strcmp(name, "go:func.*") == 0)) {
                *addr = sym.st_value;
                return 0;
            }
        }
    }
    return -1;
}

static int slice(struct span all, uint64_t from, uint64_t to, struct span *out)
{
    if (from > to || to > all.n) return -1;
    *out = (struct span){all.p + from, to - from};
    return 0;
}

struct gopclntab *gopclntab_open(Elf *elf)
{
    GElf_Ehdr eh;
    GElf_Shdr sh;
    if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB)
        return NULL;
    /* A program linked by the system linker has .eh_frame for its C code and .debug_frame entries of gcc's:
     * what libdw would do there is not what the tables say. */
    if (section_named(elf, ".eh_frame", NULL)) return NULL;
    /* Without .debug_frame (linked -w) libdw's unwinding and errors differ: left to it. */
    if (!section_named(elf, ".debug_frame", NULL)) return NULL;
    Elf_Scn *scn = section_named(elf, ".gopclntab", &sh);
    Elf_Data *d = scn && sh.sh_type == SHT_PROGBITS ? elf_getdata(scn, NULL) : NULL;
    if (!d || !d->d_buf || d->d_size < 72) return NULL;
    struct span all = {d->d_buf, d->d_size};
    const unsigned char *h = all.p;
    if (u32(h) != GO118_MAGIC || h[4] || h[5] || h[6] == 0 || h[7] != 8) return NULL;
    struct gopclntab *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    uint64_t nfunc = u64(h + 8), names = u64(h + 32), cu = u64(h + 40), files = u64(h + 48), pctab = u64(h + 56),
             pcln = u64(h + 64), gofunc;
    t->text = u64(h + 24);
    t->quantum = h[6];
    if (slice(all, names, cu, &t->names) < 0 || slice(all, cu, files, &t->cutab) < 0 ||
        slice(all, files, pctab, &t->files) < 0 || slice(all, pctab, pcln, &t->pctab) < 0 ||
        slice(all, pcln, all.n, &t->pcln) < 0 || nfunc == 0 || nfunc >= t->pcln.n / 8 || t->text == 0 ||
        gofunc_address(elf, &gofunc) < 0 || span_at_address(elf, gofunc, &t->gofunc) < 0) {
        free(t);
        return NULL;
    }
    t->nfunc = nfunc;
    return t;
}

void gopclntab_free(struct gopclntab *t) { free(t); }

int gopclntab_serves_fd(int fd)
{
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    struct gopclntab *t = gopclntab_open(elf);
    int yes = t != NULL;
    gopclntab_free(t);
    if (elf) elf_end(elf);
    return yes;
}

size_t gopclntab_nfuncs(const struct gopclntab *t) { return t->nfunc; }

/* functab entry i: its entry offset and _func offset. */
static void ftab(const struct gopclntab *t, size_t i, uint32_t *entryoff, uint32_t *funcoff)
{
    *entryoff = u32(t->pcln.p + 8 * i);
    *funcoff = u32(t->pcln.p + 8 * i + 4);
}

int gopclntab_func_at(const struct gopclntab *t, size_t i, struct gopclntab_func *fn)
{
    if (i >= t->nfunc) return -1;
    uint32_t e, off, next, unused;
    ftab(t, i, &e, &off);
    ftab(t, i + 1, &next, &unused);
    if (next < e || off > t->pcln.n || t->pcln.n - off < FUNC_SIZE) return -1;
    const unsigned char *f = t->pcln.p + off;
    uint64_t npcdata = u32(f + 28), nfuncdata = f[39];
    if (u32(f) != e || (t->pcln.n - off - FUNC_SIZE) / 4 < npcdata + nfuncdata) return -1;
    *fn = (struct gopclntab_func){t->text + e, t->text + next, f};
    return 0;
}

int gopclntab_find(const struct gopclntab *t, unsigned long long addr, struct gopclntab_func *fn)
{
    if (addr < t->text) return -1;
    uint64_t off = addr - t->text;
    uint32_t e, unused;
    ftab(t, t->nfunc, &e, &unused);
    if (off >= e) return -1;
    size_t lo = 0, hi = t->nfunc; /* the last entry at or below off */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        ftab(t, mid, &e, &unused);
        if (e <= off) lo = mid;
        else hi = mid;
    }
    ftab(t, lo, &e, &unused);
    if (e > off || gopclntab_func_at(t, lo, fn) < 0) return -1;
    /* The C of runtime/cgo has an entry without tables: Go's linker writes neither .debug_frame nor DWARF for
     * it, so it is treated as not Go's. */
    return u32(fn->f + 16) == 0 ? -1 : 0;
}

const char *gopclntab_name(const struct gopclntab *t, const struct gopclntab_func *fn)
{
    int32_t nameoff = (int32_t)u32(fn->f + 4);
    return nameoff > 0 ? str_at(t->names, (uint64_t)nameoff) : NULL;
}

static int varint(const unsigned char **p, const unsigned char *end, uint32_t *v)
{
    uint32_t r = 0;
    for (int shift = 0; *p < end && shift < 35; shift += 7) {
        unsigned char b = *(*p)++;
        r |= (uint32_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return 0;
        }
    }
    return -1;
}

/* One pc-value table (runtime.pcvalue) at target, a file address: the value, with the interval [*from, *to) it
 * holds over and whether that interval is the table's last. -1 when the table ends before target or is
 * malformed (the value is then meaningless). */
static int pcvalue(const struct gopclntab *t, const struct gopclntab_func *fn, uint32_t off, uint64_t target,
                   int32_t *val, uint64_t *from, uint64_t *to, int *last, int32_t *before)
{
    if (off == 0 || off >= t->pctab.n) return -1;
    const unsigned char *p = t->pctab.p + off, *end = t->pctab.p + t->pctab.n;
    uint64_t pc = fn->entry, prev = pc;
    int32_t v = -1, pv = -1;
    for (int first = 1;; first = 0) {
        uint32_t uv, pcd;
        if (p >= end) return -1;
        if (*p == 0 && !first) return -1; /* the end of the table, before target */
        if (varint(&p, end, &uv) < 0 || varint(&p, end, &pcd) < 0) return -1;
        pv = v;
        v += (int32_t)(-(uv & 1) ^ (uv >> 1));
        pc += (uint64_t)pcd * t->quantum;
        if (target < pc) {
            *val = v;
            if (from) *from = prev, *to = pc, *last = p < end && *p == 0, *before = first ? -1 : pv;
            return 0;
        }
        prev = pc;
    }
}

static int pcdata_off(const struct gopclntab_func *fn, unsigned table, uint32_t *off)
{
    if (table >= u32(fn->f + 28)) return -1;
    *off = u32(fn->f + FUNC_SIZE + 4 * table);
    return 0;
}

long long gopclntab_spdelta(const struct gopclntab *t, const struct gopclntab_func *fn, unsigned long long addr)
{
    int32_t v, before;
    uint64_t from, to;
    int last;
    if (pcvalue(t, fn, u32(fn->f + 16), addr, &v, &from, &to, &last, &before) < 0 || v < 0) return -1;
    /* The linker's .debug_frame stops one byte short of the function's end: a last interval of one byte gets no
     * row of its own, and the row before it covers that byte (the CIE's, SP + 8, when there is none). */
    if (last && to - from == 1) return before < 0 ? 0 : before;
    return v;
}

/* File number fileno of the function's compilation unit. */
static const char *file_of(const struct gopclntab *t, const struct gopclntab_func *fn, int32_t fileno)
{
    uint64_t i = (uint64_t)u32(fn->f + 32) + (uint64_t)(uint32_t)fileno;
    if (fileno < 0 || i >= t->cutab.n / 4) return NULL;
    uint32_t off = u32(t->cutab.p + 4 * i);
    return off == UINT32_MAX ? NULL : str_at(t->files, off);
}

int gopclntab_frames(const struct gopclntab *t, const struct gopclntab_func *fn, unsigned long long addr,
                     struct gopclntab_frame *out, int max)
{
    int32_t fileno, line, ix = -1;
    if (max <= 0 || pcvalue(t, fn, u32(fn->f + 20), addr, &fileno, NULL, NULL, NULL, NULL) < 0 ||
        pcvalue(t, fn, u32(fn->f + 24), addr, &line, NULL, NULL, NULL, NULL) < 0)
        return -1;
    const char *file = file_of(t, fn, fileno), *name = gopclntab_name(t, fn);
    if (!file || !name) return -1;
    uint32_t idx_off, tree_off = UINT32_MAX;
    uint64_t nfuncdata = fn->f[39], npcdata = u32(fn->f + 28);
    if (nfuncdata > FUNCDATA_INLTREE) tree_off = u32(fn->f + FUNC_SIZE + 4 * (npcdata + FUNCDATA_INLTREE));
    if (tree_off != UINT32_MAX && pcdata_off(fn, PCDATA_INLTREEINDEX, &idx_off) == 0 && idx_off != 0 &&
        pcvalue(t, fn, idx_off, addr, &ix, NULL, NULL, NULL, NULL) < 0)
        return -1;
    int n = 0;
    for (; ix >= 0 && tree_off != UINT32_MAX && n < max - 1; n++) {
        uint64_t at = (uint64_t)tree_off + (uint64_t)ix * INLCALL_SIZE;
        if (at > t->gofunc.n || t->gofunc.n - at < INLCALL_SIZE) return -1;
        const unsigned char *e = t->gofunc.p + at;
        int32_t callee = (int32_t)u32(e + 12);
        const char *callee_name = callee >= 0 ? str_at(t->names, (uint64_t)callee) : NULL;
        if (!callee_name) return -1;
        out[n] = (struct gopclntab_frame){callee_name, file, line, 1};
        /* The caller sits at the call site, in the same unit's files. */
        file = file_of(t, fn, (int32_t)u32(e + 4));
        line = (int32_t)u32(e + 8);
        if (!file) return -1;
        int16_t parent;
        memcpy(&parent, e, sizeof parent);
        ix = parent;
    }
    out[n++] = (struct gopclntab_frame){name, file, line, 0};
    return n;
}
