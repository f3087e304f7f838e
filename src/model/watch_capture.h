/* watch_capture: one capture `diagtop watch` takes when a condition holds: a core (from a snapshot where safe),
 * the stacks as text, a CPU profile (pprof, or the runtime's own file), the runtime's heap summary (JSON), or a
 * command run with the trigger in its environment. Each file is base + its extension (.core, .stack.txt, .pb.gz,
 * .heap.json), 0600, never replacing one. */
#ifndef DIAGTOP_WATCH_CAPTURE_H
#define DIAGTOP_WATCH_CAPTURE_H
#include "actions/target/signal_trap.h"
#include "watch.h"

struct watch_firing {
    int pid;
    const char *base;      /* DIR/<comm>_<pid>_<trigger>_<UTC time> */
    const char *trigger;   /* the condition's name */
    const char *value;     /* the value that crossed, as text */
    const char *last_file; /* the file an earlier capture of this firing wrote ("" none): exec's DIAGTOP_FILE */
    struct signal_trap *held; /* a signal or exit firing: every thread held stopped by it (a dump uses that stop;
                               * a stack or a profile cannot be taken then) */
};

/* Takes a for f, into ev (kind WATCH_EV_CAPTURE, _SKIPPED or _FAILED, with the file, size, pause and a detail).
 * *written counts the bytes this watch wrote, against c->max_disk. */
void watch_capture_take(const struct watch_config *c, const struct watch_action *a, const struct watch_firing *f,
                        unsigned long long *written, struct watch_event *ev);
#endif
