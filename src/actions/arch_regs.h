/* arch_regs: a stopped thread's general registers, read in one ptrace call, and libunwind's register numbers
 * mapped onto them. One implementation per architecture (arch_x86_64.c). */
#ifndef DIAGTOP_ARCH_REGS_H
#define DIAGTOP_ARCH_REGS_H
#include <sys/user.h>

struct arch_regs {
    struct user_regs_struct gp;
};

/* Reads the registers of a thread in a ptrace stop. Returns 0 or -errno. */
int arch_regs_read(int tid, struct arch_regs *r);
/* Value of libunwind register number regnum; returns 0 or -1 for a register not held here. */
int arch_regs_get(const struct arch_regs *r, int regnum, unsigned long long *value);
/* The stack pointer. */
unsigned long long arch_regs_sp(const struct arch_regs *r);
#endif
