/* Test target for profiling a binary without symbols: the Makefile also builds build/targets/stripme-stripped, a
 * copy with every symbol and all debug info removed (strip --strip-all), whose hot frames can only be named
 * module+offset; the offsets are checked against this unstripped build's symbol table (nm). The main thread
 * spends its time in two functions at a ratio of work of 3:1, spin_hot and spin_warm. Prints "ready". noipa keeps
 * GCC from merging, cloning or inlining them. */
#include <stdio.h>

#include "spin.h"

#define HOT __attribute__((noipa))
#define UNIT 20000

HOT static void spin_hot(void) { SPIN(3UL * UNIT); }
HOT static void spin_warm(void) { SPIN(1UL * UNIT); }

int main(void)
{
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        spin_hot();
        spin_warm();
    }
}
