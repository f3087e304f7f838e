/* stack: every thread's stack of one process. The threads are stopped together only while their registers are
 * read and their stacks unwound to bare PCs (elfutils' unwinder; tables loaded before the stop); naming frames
 * (libdw) happens after the process runs again. Per-thread CPU% is measured over an interval that spans the
 * preparation, the capture and the naming, so it costs no extra wall time. */
#ifndef DIAGTOP_STACK_H
#define DIAGTOP_STACK_H
#include <signal.h>
#include <stddef.h>

#include "collect/thread_wait.h"
#include "frame.h"

#define STACK_MAX_FRAMES 256

struct stack_thread {
    int tid;
    char name[64];     /* raw bytes of /proc/PID/task/TID/comm */
    char state;        /* before the stop */
    double cpu_percent; /* over the sample around the capture (the stop itself excluded); -1 when not sampled */
    struct unwind_frame pcs[STACK_MAX_FRAMES];
    int npcs;
    struct stack_frame *frames; /* symbolized (inlined calls expanded) */
    int nframes;
    char mark[160];    /* what else to say of it ("took SIGSEGV" in a core); "" when nothing */
    char error[128]; /* why unwinding stopped early, "" when it reached the outermost frame */
    int capture_error; /* error says how the capture went (--no-stop: running, woke up), not where unwinding
                        * stopped: no outermost frame clears it */
    int left_running;  /* in uninterruptible sleep (D): never stopped, its stack read from memory as it slept */
    struct thread_wait *wait; /* what it was blocked on, read just before the stop and checked against its stack
                               * (the same pc); NULL when running, woken meanwhile or not asked for */
};

struct stack_result {
    int pid;
    char comm[64];
    struct stack_thread *threads;
    int nthreads;
    double stopped_ms;  /* how long the threads were stopped */
    double total_ms;    /* the whole capture */
    int target_was_stopped; /* it was stopped (SIGSTOP) before and stays stopped */
    int not_stopped;        /* --no-stop: read from the running process, nothing was stopped */
    int offline;            /* read from a core: no thread names, states, CPU or stop */
};

struct stack_cache; /* per-process state kept across snapshots (unwind caches, symbol tables) */

struct stack_options {
    int tid;            /* 0: all threads; else only this one */
    int source;         /* file:line and inlined frames */
    double cpu_sample;  /* seconds of CPU sampling, starting before the stop (the capture overlaps it); 0: none */
    double timeout;     /* seconds allowed for every thread to stop */
    int no_stop;        /* stop nothing: threads blocked in a system call are unwound from a copy of their stack
                         * (/proc/PID/task/TID/syscall gives sp and pc); running ones are listed as running */
    int waits;          /* say what each blocked thread waits on (collect/thread_wait) */
    const volatile sig_atomic_t *cancel;
    struct stack_cache *cache; /* NULL: one-shot */
};

void stack_options_default(struct stack_options *o);
int stack_capture(int pid, const struct stack_options *o, struct stack_result *out, char *err, size_t errlen);
void stack_result_free(struct stack_result *r);

/* Whether a (non-inlined) frame of this function is the last of a Go stack: a switch between a goroutine's stack and
 * its thread's (runtime.goexit, mcall, systemstack, morestack) or a thread's first frame (runtime.clone, rt0_go). */
int stack_go_end(const char *function);

/* Whether a (non-inlined) frame of this function is where a thread's stack begins: a Go end (above), runtime.mstart,
 * or glibc's clone, clone3, start_thread, _start, __libc_start_main, __libc_start_call_main. */
int stack_outermost(const char *function);

/* Ends a symbolized thread where its stack is its own: a Go thread at the first stack switch or thread's first frame
 * (stack_go_end), dropping the frames beyond and the unwind error they ended in; a stack whose unwinding failed
 * after an outermost frame, at the last such frame, without the error. A failure before any outermost frame (in the
 * middle of the program's code) keeps its error, and so does a capture_error. */
void stack_trim(struct stack_thread *t);

struct modules;
struct symbolizer;
/* Symbolizes every thread's PCs into frames (stack_trim applied). one_shot: the modules, told first every address
 * they will be asked about (modules_expect: the threads' lookups and the nalso of also, which the caller looks up
 * after this), so that only the DWARF those need is inflated; NULL: a kept Dwfl. */
void stack_name_frames(struct modules *one_shot, const unsigned long long *also, size_t nalso, struct symbolizer *sy,
                       struct stack_result *r, int source);

struct stack_cache *stack_cache_new(void);
void stack_cache_free(struct stack_cache *c);
#endif
