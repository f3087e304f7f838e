/* arch_regs: a stopped thread's general registers, read in one ptrace call, and the DWARF register numbers
 * (the psABI's) mapped onto them for the unwinder. One implementation per architecture (arch_x86_64.c). */
#ifndef DIAGTOP_ARCH_REGS_H
#define DIAGTOP_ARCH_REGS_H
#include <sys/user.h>

struct arch_regs {
    struct user_regs_struct gp;
};

/* Reads the registers of a thread in a ptrace stop. Returns 0 or -errno. */
int arch_regs_read(int tid, struct arch_regs *r);
/* The DWARF registers 0..n-1 the unwinder starts from (x86_64: rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15,
 * and the return address column, 16, holding rip). Writes at most max; returns how many. */
#define ARCH_DWARF_REGS 17
#define ARCH_DWARF_PC 16 /* the index of the PC among them */
#define ARCH_DWARF_SP 7
int arch_regs_dwarf(const struct arch_regs *r, unsigned long long *out, int max);
unsigned long long arch_regs_pc(const struct arch_regs *r);
/* perf_event_open's sample_regs_user mask for the registers the unwinder starts from, and the sample's register
 * values (in perf's order, as many as the mask has bits) put into the DWARF order of arch_regs_dwarf. */
#define ARCH_PERF_REGS 17
unsigned long long arch_perf_regs_mask(void);
void arch_perf_regs_dwarf(const unsigned long long *perf, unsigned long long *dwarf);
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
