/* diagtop_note: the note diagtop adds to the cores it writes, beside the kernel's (name "DIAGTOP", type 1): when
 * the process was stopped, on the monotonic clock (a Go runtime's clock: how long each goroutine had waited) and
 * on the wall clock. Other readers (gdb, eu-stack, readelf) skip a note they do not know. */
#ifndef DIAGTOP_DIAGTOP_NOTE_H
#define DIAGTOP_DIAGTOP_NOTE_H
#include <stdint.h>

#define DIAGTOP_NOTE_NAME "DIAGTOP"
#define DIAGTOP_NT_TAKEN 1

struct diagtop_note_taken {
    int64_t monotonic_ns, realtime_ns;
};
#endif
