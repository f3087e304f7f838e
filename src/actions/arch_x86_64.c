/* x86_64 registers for the unwinder. */
#include <errno.h>
#include <libunwind.h>
#include <stddef.h>
#include <elf.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "arch_regs.h"

int arch_regs_read(int tid, struct arch_regs *r)
{
    return ptrace(PTRACE_GETREGS, tid, 0, &r->gp) < 0 ? -errno : 0;
}

int arch_regs_get(const struct arch_regs *r, int regnum, unsigned long long *value)
{
    const struct user_regs_struct *g = &r->gp;
    switch (regnum) {
    case UNW_X86_64_RAX: *value = g->rax; break;
    case UNW_X86_64_RDX: *value = g->rdx; break;
    case UNW_X86_64_RCX: *value = g->rcx; break;
    case UNW_X86_64_RBX: *value = g->rbx; break;
    case UNW_X86_64_RSI: *value = g->rsi; break;
    case UNW_X86_64_RDI: *value = g->rdi; break;
    case UNW_X86_64_RBP: *value = g->rbp; break;
    case UNW_X86_64_RSP: *value = g->rsp; break;
    case UNW_X86_64_R8: *value = g->r8; break;
    case UNW_X86_64_R9: *value = g->r9; break;
    case UNW_X86_64_R10: *value = g->r10; break;
    case UNW_X86_64_R11: *value = g->r11; break;
    case UNW_X86_64_R12: *value = g->r12; break;
    case UNW_X86_64_R13: *value = g->r13; break;
    case UNW_X86_64_R14: *value = g->r14; break;
    case UNW_X86_64_R15: *value = g->r15; break;
    case UNW_X86_64_RIP: *value = g->rip; break;
    default: return -1;
    }
    return 0;
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
