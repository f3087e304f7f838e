/* options: the command line of the monitor (TUI and batch). Subcommands (stack, info, dump, …) parse their own. */
#ifndef DIAGTOP_OPTIONS_H
#define DIAGTOP_OPTIONS_H
#include <stddef.h>

#include "model/settings.h"

struct options {
    int batch, json, iterations; /* iterations 0: until interrupted */
    int no_color;
    int help, version;
    /* Settings given on the command line override the config file for this run. */
    int delay_set, sort_set, columns_set, tree_set, threads_set;
    struct settings cli;
    int user_set;
    char user[64];
    int npids;
    int pids[PROCVIEW_MAX_PIDS];
};

/* Parses argv; returns 0, or -1 with a one-line reason in err. */
int options_parse(struct options *o, int argc, char **argv, char *err, size_t errlen);
/* Puts the command-line settings over s (loaded from defaults and the config file). */
void options_apply(const struct options *o, struct settings *s);
/* The usage text printed by --help. */
extern const char options_usage[];
#endif
