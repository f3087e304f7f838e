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
/* ---- Making a stopped thread run one system call (snapshot.c) ----
 * The thread runs it from a `syscall; ret` sequence found in its own code, with its stack pointer on a recovery
 * frame written below its real stack pointer. Should diagtop die at any instant before the thread's registers are
 * put back, the kernel detaches the thread, which returns from the call into an rt_sigreturn sequence that
 * restores its registers, signal mask and FPU state from that frame (an interrupted system call restarts, or
 * returns EINTR where the kernel would have restarted it from a restart block). A process cloned by the call gets
 * the second frame as its stack, whose rt_sigreturn leads straight into exit_group: it never runs the program. */
enum arch_site { ARCH_SITE_SYSCALL, ARCH_SITE_SIGRETURN, ARCH_SITES };
struct arch_inject_sites {
    unsigned long long at[ARCH_SITES]; /* 0: not found */
};
/* Looks for the sequences in n bytes of code mapped at addr, filling the sites still 0. */
void arch_inject_scan(const unsigned char *code, size_t n, unsigned long long addr, struct arch_inject_sites *s);
/* The bytes site k must hold (checked again during the stop, just before use). */
const unsigned char *arch_inject_site_bytes(enum arch_site k, size_t *len);
/* Bytes below a stack pointer the frames never touch (x86_64: the 128-byte red zone and a margin). */
#define ARCH_STACK_SKIP 384
struct arch_inject_frames {
    unsigned char *data; /* len bytes to write at addr in the target (malloc'd) */
    size_t len;
    unsigned long long addr;
    unsigned long long thread_sp; /* the injected thread's stack pointer: its recovery frame */
    unsigned long long copy_sp;   /* a clone's stack pointer: the frame that exits */
};
/* Bytes the frames of a thread whose state is saved take at most. */
size_t arch_inject_frames_size(const struct arch_core_regs *saved);
/* Frames for a thread whose state is saved (registers as read at its stop), with signal mask sigmask, ending
 * below top (memory no one uses: below the thread's own stack pointer, or stack pages never touched). Returns 0,
 * -ENOMEM or -EINVAL (not a 64-bit thread). */
int arch_inject_frames_build(struct arch_inject_frames *f, const struct arch_core_regs *saved,
                             unsigned long long sigmask, const struct arch_inject_sites *s, unsigned long long top);
void arch_inject_frames_free(struct arch_inject_frames *f);
/* Registers that run system call `placeholder` with args from the syscall site, on stack pointer sp: the
 * placeholder (one without effect) is what runs if diagtop dies before the entry stop, where arch_inject_set_nr
 * puts the real number. */
void arch_inject_regs(struct arch_regs *out, const struct arch_regs *saved, const struct arch_inject_sites *s,
                      unsigned long long sp, long placeholder, const unsigned long long args[6]);
void arch_inject_set_nr(struct arch_regs *r, long nr);
long arch_inject_nr(const struct arch_regs *r);     /* the call's number at an entry stop */
long arch_inject_result(const struct arch_regs *r); /* its return value at the exit stop */
int arch_regs_write(int tid, const struct arch_regs *r);
#endif
