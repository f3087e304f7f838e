/* go_frames: a goroutine's stack from where it will resume (its saved pc and sp: a parked goroutine's context, or
 * where its system call was made), walked with the program's own frame sizes (gopclntab) as Go's traceback walks
 * it: each frame's return address lies at sp plus the bytes its function has pushed. It ends at the goroutine's
 * first frame (runtime.goexit) or a stack switch. Memory comes from a mem_reader: a core's or a live process's. */
#ifndef DIAGTOP_GO_FRAMES_H
#define DIAGTOP_GO_FRAMES_H
#include <stddef.h>

#include "actions/target/mem_reader.h"
#include "frame.h"

struct gopclntab;

/* Writes at most max frames (each pc a return address, looked up at pc - 1 as Go's traceback does, but for a
 * goroutine not yet started, which resumes at its function's entry: exact), returns
 * how many; why gets the reason when the walk ended before the goroutine's first frame ("" otherwise). bias: the
 * program's load bias. */
int go_frames_unwind(const struct gopclntab *t, unsigned long long bias, const struct mem_reader *mem,
                     unsigned long long pc, unsigned long long sp, struct unwind_frame *out, int max, char *why,
                     size_t whylen);
#endif
