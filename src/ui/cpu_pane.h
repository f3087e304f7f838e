/* cpu_pane: C on a process whose runtime has no profiler of its own (any native program): diagtop's sampler runs
 * until a second C or Esc, and the pane follows it live, once a second, like py-spy's `top`: the top functions
 * (%own, %total, own and total time; s sorts), Enter on one for its callers and callees, t for one thread, F for
 * an icicle view. The header says how many samples, for how long, by which method (perf or ptrace) and why. */
#ifndef DIAGTOP_CPU_PANE_H
#define DIAGTOP_CPU_PANE_H
#include "pane.h"

extern const struct pane_class cpu_pane_class;
#endif
