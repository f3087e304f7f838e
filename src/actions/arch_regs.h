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

/* Everything a core file keeps of a thread: general registers (NT_PRSTATUS's pr_reg), the FPU area
 * (NT_FPREGSET) and the extended state (NT_X86_XSTATE), each read with one PTRACE_GETREGSET. */
#define ARCH_XSTATE_MAX 65536
struct arch_core_regs {
    struct user_regs_struct gp;
    unsigned char fp[512];
    int have_fp;
    unsigned char *xstate; /* malloc'd, xstate_len bytes; NULL when unavailable */
    size_t xstate_len;
};
int arch_core_regs_read(int tid, struct arch_core_regs *r);
void arch_core_regs_free(struct arch_core_regs *r);
/* ELF machine and the note type of the extended state. */
#define ARCH_ELF_MACHINE 62      /* EM_X86_64 */
#define ARCH_NT_XSTATE 0x202     /* NT_X86_XSTATE */
#endif
