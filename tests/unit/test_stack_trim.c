/* Where a Go thread's stack ends: at a stack switch or the thread's first frame, whatever the unwinder read past it. */
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
    stack_trim_go(t);
    CHECK(t->nframes == 11);
    CHECK_STR(t->frames[t->nframes - 1].function, "runtime.clone");
    CHECK_STR(t->error, "");
    thread_free(t);
}

static void the_main_thread_ends_at_rt0_go(void)
{
    struct stack_thread *t = THREAD("unwinding stopped: No DWARF information found", "runtime.mstart",
                                    "runtime.rt0_go.abi0", "_start");
    stack_trim_go(t);
    CHECK(t->nframes == 2);
    CHECK_STR(t->error, "");
    thread_free(t);
}

static void a_goroutine_ends_at_goexit_and_g0_at_mcall(void)
{
    struct stack_thread *t = THREAD("", "main.spinLeaf", "main.main.func1", "runtime.goexit.abi0", "main.junk");
    stack_trim_go(t);
    CHECK(t->nframes == 3);
    thread_free(t);
    t = THREAD("unwinding stopped: x", "runtime.schedule", "runtime.park_m", "runtime.mcall", "runtime.clone");
    stack_trim_go(t);
    CHECK(t->nframes == 3);
    CHECK_STR(t->frames[2].function, "runtime.mcall");
    CHECK_STR(t->error, "");
    thread_free(t);
}

static void a_name_that_only_begins_like_an_end_is_not_one(void)
{
    struct stack_thread *t = THREAD("unwinding stopped: x", "runtime.cloneish", "runtime.mcallers", "main.main");
    stack_trim_go(t);
    CHECK(t->nframes == 3);
    CHECK_STR(t->error, "unwinding stopped: x");
    thread_free(t);
}

static void an_inlined_call_is_not_an_end(void)
{
    struct stack_thread *t = THREAD("unwinding stopped: x", "+runtime.mcall", "main.f", "main.g");
    stack_trim_go(t);
    CHECK(t->nframes == 3);
    CHECK_STR(t->error, "unwinding stopped: x");
    thread_free(t);
}

static void a_cgo_thread_may_end_at_mstart(void)
{
    struct stack_thread *t = THREAD("unwinding stopped: x", "runtime.futex", "runtime.mstart");
    stack_trim_go(t);
    CHECK(t->nframes == 2);
    CHECK_STR(t->error, "");
    thread_free(t);
}

static void a_truncated_c_stack_keeps_its_error(void)
{
    struct stack_thread *t = THREAD("unwinding stopped: x", "read", "reader", "start_thread");
    stack_trim_go(t);
    CHECK(t->nframes == 3);
    CHECK_STR(t->error, "unwinding stopped: x");
    thread_free(t);
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
    RUN(a_truncated_c_stack_keeps_its_error);
    CHECK_EXIT();
}
