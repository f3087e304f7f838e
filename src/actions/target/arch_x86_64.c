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

/* ---- Making a stopped thread run one system call ---- */

#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>

/* `syscall; ret` (glibc's getpid and friends, Go's runtime stubs) and `mov $15, %rax; syscall` (glibc's and
 * Go's rt_sigreturn trampolines, __restore_rt). */
static const unsigned char site_syscall[] = {0x0f, 0x05, 0xc3};
static const unsigned char site_sigreturn[] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};

const unsigned char *arch_inject_site_bytes(enum arch_site k, size_t *len)
{
    *len = k == ARCH_SITE_SYSCALL ? sizeof site_syscall : sizeof site_sigreturn;
    return k == ARCH_SITE_SYSCALL ? site_syscall : site_sigreturn;
}

void arch_inject_scan(const unsigned char *code, size_t n, unsigned long long addr, struct arch_inject_sites *s)
{
    for (int k = 0; k < ARCH_SITES; k++) {
        size_t len;
        const unsigned char *want = arch_inject_site_bytes((enum arch_site)k, &len);
        for (size_t i = 0; !s->at[k] && n >= len && i <= n - len; i++) {
            const unsigned char *p = memchr(code + i, want[0], n - len + 1 - i);
            if (!p) break;
            i = (size_t)(p - code);
            if (memcmp(p, want, len) == 0) s->at[k] = addr + i;
        }
    }
}

/* The kernel's x86_64 signal frame (arch/x86/include/uapi/asm/sigcontext.h, asm/sigframe.h): what rt_sigreturn
 * reads at the stack pointer minus 8, the return address a handler's `ret` popped. */
struct k_sigcontext {
    uint64_t r8, r9, r10, r11, r12, r13, r14, r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
    uint16_t cs, gs, fs, ss;
    uint64_t err, trapno, oldmask, cr2, fpstate, reserved1[8];
};
struct k_ucontext {
    uint64_t uc_flags, uc_link;
    uint64_t ss_sp;
    int32_t ss_flags, pad;
    uint64_t ss_size;
    struct k_sigcontext uc_mcontext;
    uint64_t uc_sigmask;
};
struct k_rt_sigframe {
    uint64_t pretcode;
    struct k_ucontext uc;
    unsigned char info[128];
};
_Static_assert(sizeof(struct k_sigcontext) == 256, "sigcontext");
_Static_assert(sizeof(struct k_rt_sigframe) == 440, "rt_sigframe");
#define UC_FP_XSTATE 0x1
#define UC_SIGCONTEXT_SS 0x2
#define UC_STRICT_RESTORE_SS 0x4
#define FP_XSTATE_MAGIC1 0x46505853U
#define FP_XSTATE_MAGIC2 0x46505845U
#define SW_RESERVED 464 /* fpx_sw_bytes inside the FXSAVE area */
#define USER_CS 0x33
#define USER_DS 0x2b

static void frame_regs(struct k_sigcontext *sc, const struct user_regs_struct *g)
{
    sc->r8 = g->r8, sc->r9 = g->r9, sc->r10 = g->r10, sc->r11 = g->r11, sc->r12 = g->r12, sc->r13 = g->r13;
    sc->r14 = g->r14, sc->r15 = g->r15, sc->rdi = g->rdi, sc->rsi = g->rsi, sc->rbp = g->rbp, sc->rbx = g->rbx;
    sc->rdx = g->rdx, sc->rax = g->rax, sc->rcx = g->rcx, sc->rsp = g->rsp, sc->rip = g->rip, sc->eflags = g->eflags;
    sc->cs = (uint16_t)g->cs, sc->ss = (uint16_t)g->ss;
}

/* rt_sigreturn sets orig_rax to -1, so the kernel's restart of an interrupted call must be done in the frame:
 * back to the syscall instruction with the call's number. A call restarted through its restart block
 * (nanosleep, poll with a timeout) cannot be: rt_sigreturn discards the block, so it returns EINTR, as it would
 * after a signal handler. */
static void frame_restart(struct k_sigcontext *sc, const struct user_regs_struct *g)
{
    long ax = (long)g->rax;
    if ((long)g->orig_rax < 0) return;
    if (ax == -512 || ax == -513 || ax == -514) { /* ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND */
        sc->rax = g->orig_rax;
        sc->rip -= 2;
    } else if (ax == -516) { /* ERESTART_RESTARTBLOCK */
        sc->rax = (uint64_t)-EINTR;
    }
}

/* The FPU state as the kernel's own signal frames hold it: XSAVE layout whose software bytes (copied by
 * PTRACE_GETREGSET from the kernel's) give the size, then the second magic word; FXSAVE only without them.
 * Returns the bytes to copy from (NULL: none), with *len and the frame's *fp_len; *xsize 0 for FXSAVE only. */
static const unsigned char *frame_fpu(const struct arch_core_regs *saved, size_t *len, size_t *fp_len, uint32_t *xsize)
{
    const unsigned char *fx = saved->xstate ? saved->xstate : saved->have_fp ? saved->fp : NULL;
    *len = *fp_len = saved->xstate ? saved->xstate_len : saved->have_fp ? sizeof saved->fp : 0;
    *xsize = 0;
    uint32_t magic1 = 0, size = 0;
    if (saved->xstate && *len >= SW_RESERVED + 24) {
        memcpy(&magic1, fx + SW_RESERVED, 4);
        memcpy(&size, fx + SW_RESERVED + 16, 4);
        if (magic1 == FP_XSTATE_MAGIC1 && size <= *len) {
            *fp_len = (size_t)size + 4;
            *xsize = size;
        }
    }
    return fx;
}

size_t arch_inject_frames_size(const struct arch_core_regs *saved)
{
    size_t len, fp_len;
    uint32_t xsize;
    frame_fpu(saved, &len, &fp_len, &xsize);
    return fp_len + 2 * sizeof(struct k_rt_sigframe) + 4 * 64;
}

int arch_inject_frames_build(struct arch_inject_frames *f, const struct arch_core_regs *saved,
                             unsigned long long sigmask, const struct arch_inject_sites *s, unsigned long long top)
{
    memset(f, 0, sizeof *f);
    const struct user_regs_struct *g = &saved->gp;
    if (g->cs != USER_CS) return -EINVAL; /* a 32-bit thread: another frame and other call numbers */
    size_t fx_len, fp_len;
    uint32_t xsize;
    const unsigned char *fx = frame_fpu(saved, &fx_len, &fp_len, &xsize);
    uint32_t magic1 = xsize ? FP_XSTATE_MAGIC1 : 0;
    top &= ~63ULL;
    unsigned long long fp_at = fx ? (top - fp_len) & ~63ULL : top; /* XRSTOR wants 64-byte alignment */
    unsigned long long thread_at = (fp_at - sizeof(struct k_rt_sigframe)) & ~15ULL;
    unsigned long long copy_at = (thread_at - sizeof(struct k_rt_sigframe) - 64) & ~15ULL;
    f->addr = copy_at;
    f->len = (size_t)(top - copy_at);
    f->data = calloc(1, f->len);
    if (!f->data) return -ENOMEM;
    f->thread_sp = thread_at;
    f->copy_sp = copy_at;

    /* The thread's frame: its own state, as if a signal handler were returning. */
    struct k_rt_sigframe *t = (struct k_rt_sigframe *)(f->data + (thread_at - copy_at));
    t->pretcode = s->at[ARCH_SITE_SIGRETURN]; /* where the syscall site's `ret` goes */
    t->uc.uc_flags = UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS | (magic1 ? UC_FP_XSTATE : 0);
    t->uc.ss_flags = 3; /* neither SS_ONSTACK nor SS_DISABLE: sigaltstack refuses it, the thread's stays */
    frame_regs(&t->uc.uc_mcontext, g);
    frame_restart(&t->uc.uc_mcontext, g);
    t->uc.uc_mcontext.fpstate = fx ? fp_at : 0;
    t->uc.uc_sigmask = sigmask;
    if (fx) {
        unsigned char *fp = f->data + (fp_at - copy_at);
        memcpy(fp, fx, fx_len < fp_len ? fx_len : fp_len);
        if (!magic1) memset(fp + SW_RESERVED, 0, 48); /* FXSAVE alone */
        else {
            uint32_t m2 = FP_XSTATE_MAGIC2;
            memcpy(fp + xsize, &m2, 4);
        }
    }

    /* The copy's frame: every signal blocked, straight into exit_group(0) through the syscall site. */
    struct k_rt_sigframe *c = (struct k_rt_sigframe *)(f->data);
    c->pretcode = s->at[ARCH_SITE_SIGRETURN];
    c->uc.uc_flags = UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
    c->uc.ss_flags = 3;
    c->uc.uc_mcontext.rip = s->at[ARCH_SITE_SYSCALL];
    c->uc.uc_mcontext.rax = SYS_exit_group;
    c->uc.uc_mcontext.rsp = copy_at;
    c->uc.uc_mcontext.eflags = 0x202;
    c->uc.uc_mcontext.cs = USER_CS;
    c->uc.uc_mcontext.ss = USER_DS;
    c->uc.uc_sigmask = ~0ULL;
    return 0;
}

void arch_inject_frames_free(struct arch_inject_frames *f)
{
    free(f->data);
    f->data = NULL;
}

void arch_inject_regs(struct arch_regs *out, const struct arch_regs *saved, const struct arch_inject_sites *s,
                      unsigned long long sp, long placeholder, const unsigned long long args[6])
{
    *out = *saved;
    struct user_regs_struct *g = &out->gp;
    g->rip = s->at[ARCH_SITE_SYSCALL];
    g->rsp = sp;
    g->rax = (unsigned long long)placeholder;
    g->orig_rax = (unsigned long long)-1; /* not in a call: the kernel's restart logic leaves rax and rip alone */
    g->rdi = args[0], g->rsi = args[1], g->rdx = args[2], g->r10 = args[3], g->r8 = args[4], g->r9 = args[5];
}

void arch_inject_set_nr(struct arch_regs *r, long nr) { r->gp.orig_rax = (unsigned long long)nr; }
long arch_inject_nr(const struct arch_regs *r) { return (long)r->gp.orig_rax; }
long arch_inject_result(const struct arch_regs *r) { return (long)r->gp.rax; }

int arch_regs_write(int tid, const struct arch_regs *r)
{
    return ptrace(PTRACE_SETREGS, tid, 0, &r->gp) < 0 ? -errno : 0;
}
