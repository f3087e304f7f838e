/* Where a thread's stack ends: a Go thread at a stack switch or the thread's first frame, whatever the unwinder read
 * past it; any thread at an outermost frame past which unwinding failed. A failure in the program's own code keeps
 * its error. */
#include "check.h"
#include "actions/stack/stack.h"
#include <stdlib.h>
#include <string.h>

/* A thread whose frames are these functions, innermost first ("+" before a name: an inlined call), unwinding
 * having stopped on error. */
static struct stack_thread *thread_of(const char *error, const char *const *functions, int n)
{
    struct stack_thread *t = calloc(1, sizeof *t);
    t->frames = calloc((size_t)n, sizeof *t->frames);
    for (int i = 0; i < n; i++) {
        const char *f = functions[i];
        t->frames[i].inlined = f[0] == '+';
        t->frames[i].function = strdup(f + (f[0] == '+'));
        t->frames[i].pc = 0x401000u + 16u * (unsigned)i;
    }
    t->nframes = n;
    snprintf(t->error, sizeof t->error, "%s", error);
    return t;
}

static void thread_free(struct stack_thread *t)
{
    for (int i = 0; i < t->nframes; i++) stack_frame_clear(&t->frames[i]);
    free(t->frames);
    free(t);
}

#define THREAD(error, ...)                                                                                           \
    thread_of(error, (const char *const[]){__VA_ARGS__}, sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))

static void a_stale_word_above_a_new_thread_is_not_a_frame(void)
{
    /* the word above a pooled g0 stack held a return address into the runtime, and unwinding failed after it */
    struct stack_thread *t = THREAD("unwinding stopped: No DWARF information found", "runtime.futex",
                                    "runtime.futexsleep", "runtime.notesleep", "+runtime.mPark", "runtime.stopm",
                                    "runtime.findRunnable", "runtime.schedule", "runtime.mstart1", "runtime.mstart0",
                                    "runtime.mstart", "runtime.clone", "runtime.gcBgMarkWorker");
    stack_trim(t);
    CHECK(t->nframes == 11);
    CHECK_STR(t->frames[t->nframes - 1].function, "runtime.clone");
    CHECK_STR(t->error, "");
    thread_free(t);
}

static void the_main_thread_ends_at_rt0_go(void)
{
    struct stack_thread *t = THREAD("unwinding stopped: No DWARF information found", "runtime.mstart",
                                    "runtime.rt0_go.abi0", "_start");
    stack_trim(t);
    CHECK(t->nframes == 2);
    CHECK_STR(t->error, "");
    thread_free(t);
}

static void a_goroutine_ends_at_goexit_and_g0_at_mcall(void)
{
    struct stack_thread *t = THREAD("", "main.spinLeaf", "main.main.func1", "runtime.goexit.abi0", "main.junk");
    stack_trim(t);
    CHECK(t->nframes == 3);
    thread_free(t);
    t = THREAD("unwinding stopped: x", "runtime.schedule", "runtime.park_m", "runtime.mcall", "runtime.clone");
    stack_trim(t);
    CHECK(t->nframes == 3);
    CHECK_STR(t->frames[2].function, "runtime.mcall");
    CHECK_STR(t->error, "");
    thread_free(t);
}

static void a_name_that_only_begins_like_an_end_is_not_one(void)
{
    struct stack_thread *t = THREAD("unwinding stopped: x", "runtime.cloneish", "runtime.mcallers", "main.main");
    stack_trim(t);
    CHECK(t->nframes == 3);
    CHECK_STR(t->error, "unwinding stopped: x");
    thread_free(t);
}

static void an_inlined_call_is_not_an_end(void)
{
    struct stack_thread *t = THREAD("unwinding stopped: x", "+runtime.mcall", "main.f", "main.g");
    stack_trim(t);
    CHECK(t->nframes == 3);
    CHECK_STR(t->error, "unwinding stopped: x");
    thread_free(t);
}

static void a_cgo_thread_may_end_at_mstart(void)
{
    struct stack_thread *t = THREAD("unwinding stopped: x", "runtime.futex", "runtime.mstart");
    stack_trim(t);
    CHECK(t->nframes == 2);
    CHECK_STR(t->error, "");
    thread_free(t);
}

static void a_cgo_thread_ends_at_mstart_not_in_its_c_trampoline(void)
{
    /* what sysmon showed: mstart's caller is crosscall_amd64 (C without unwind info), named by its section symbol */
    struct stack_thread *t = THREAD("unwinding stopped: no matching address range", "runtime.futex",
                                    "runtime.sysmon", "runtime.mstart1", "runtime.mstart0", "runtime.mstart.abi0",
                                    "runtime/cgo(.text)");
    stack_trim(t);
    CHECK(t->nframes == 5);
    CHECK_STR(t->frames[4].function, "runtime.mstart.abi0");
    CHECK_STR(t->error, "");
    thread_free(t);
}

static void a_c_thread_that_failed_past_its_start_ends_there(void)
{
    struct stack_thread *t = THREAD("unwinding stopped: x", "read", "reader", "start_thread", "__clone3", "junk");
    stack_trim(t);
    CHECK(t->nframes == 4);
    CHECK_STR(t->frames[3].function, "__clone3");
    CHECK_STR(t->error, "");
    thread_free(t);
    t = THREAD("unwinding stopped: x", "main", "__libc_start_call_main", "__libc_start_main_impl", "_start", "?");
    stack_trim(t);
    CHECK(t->nframes == 4);
    CHECK_STR(t->error, "");
    thread_free(t);
}

static void a_complete_c_stack_keeps_every_frame(void)
{
    /* __libc_start_call_main is outermost, but the unwind went on cleanly past it: nothing is dropped */
    struct stack_thread *t = THREAD("", "main", "__libc_start_call_main", "__libc_start_main", "_start");
    stack_trim(t);
    CHECK(t->nframes == 4);
    CHECK_STR(t->error, "");
    thread_free(t);
}

static void a_truncated_c_stack_keeps_its_error(void)
{
    /* stopped in the program's own code: a real failure */
    struct stack_thread *t = THREAD("unwinding stopped: x", "read", "reader", "worker");
    stack_trim(t);
    CHECK(t->nframes == 3);
    CHECK_STR(t->error, "unwinding stopped: x");
    thread_free(t);
    t = THREAD("unwinding stopped: x", "0x7f0000001000");
    t->frames[0].function = (free(t->frames[0].function), NULL); /* JIT code: no symbol */
    stack_trim(t);
    CHECK(t->nframes == 1);
    CHECK_STR(t->error, "unwinding stopped: x");
    thread_free(t);
}

static void an_outermost_frame_only_inlined_or_by_prefix_is_not_one(void)
{
    struct stack_thread *t = THREAD("unwinding stopped: x", "f", "+start_thread", "clone_worker", "_starts");
    stack_trim(t);
    CHECK(t->nframes == 4);
    CHECK_STR(t->error, "unwinding stopped: x");
    thread_free(t);
}

static void a_note_about_the_capture_is_never_cleared(void)
{
    /* --no-stop: the thread woke up while its stack was read; reaching its first frame does not make it consistent */
    struct stack_thread *t = THREAD("woke up while being read", "read", "start_thread", "__clone3");
    t->capture_error = 1;
    stack_trim(t);
    CHECK(t->nframes == 3);
    CHECK_STR(t->error, "woke up while being read");
    thread_free(t);
    t = THREAD("woke up while being read", "runtime.futex", "runtime.mcall", "junk");
    t->capture_error = 1;
    stack_trim(t);
    CHECK(t->nframes == 2);
    CHECK_STR(t->error, "woke up while being read");
    thread_free(t);
}

static void the_outermost_names(void)
{
    const char *yes[] = {"runtime.mstart", "runtime.mstart.abi0", "runtime.goexit", "runtime.rt0_go.abi0",
                         "runtime.clone", "clone", "__clone", "clone3", "__clone3", "_start", "start_thread",
                         "__libc_start_main", "__libc_start_main_impl", "__libc_start_call_main"};
    const char *no[] = {"runtime.mstart1", "runtime.mstart0", "main.main", "main", "thread_start", "clone_x", NULL};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) CHECK(stack_outermost(yes[i]));
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) CHECK(!stack_outermost(no[i]));
}

int main(void)
{
    check_suite = "stack_trim";
    RUN(a_stale_word_above_a_new_thread_is_not_a_frame);
    RUN(the_main_thread_ends_at_rt0_go);
    RUN(a_goroutine_ends_at_goexit_and_g0_at_mcall);
    RUN(a_name_that_only_begins_like_an_end_is_not_one);
    RUN(an_inlined_call_is_not_an_end);
    RUN(a_cgo_thread_may_end_at_mstart);
    RUN(a_cgo_thread_ends_at_mstart_not_in_its_c_trampoline);
    RUN(a_c_thread_that_failed_past_its_start_ends_there);
    RUN(a_complete_c_stack_keeps_every_frame);
    RUN(a_truncated_c_stack_keeps_its_error);
    RUN(an_outermost_frame_only_inlined_or_by_prefix_is_not_one);
    RUN(a_note_about_the_capture_is_never_cleared);
    RUN(the_outermost_names);
    CHECK_EXIT();
}
