/* x86_64 registers for the unwinder and for core files. */
#include <errno.h>
#include <stddef.h>
#include <elf.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <asm/perf_regs.h>

#include "arch_regs.h"

int arch_regs_read(int tid, struct arch_regs *r)
{
    return ptrace(PTRACE_GETREGS, tid, 0, &r->gp) < 0 ? -errno : 0;
}

int arch_regs_dwarf(const struct arch_regs *r, unsigned long long *out, int max)
{
    const struct user_regs_struct *g = &r->gp;
    const unsigned long long all[ARCH_DWARF_REGS] = {g->rax, g->rdx, g->rcx, g->rbx, g->rsi, g->rdi, g->rbp, g->rsp,
                                                     g->r8,  g->r9,  g->r10, g->r11, g->r12, g->r13, g->r14, g->r15,
                                                     g->rip};
    int n = max < ARCH_DWARF_REGS ? max : ARCH_DWARF_REGS;
    for (int i = 0; i < n; i++) out[i] = all[i];
    return n;
}

unsigned long long arch_regs_pc(const struct arch_regs *r) { return r->gp.rip; }

/* ax bx cx dx si di bp sp ip, then r8..r15 (asm/perf_regs.h numbering: 0-8 and 16-23). */
unsigned long long arch_perf_regs_mask(void)
{
    unsigned long long m = 0;
    for (int r = PERF_REG_X86_AX; r <= PERF_REG_X86_IP; r++) m |= 1ULL << r;
    for (int r = PERF_REG_X86_R8; r <= PERF_REG_X86_R15; r++) m |= 1ULL << r;
    return m;
}

void arch_perf_regs_dwarf(const unsigned long long *perf, unsigned long long *dwarf)
{
    /* perf's sample order (ascending register numbers) -> DWARF: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip */
    enum { AX, BX, CX, DX, SI, DI, BP, SP, IP, R8 };
    const int from[ARCH_DWARF_REGS] = {AX, DX, CX, BX, SI, DI, BP, SP, R8, R8 + 1, R8 + 2, R8 + 3, R8 + 4, R8 + 5,
                                       R8 + 6, R8 + 7, IP};
    for (int i = 0; i < ARCH_DWARF_REGS; i++) dwarf[i] = perf[from[i]];
}
unsigned long long arch_regs_sp(const struct arch_regs *r) { return r->gp.rsp; }

int arch_core_regs_read(int tid, struct arch_core_regs *r)
{
    struct iovec iov = {&r->gp, sizeof r->gp};
    if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0) return -errno;
    iov = (struct iovec){r->fp, sizeof r->fp};
    r->have_fp = ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRFPREG, &iov) == 0;
    /* The kernel shrinks iov_len to the real size of the extended state (11,008 bytes with AMX). */
    r->xstate = malloc(ARCH_XSTATE_MAX);
    iov = (struct iovec){r->xstate, ARCH_XSTATE_MAX};
    if (r->xstate && ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) == 0) {
        r->xstate_len = iov.iov_len;
    } else {
        free(r->xstate);
        r->xstate = NULL;
        r->xstate_len = 0;
    }
    return 0;
}

void arch_core_regs_free(struct arch_core_regs *r)
{
    free(r->xstate);
    r->xstate = NULL;
}
