/* core_auxv: names for the auxiliary vector a core keeps (NT_AUXV), as gdb's `info auxv` gives them: each
 * entry's AT_ name, what it means, and how its value reads (a count, an address or flags, a string in the
 * process's memory). Pure tables: no I/O. */
#ifndef DIAGTOP_CORE_AUXV_H
#define DIAGTOP_CORE_AUXV_H

enum core_auxv_format {
    AUXV_HEX, /* an address or flags */
    AUXV_DEC, /* a count, a size or an id */
    AUXV_STR, /* the address of a NUL-terminated string in the process's memory */
};

/* "AT_PAGESZ", or NULL for a type this table does not know (shown by number). */
const char *core_auxv_name(unsigned long long type);
/* "System page size", or "" when unknown. */
const char *core_auxv_about(unsigned long long type);
enum core_auxv_format core_auxv_format(unsigned long long type);
#endif
