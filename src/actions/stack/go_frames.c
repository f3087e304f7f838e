#include "go_frames.h"

#include <stdio.h>

#include "gopclntab.h"
#include "stack.h"

int go_frames_unwind(const struct gopclntab *t, unsigned long long bias, const struct mem_reader *mem,
                     unsigned long long pc, unsigned long long sp, struct unwind_frame *out, int max, char *why,
                     size_t whylen)
{
    int n = 0;
    why[0] = '\0';
    while (n < max) {
        /* A goroutine that has not run yet resumes at its function's entry: that pc is its own, not a return */
        struct gopclntab_func fn;
        int entry = gopclntab_find(t, pc - bias, &fn) == 0 && fn.entry == pc - bias;
        unsigned long long lookup = entry ? pc - bias : pc - 1 - bias;
        out[n++] = (struct unwind_frame){.pc = pc, .exact = entry};
        if (!entry && gopclntab_find(t, lookup, &fn) < 0) {
            snprintf(why, whylen, "no Go function at 0x%llx: the walk ends here", pc);
            return n;
        }
        if (stack_go_end(gopclntab_name(t, &fn))) return n;
        long long delta = gopclntab_spdelta(t, &fn, lookup);
        unsigned long long cfa = sp + (unsigned long long)delta + 8, ra;
        if (delta < 0) {
            snprintf(why, whylen, "no frame size for 0x%llx in the program's tables", pc);
            return n;
        }
        if (mem_read(mem, cfa - 8, &ra, sizeof ra) < 0) {
            snprintf(why, whylen, "cannot read the return address at 0x%llx", cfa - 8);
            return n;
        }
        if (ra == 0) return n;
        pc = ra;
        sp = cfa;
    }
    snprintf(why, whylen, "more than %d frames", max);
    return n;
}
