#include "cpu_report.h"

#include <stdlib.h>
#include <string.h>

void cpu_report_free(struct cpu_report *r)
{
    for (int i = 0; i < r->nframes; i++) {
        free(r->frames[i].function);
        free(r->frames[i].module);
        free(r->frames[i].file);
    }
    free(r->frames);
    for (int i = 0; i < r->nstacks; i++) free(r->stacks[i].frames);
    free(r->stacks);
    free(r->threads);
    free(r->saved_path);
    memset(r, 0, sizeof *r);
}
