/* go_runtime: a Go program's goroutines read from its memory with no agent: the runtime's own list
 * (runtime.allgs, read after runtime.allglen as the runtime requires) and each g's id, status, wait reason, saved
 * registers and creation site. Where those live comes from the program's DWARF (the variables' addresses, the
 * layout of runtime.g, runtime.gobuf, runtime.stack and runtime.m), never from a table of versions: a field whose
 * size is not the expected one is an unknown layout, and nothing is read. The bytes come from a mem_reader: a
 * core's or a live process's. */
#ifndef DIAGTOP_GO_RUNTIME_H
#define DIAGTOP_GO_RUNTIME_H
#include <elfutils/libdw.h>
#include <stddef.h>

#include "actions/target/mem_reader.h"

/* Where the runtime keeps what is read, in the process's addresses (the module's bias added). */
struct go_layout {
    unsigned long long allgs, allglen, wait_reasons, init_time; /* variables; wait_reasons and init_time 0: absent */
    int nwait_reasons;
    size_t g_size;
    size_t goid, status, wait_reason, wait_since, gopc, startpc, m; /* offsets in runtime.g */
    size_t sched_sp, sched_pc, sched_bp;                           /* runtime.g.sched's, from the g */
    size_t stack_hi;                                               /* runtime.g.stack.hi: where its stack ends */
    size_t syscall_sp, syscall_pc;                                 /* where a goroutine in a system call was */
    size_t m_procid;                                               /* offset in runtime.m: the thread's id */
};

/* Reads the layout from a Go program's DWARF (bias: its load bias). Returns 0, or -1 with the reason (not Go, no
 * DWARF, a field missing or of another size). */
int go_layout_read(Dwarf *dw, unsigned long long bias, struct go_layout *out, char *err, size_t errlen);

/* Whether every field lies within runtime.g (what DWARF says is checked, not believed). 0, or -1. */
int go_layout_check(const struct go_layout *l);

enum go_status { /* runtime/runtime2.go's _G constants, the _Gscan bit removed */
    GO_IDLE = 0, GO_RUNNABLE = 1, GO_RUNNING = 2, GO_SYSCALL = 3, GO_WAITING = 4, GO_DEAD = 6, GO_COPYSTACK = 8,
    GO_PREEMPTED = 9,
};

struct go_goroutine {
    long long id;
    unsigned status;        /* enum go_status */
    char wait_reason[48];   /* the runtime's words ("chan receive"), "" when not waiting */
    double waiting_since_s; /* since the runtime started, as the GC last recorded it; -1 when not recorded */
    long long wait_since_ns; /* the runtime's clock (CLOCK_MONOTONIC) then; 0 when not recorded */
    unsigned long long pc, sp, bp; /* where it resumes (its saved context, or where its system call was made) */
    unsigned long long stack_hi;   /* the top of its stack: its frames lie in [sp, stack_hi) */
    unsigned long long gopc, startpc;
    int tid;                /* the thread running it (running or in a system call), 0 when none */
};

struct arena;
/* Every goroutine not dead, in the runtime's order. *out is malloc'd; scratch (NULL: malloc) holds what is read
 * meanwhile. Returns 0, or -1 with the reason. */
int go_goroutines_read(const struct go_layout *l, const struct mem_reader *mem, struct arena *scratch,
                       struct go_goroutine **out, int *n, char *err, size_t errlen);
/* How many goroutines the runtime has ever had (runtime.allglen), read as it is: an estimate before a stop. */
long long go_goroutines_count(const struct go_layout *l, const struct mem_reader *mem);
/* "running", "chan receive"...: the status as Go's tracebacks name it ("waiting" gives way to the wait reason). */
const char *go_status_name(unsigned status);
#endif
