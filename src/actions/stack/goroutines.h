/* goroutines: a Go program's goroutines read from its memory with no agent, a core's or a live process's: the
 * runtime's list read through the program's DWARF (lang/go_runtime), each stack walked with the program's own
 * frame tables (go_frames), the frames named by the symbolizer. Where the DWARF or the runtime's structures are
 * missing, it says why and the thread stacks stand alone. */
#ifndef DIAGTOP_GOROUTINES_H
#define DIAGTOP_GOROUTINES_H
#include <signal.h>
#include <stddef.h>

#include "actions/target/mem_reader.h"
#include "frame.h"

struct goroutine {
    long long id;
    char state[48];          /* the wait reason ("chan receive"), else the status ("running", "runnable", "syscall") */
    double waiting_since_s;  /* since the runtime started, as the GC last recorded it; -1: not recorded */
    double waited_s;         /* how long it has waited, in a live process (its clock is ours); -1: not known */
    int tid;                 /* the thread running it (running, in a system call), 0: none */
    int system;              /* started by the runtime, not by the program (Go's tracebacks hide these) */
    struct unwind_frame *pcs;
    int npcs;
    struct stack_frame *frames; /* symbolized, inlined calls expanded */
    int nframes;
    unsigned long long gopc, startpc;
    struct stack_frame created_by; /* where its go statement is (function NULL: not known) */
    char error[128];         /* why its stack is not shown, or ended early; "" */
    long long wait_since_ns; /* the runtime's clock when it began waiting, as the GC recorded it; 0: not */
};

struct goroutines {
    int go;                  /* the program is a Go program */
    char why_not[200];       /* a Go program whose goroutines could not be read: why ("" when read) */
    struct goroutine *list;
    int n;
    double stopped_ms;       /* goroutines_capture: how long the threads were stopped */
};

struct modules;
struct symbolizer;

/* Finds the Go program among the modules and reads its goroutines with their PCs from mem into out (out->go 0:
 * not Go). Nothing is named yet: a one-shot caller tells the modules every address first (modules_expect). */
void goroutines_read(struct modules *m, const struct mem_reader *mem, struct goroutines *out);
/* The addresses the goroutines' frames, creation sites and start functions will be looked up at, appended to
 * *addrs (grown; *n counts them). */
int goroutines_addresses(const struct goroutines *gs, unsigned long long **addrs, size_t *n, size_t *cap);
/* Names every goroutine's frames, creation site and start function (system goroutines marked). */
void goroutines_name(struct symbolizer *sy, struct goroutines *gs, int source);
void goroutines_free(struct goroutines *gs);

/* A live Go process's goroutines: its threads stopped (as a stack capture stops them, within timeout seconds)
 * only while the runtime's list and the stacks are read, then named. Returns 0 (out->why_not says when its
 * goroutines could not be read), or -errno with the reason (the process could not be stopped or read). */
int goroutines_capture(int pid, double timeout, const volatile sig_atomic_t *cancel, struct goroutines *out,
                       char *err, size_t errlen);
#endif
