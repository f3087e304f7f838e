/* dwarf_layout: where a program's data lives, as its DWARF says: a variable's address, a struct's fields (offset,
 * size checked), for readers of a runtime's or an allocator's structures (go_runtime, offline/core_heap) that never
 * trust a table of versions. Every answer is checked; -1 means "not this layout". */
#ifndef DIAGTOP_DWARF_LAYOUT_H
#define DIAGTOP_DWARF_LAYOUT_H
#include <elfutils/libdw.h>
#include <stddef.h>

/* The child of parent with this tag and name. */
int dwarf_layout_child(Dwarf_Die *parent, int tag, const char *name, Dwarf_Die *out);
/* A DIE's type, typedefs and qualifiers peeled. */
int dwarf_layout_type(Dwarf_Die *die, Dwarf_Die *type);
int dwarf_layout_size(Dwarf_Die *type, size_t *size);
/* A member of struct st: its offset, its type (when type is not NULL), its size checked to be want (0: any). */
int dwarf_layout_member(Dwarf_Die *st, const char *name, size_t want, size_t *off, Dwarf_Die *type);
/* A variable's address (its location one DW_OP_addr), bias added. */
int dwarf_layout_address(Dwarf_Die *var, unsigned long long bias, unsigned long long *addr);
/* A struct type among parent's children, by its own name or a typedef's. */
int dwarf_layout_struct(Dwarf_Die *parent, const char *name, Dwarf_Die *out);
#endif
