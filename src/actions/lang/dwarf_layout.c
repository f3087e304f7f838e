#include "dwarf_layout.h"

#include <dwarf.h>
#include <string.h>

int dwarf_layout_child(Dwarf_Die *parent, int tag, const char *name, Dwarf_Die *out)
{
    if (dwarf_child(parent, out) != 0) return -1;
    do {
        const char *n = dwarf_diename(out);
        if (dwarf_tag(out) == tag && n && strcmp(n, name) == 0) return 0;
    } while (dwarf_siblingof(out, out) == 0);
    return -1;
}

int dwarf_layout_type(Dwarf_Die *die, Dwarf_Die *type)
{
    Dwarf_Attribute a;
    return dwarf_attr(die, DW_AT_type, &a) && dwarf_formref_die(&a, type) && dwarf_peel_type(type, type) == 0 ? 0 : -1;
}

int dwarf_layout_size(Dwarf_Die *type, size_t *size)
{
    Dwarf_Word w;
    if (dwarf_aggregate_size(type, &w) != 0) return -1;
    *size = (size_t)w;
    return 0;
}

int dwarf_layout_member(Dwarf_Die *st, const char *name, size_t want, size_t *off, Dwarf_Die *type)
{
    Dwarf_Die m, t;
    Dwarf_Attribute a;
    Dwarf_Word loc;
    size_t size;
    if (dwarf_layout_child(st, DW_TAG_member, name, &m) < 0 || !dwarf_attr(&m, DW_AT_data_member_location, &a) ||
        dwarf_formudata(&a, &loc) != 0 || dwarf_layout_type(&m, &t) < 0 || dwarf_layout_size(&t, &size) < 0 ||
        (want && size != want))
        return -1;
    *off = (size_t)loc;
    if (type) *type = t;
    return 0;
}

/* Read from the block itself: libdw's dwarf_getlocation refuses the block form Go's linker writes ("not a
 * location list value"). */
int dwarf_layout_address(Dwarf_Die *var, unsigned long long bias, unsigned long long *addr)
{
    Dwarf_Attribute a;
    Dwarf_Block b;
    unsigned long long v;
    if (!dwarf_attr(var, DW_AT_location, &a) || dwarf_formblock(&a, &b) != 0 || b.length != 9 || b.data[0] != DW_OP_addr)
        return -1;
    memcpy(&v, b.data + 1, sizeof v);
    *addr = v + bias;
    return 0;
}

int dwarf_layout_struct(Dwarf_Die *parent, const char *name, Dwarf_Die *out)
{
    Dwarf_Die td;
    if (dwarf_layout_child(parent, DW_TAG_structure_type, name, out) == 0) return 0;
    return dwarf_layout_child(parent, DW_TAG_typedef, name, &td) == 0 && dwarf_layout_type(&td, out) == 0 ? 0 : -1;
}
