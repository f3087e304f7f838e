/* unwind: the return addresses of a thread's stack, from its registers and its memory, with elfutils' unwinder
 * (libdwfl's frame API): DWARF CFI from .eh_frame, else .debug_frame (also in a separate debug file found by
 * build-id or debuglink, compressed or not), and only then frame pointers. This is what eu-stack uses, so frames
 * match it; diagtop supplies the thread state itself: registers from one PTRACE_GETREGS, memory from a page cache
 * filled with process_vm_readv and shared by every thread of one stop (the process is stopped: memory is
 * constant). Unwind tables come from the process's modules, loaded before the stop (modules_prepare_unwind). */
#ifndef DIAGTOP_UNWIND_H
#define DIAGTOP_UNWIND_H
#include <stddef.h>

#include "frame.h"

struct modules;
struct unwinder;

struct unwinder *unwinder_new(struct modules *m);
void unwinder_free(struct unwinder *u);
/* Before stopping: (re)attaches to the modules' Dwfl when it was rebuilt. Returns 0 or -ENOMEM. */
int unwinder_prepare(struct unwinder *u);
/* In a new stop: memory read in an earlier stop is stale. */
void unwinder_begin(struct unwinder *u);
/* Unwinds thread tid (in a ptrace stop) into frames; returns the count. why gets the reason when unwinding ended
 * before the outermost frame ("" otherwise). */
int unwinder_thread(struct unwinder *u, int tid, struct unwind_frame *frames, int max, char *why, size_t whylen);
/* Unwinds a thread that kept running, from a copy of its registers (DWARF numbering, ARCH_DWARF_REGS values, as
 * arch_regs_dwarf gives them) and of the top of its stack (len bytes that were at stack_addr), as a sampler takes
 * them (perf's sample_stack_user, or a ptrace sampler's process_vm_readv). Only the copy is read. */
/* Copies the top of a thread's stack (up to max bytes from sp) out of process pid, for unwinder_copy: page by
 * page, since process_vm_readv moves whole iovec elements only and the pages past the end of the stack mapping
 * are then simply not read. Returns the bytes copied. */
size_t unwind_copy_stack(int pid, unsigned long long sp, unsigned char *buf, size_t max);
int unwinder_copy(struct unwinder *u, int tid, const unsigned long long *regs, const unsigned char *stack,
                  unsigned long long stack_addr, size_t len, struct unwind_frame *frames, int max, char *why,
                  size_t whylen);
#endif
