#include "cu_index.h"

#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/bytes.h"

static int range_add(struct cu_index *ix, size_t *cap, Dwarf_Addr lo, Dwarf_Addr hi, size_t cu)
{
    if (ix->nranges == *cap) {
        size_t c = *cap ? *cap * 2 : 256;
        struct cu_range *r = realloc(ix->ranges, c * sizeof *r);
        if (!r) return -1;
        ix->ranges = r;
        *cap = c;
    }
    ix->ranges[ix->nranges++] = (struct cu_range){lo, hi, cu};
    return 0;
}

static int cu_add(struct cu_index *ix, size_t *cap, Dwarf_Off off)
{
    if (ix->ncus == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        Dwarf_Off *o = realloc(ix->offs, c * sizeof *o);
        if (!o) return -1;
        ix->offs = o;
        *cap = c;
    }
    ix->offs[ix->ncus++] = off;
    return 0;
}

/* One set: a header (unit length, version 2, the CU's offset, address and segment sizes), padding to twice the
 * address size from the set's start, then (address, length) pairs up to a (0, 0). */
int cu_index_parse_aranges(struct cu_index *ix, const unsigned char *p, size_t len)
{
    size_t cap_ranges = ix->nranges, cap_cus = ix->ncus;
    for (size_t pos = 0; pos < len;) {
        size_t set = pos;
        if (len - pos < 4) return -1;
        uint64_t unit = bytes_le(p + pos, 4);
        size_t offsz = 4;
        pos += 4;
        if (unit == 0xffffffff) { /* 64-bit DWARF */
            if (len - pos < 8) return -1;
            unit = bytes_le(p + pos, 8);
            offsz = 8;
            pos += 8;
        } else if (unit >= 0xfffffff0) {
            return -1;
        }
        if (unit > len - pos || unit < 2 + offsz + 2) return -1;
        size_t end = pos + unit;
        unsigned version = (unsigned)bytes_le(p + pos, 2);
        Dwarf_Off cu_off = bytes_le(p + pos + 2, offsz);
        unsigned addrsz = p[pos + 2 + offsz], segsz = p[pos + 3 + offsz];
        pos += 4 + offsz;
        if (version != 2 || (addrsz != 8 && addrsz != 4) || segsz != 0) return -1;
        size_t tuple = 2 * addrsz;
        pos = set + (pos - set + tuple - 1) / tuple * tuple;
        if (cu_add(ix, &cap_cus, cu_off) < 0) return -1;
        for (; pos + tuple <= end; pos += tuple) {
            uint64_t lo = bytes_le(p + pos, addrsz), n = bytes_le(p + pos + addrsz, addrsz);
            if (lo == 0 && n == 0) break;
            if (n && lo + n > lo && range_add(ix, &cap_ranges, lo, lo + n, ix->ncus - 1) < 0) return -1;
        }
        pos = end;
    }
    return 0;
}

/* The module's .debug_aranges bytes, when the file has them uncompressed (inflated copies always do). */
static const unsigned char *aranges_of(Dwarf *dw, size_t *len)
{
    Elf *elf = dwarf_getelf(dw);
    size_t shstrndx;
    if (!elf || elf_getshdrstrndx(elf, &shstrndx) < 0) return NULL;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
        if (!name || strcmp(name, ".debug_aranges") != 0) continue;
        Elf_Data *d = (sh.sh_flags & SHF_COMPRESSED) || sh.sh_type == SHT_NOBITS ? NULL : elf_getdata(scn, NULL);
        *len = d ? d->d_size : 0;
        return d ? d->d_buf : NULL;
    }
    return NULL;
}

/* Without usable aranges: every CU's DIE and its DW_AT_ranges / low_pc-high_pc. */
static void index_from_cus(struct cu_index *ix, Dwarf *dw)
{
    size_t cap_cus = 0, cap_ranges = 0;
    Dwarf_Off off = 0, next;
    size_t header;
    while (dwarf_nextcu(dw, off, &next, &header, NULL, NULL, NULL) == 0) {
        Dwarf_Die die;
        Dwarf_Off cu_off = off;
        off = next;
        if (!dwarf_offdie(dw, cu_off + header, &die) || cu_add(ix, &cap_cus, cu_off) < 0) continue;
        Dwarf_Addr base, lo, hi;
        ptrdiff_t r = 0;
        while ((r = dwarf_ranges(&die, r, &base, &lo, &hi)) > 0)
            if (hi > lo && range_add(ix, &cap_ranges, lo, hi, ix->ncus - 1) < 0) return;
    }
}

static int by_lo(const void *a, const void *b)
{
    const struct cu_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int cu_index_from_aranges(struct cu_index *ix, const unsigned char *p, size_t len)
{
    if (cu_index_parse_aranges(ix, p, len) < 0 || ix->nranges == 0) return -1;
    qsort(ix->ranges, ix->nranges, sizeof *ix->ranges, by_lo);
    return 0;
}

static void build(struct cu_index *ix, Dwarf *dw, int use_aranges)
{
    ix->built = 1;
    size_t len = 0;
    const unsigned char *ar = use_aranges ? aranges_of(dw, &len) : NULL;
    ix->from_aranges = ar && cu_index_from_aranges(ix, ar, len) == 0;
    if (!ix->from_aranges) {
        ix->ncus = ix->nranges = 0;
        index_from_cus(ix, dw);
        qsort(ix->ranges, ix->nranges, sizeof *ix->ranges, by_lo);
    }
    ix->cus = calloc(ix->ncus ? ix->ncus : 1, sizeof *ix->cus);
    ix->have = calloc(ix->ncus ? ix->ncus : 1, 1);
    if (!ix->cus || !ix->have) ix->nranges = 0;
}

/* CU i's DIE, read from its unit header the first time. */
static Dwarf_Die *cu_die(struct cu_index *ix, Dwarf *dw, size_t i)
{
    if (!ix->have[i]) {
        Dwarf_Off next;
        size_t header;
        if (dwarf_nextcu(dw, ix->offs[i], &next, &header, NULL, NULL, NULL) != 0 ||
            !dwarf_offdie(dw, ix->offs[i] + header, &ix->cus[i]))
            return NULL;
        ix->have[i] = 1;
    }
    return &ix->cus[i];
}

size_t cu_index_unit_at(const struct cu_index *ix, Dwarf_Addr a)
{
    /* The last range starting at or below a, then earlier ones while they could still cover it (nested or
     * overlapping ranges are rare but legal). */
    size_t lo = 0, hi = ix->nranges;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ix->ranges[mid].lo <= a) lo = mid + 1;
        else hi = mid;
    }
    for (size_t i = lo; i-- > 0 && lo - i <= 64;)
        if (a < ix->ranges[i].hi) return ix->ranges[i].cu;
    return SIZE_MAX;
}

static Dwarf_Die *lookup(struct cu_index *ix, Dwarf *dw, Dwarf_Addr a)
{
    size_t cu = cu_index_unit_at(ix, a);
    return cu == SIZE_MAX ? NULL : cu_die(ix, dw, cu);
}

Dwarf_Die *cu_index_find(struct cu_index *ix, Dwarf *dw, Dwarf_Addr a)
{
    if (!ix->built) build(ix, dw, 1);
    Dwarf_Die *cu = lookup(ix, dw, a);
    if (!cu && ix->from_aranges) { /* as libdwfl did: aranges first, then every CU's ranges */
        if (!ix->all && (ix->all = calloc(1, sizeof *ix->all))) build(ix->all, dw, 0);
        if (ix->all) cu = lookup(ix->all, dw, a);
    }
    return cu;
}

void cu_index_free(struct cu_index *ix)
{
    if (ix->all) cu_index_free(ix->all);
    free(ix->all);
    free(ix->offs);
    free(ix->cus);
    free(ix->have);
    free(ix->ranges);
    memset(ix, 0, sizeof *ix);
}
