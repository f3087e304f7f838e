/* settings: what the user chose for the monitor (columns, sort, delay, tree, threads, dump directory), their
 * defaults and their text form (key=value lines). Reading and writing the config file is app/config_file's. */
#ifndef DIAGTOP_SETTINGS_H
#define DIAGTOP_SETTINGS_H
#include <stddef.h>
#include <sys/types.h>

#include "render/columns.h"
#include "render/procview.h"

struct settings {
    enum column_id cols[COL_COUNT];
    int ncols;
    enum column_id sort;
    int reverse;
    double delay; /* seconds */
    int tree, show_threads;
    int meters_graph;     /* the header's CPU, memory and swap meters drawn as graphs of their recent past (g) */
    char dump_dir[1024];  /* where core files and profiles go ("": the default rules of dump_path) */
    double agent_timeout; /* seconds for each exchange with a runtime's agent */
    char drop_frames[512]; /* heap profiles: a regex of more allocation wrappers to skip when naming a row ("": none) */
};

void settings_defaults(struct settings *s);
/* Parses one "key=value" line onto s; returns 0 or -1. */
int settings_apply_line(struct settings *s, const char *line);
/* Serializes s into buf (the config file's text). */
void settings_format(const struct settings *s, char *buf, size_t bufsz);
#endif
