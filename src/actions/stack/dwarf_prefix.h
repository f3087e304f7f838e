/* dwarf_prefix: how much of a debug file's .debug_info the lookups of known addresses will read, so that a one-shot
 * stack inflates only that much of it (elf_inflate's part): the compilation units covering them, found through
 * .debug_aranges, and every unit before them (libdw reads unit headers in order). Any doubt means all of it: an
 * address no arange covers, the last unit, a unit that may refer outside itself (DW_FORM_ref_addr, type
 * signatures, supplementary or dwz files, DW_FORM_indirect), a debug file laid out apart from its program.
 * libdw's own dwarf_getaranges refuses such a copy (its later sets name units past the cut): cu_index serves. */
#ifndef DIAGTOP_DWARF_PREFIX_H
#define DIAGTOP_DWARF_PREFIX_H
#include <stddef.h>

#include "elf_inflate.h"

struct dwarf_prefix {
    const unsigned long long *addrs; /* the DWARF addresses to be looked up (the module's bias removed) */
    size_t naddrs;
    unsigned long long first_load;   /* the program's first loaded address (elf_copy_first_load's sum) */
    unsigned long long *units;       /* the offsets of the units covering them, once wanted */
    size_t nunits;
};

/* An inflate_part for .debug_info whose reader is dp (which must outlive the inflate). */
struct inflate_part dwarf_prefix_part(struct dwarf_prefix *dp);
void dwarf_prefix_free(struct dwarf_prefix *dp);
#endif
