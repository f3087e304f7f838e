/* dump_path: where core files (and every other capture: heap dumps, profiles) go when no path is given. The first of: the --dump-dir option, $DIAGTOP_DUMP_DIR,
 * the dump_dir setting of the config file, the current directory if writable, $XDG_STATE_HOME/diagtop/dumps
 * (created 0700). Every front end (CLI, TUI, later the HTTP API) follows the same rule. */
#ifndef DIAGTOP_DUMP_PATH_H
#define DIAGTOP_DUMP_PATH_H
#include <stddef.h>

/* option and configured may be NULL or "". Returns 0 with the directory in buf, or -1 with a reason. */
int dump_directory(const char *option, const char *configured, char *buf, size_t bufsz, char *err, size_t errlen);
#endif
