/* unwind: program counters of a stopped thread's stack with libunwind, without libunwind-ptrace's per-word
 * ptrace calls: registers come from one PTRACE_GETREGS per thread and memory from a page cache filled with
 * process_vm_readv, shared by every thread of one stop (the process is stopped, so memory does not change).
 * Unwind tables are found by libunwind-ptrace from the mapped ELF files and cached across threads. */
#ifndef DIAGTOP_UNWIND_H
#define DIAGTOP_UNWIND_H
#include <stddef.h>

struct unwinder;

struct unwinder *unwinder_new(int pid);
void unwinder_free(struct unwinder *u);
/* Before stopping: reloads what it knows of the mappings when they changed (exec, dlopen). Returns 0 or -ENOMEM. */
int unwinder_prepare(struct unwinder *u);
/* In a new stop: memory read in an earlier stop is stale. */
void unwinder_begin(struct unwinder *u);
/* Unwinds thread tid (in a ptrace stop) into pcs; returns the count. why gets the reason when unwinding ended
 * before the outermost frame ("" otherwise). */
int unwinder_thread(struct unwinder *u, int tid, unsigned long long *pcs, int max, char *why, size_t whylen);
#endif
