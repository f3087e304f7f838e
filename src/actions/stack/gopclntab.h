/* gopclntab: a Go program's own PC tables (.gopclntab, the runtime's symtab.go format of Go 1.18 and 1.19), read
 * in place from the mapped ELF file. They map a PC to its function, file:line and chain of inlined calls, and to the
 * frame size the unwinder needs: what the program's DWARF says (the linker writes .debug_line, the inlined
 * subroutines and .debug_frame from these very tables), without inflating its compressed DWARF sections or
 * parsing them. Only what is checked to be equal is served: x86-64, a program without .eh_frame (Go's own linker:
 * its .debug_frame has one entry per function of the table, nothing else), the 1.18/1.19 header. Every offset is
 * bounds-checked: a target's binary may be hostile. */
#ifndef DIAGTOP_GOPCLNTAB_H
#define DIAGTOP_GOPCLNTAB_H
#include <gelf.h>
#include <stddef.h>

struct gopclntab;

/* One function of the table. */
struct gopclntab_func {
    unsigned long long entry, end; /* [entry, end) in the file's addresses; end is the next function's entry */
    const unsigned char *f;        /* its _func record */
};

/* The tables of elf, or NULL when it is not a program this reader serves (not Go, another layout, .eh_frame). */
struct gopclntab *gopclntab_open(Elf *elf);
void gopclntab_free(struct gopclntab *t);
/* Whether the file at fd is one gopclntab_open serves (its position is left alone). */
int gopclntab_serves_fd(int fd);

/* The Go function containing addr (a file address). 0, or -1 when no function of the table covers it or the one
 * that does has no tables (runtime/cgo's C code). */
int gopclntab_find(const struct gopclntab *t, unsigned long long addr, struct gopclntab_func *fn);
const char *gopclntab_name(const struct gopclntab *t, const struct gopclntab_func *fn);
/* The bytes the function has pushed at addr (the return address excluded), as .debug_frame's CFA says: CFA =
 * SP + delta + 8. -1 when the table is malformed. */
long long gopclntab_spdelta(const struct gopclntab *t, const struct gopclntab_func *fn, unsigned long long addr);

/* One source position of addr, innermost inlined call first. */
struct gopclntab_frame {
    const char *function;
    const char *file; /* NULL when unknown */
    int line;
    int inlined;      /* an inlined call; the last one is the function itself */
};
/* The chain of inlined calls at addr down to fn itself: writes at most max, returns how many. */
int gopclntab_frames(const struct gopclntab *t, const struct gopclntab_func *fn, unsigned long long addr,
                     struct gopclntab_frame *out, int max);

/* For tests: the count of functions, and the i-th. */
size_t gopclntab_nfuncs(const struct gopclntab *t);
int gopclntab_func_at(const struct gopclntab *t, size_t i, struct gopclntab_func *fn);
#endif
