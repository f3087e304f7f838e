/* The profiler targets' unit of work: a loop whose time is proportional to n, kept by the compiler (its result
 * goes to a volatile), written in place so that the function using it is itself the innermost frame of its
 * samples. Used by hotspots.c and stripme.c, whose ratios of work the profile tests check. */
#ifndef DIAGTOP_TARGET_SPIN_H
#define DIAGTOP_TARGET_SPIN_H

static volatile unsigned long sink;

#define SPIN(n)                                                                                                  \
    do {                                                                                                         \
        unsigned long s_ = sink;                                                                                 \
        for (unsigned long i_ = 0; i_ < (n); i_++) s_ = s_ * 6364136223846793005ULL + i_;                        \
        sink += s_;                                                                                              \
    } while (0)
#endif
