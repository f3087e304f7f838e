/* settings: what the user chose for the monitor (columns, sort, delay, tree, threads), with defaults, the config
 * file ($XDG_CONFIG_HOME/diagtop/config, written atomically) and the command line on top. */
#ifndef DIAGTOP_SETTINGS_H
#define DIAGTOP_SETTINGS_H
#include <stddef.h>
#include <sys/types.h>

#include "../render/columns.h"
#include "../render/procview.h"

struct settings {
    enum column_id cols[COL_COUNT];
    int ncols;
    enum column_id sort;
    int reverse;
    double delay; /* seconds */
    int tree, show_threads;
    char dump_dir[1024]; /* where core files go ("" : the default rules of cmd_dump) */
};

void settings_defaults(struct settings *s);
/* The config file's path into buf; returns 0 or -1 when no home directory is known. */
int settings_path(char *buf, size_t bufsz);
/* Loads the config file over s. A missing file is not an error; a bad line is skipped with a warning in err
 * (returns 1). Returns 0 when all was read cleanly. */
int settings_load(struct settings *s, const char *path, char *err, size_t errlen);
/* Parses one "key=value" line onto s; returns 0 or -1. */
int settings_apply_line(struct settings *s, const char *line);
/* Serializes s into buf (the config file's text). */
void settings_format(const struct settings *s, char *buf, size_t bufsz);
int settings_save(const struct settings *s, const char *path, char *err, size_t errlen);
#endif
