/* dwarf_scopes: the DIEs that contain a pc, found through an index of each compilation unit's functions built once
 * per unit. libdw's dwarf_getscopes and dwarf_getscopes_die walk the unit from its first DIE at every call; a Go
 * package is one unit of thousands of functions without DW_AT_sibling, so each lookup parsed most of it (Go stacks
 * cost 3x eu-stack's CPU). Here a lookup is a binary search and a walk down one function. */
#ifndef DIAGTOP_DWARF_SCOPES_H
#define DIAGTOP_DWARF_SCOPES_H
#include <elfutils/libdw.h>

struct dwarf_scopes;

struct dwarf_scopes *dwarf_scopes_new(void);
/* Forgets every unit (their DIEs die with the Dwarf handles: call when the modules are rebuilt). */
void dwarf_scopes_clear(struct dwarf_scopes *ds);
void dwarf_scopes_free(struct dwarf_scopes *ds);

/* The chain of DIEs containing addr (a module-relative address) in cu, innermost first, up to the function that
 * contains them (lexical blocks and inlined calls on the way, as dwarf_getscopes_die gives them, without the
 * unit). Returns the count with *chain malloc'd, 0 when the index has no function there (*chain NULL), -1 when
 * out of memory. */
int dwarf_scopes_chain(struct dwarf_scopes *ds, Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die **chain);
#endif
