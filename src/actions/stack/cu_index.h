/* cu_index: which compilation unit of a module's DWARF covers an address. Built once per module, in one sorted
 * array: from .debug_aranges when the file has it (read directly: libdw's dwarf_getaranges allocates a node per
 * range, a fifth of a warm `diagtop stack`), else from the CUs' own address ranges (Go writes no aranges). */
#ifndef DIAGTOP_CU_INDEX_H
#define DIAGTOP_CU_INDEX_H
#include <elfutils/libdw.h>
#include <stddef.h>

struct cu_range {
    Dwarf_Addr lo, hi; /* [lo, hi) in the module's DWARF addresses */
    size_t cu;         /* index into the CUs */
};

struct cu_index {
    int built, from_aranges;
    struct cu_index *all; /* when from aranges, which may leave a CU out: the CUs' own ranges, built on a miss */
    Dwarf_Off *offs;   /* each CU's offset in .debug_info, in first-seen order */
    Dwarf_Die *cus;    /* its DIE, read on first use (have[i]) */
    unsigned char *have;
    size_t ncus;
    struct cu_range *ranges; /* by lo */
    size_t nranges;
};

/* The CU DIE covering a (bias removed), building the index on first use; NULL when none does. The DIE stays valid
 * until cu_index_free. */
Dwarf_Die *cu_index_find(struct cu_index *ix, Dwarf *dw, Dwarf_Addr a);
void cu_index_free(struct cu_index *ix);

/* Parses a .debug_aranges section into ix (ranges and CU offsets, unsorted). Returns 0, or -1 when it is malformed
 * or uses what this reader does not (segments, odd address sizes): then the CUs' ranges serve. Exposed for tests. */
int cu_index_parse_aranges(struct cu_index *ix, const unsigned char *p, size_t len);
/* The same, with the ranges then sorted for cu_index_unit_at; -1 also when it holds no range. */
int cu_index_from_aranges(struct cu_index *ix, const unsigned char *p, size_t len);
/* Which CU (an index into offs) covers a, from the sorted ranges alone (no DWARF read); SIZE_MAX when none. */
size_t cu_index_unit_at(const struct cu_index *ix, Dwarf_Addr a);
#endif
