/* cmd_analyze_hprof: placeholder until its reader lands (this file is replaced by it). */
#include "cmd_analyze.h"

#include <stdio.h>

int cmd_analyze_hprof(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs("diagtop analyze: this file kind is not supported yet\n", stderr);
    return 2;
}
