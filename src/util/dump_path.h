/* dump_path: where every file diagtop writes goes when no path is given (core files, heap dumps, heap and CPU
 * profiles, the TUI's saved panes). The first of: the --dump-dir option, $DIAGTOP_DUMP_DIR, the dump_dir setting
 * of the config file, the current directory if writable, $XDG_STATE_HOME/diagtop/dumps (else
 * ~/.local/state/diagtop/dumps; created 0700). Every front end (CLI, TUI, HTTP API) follows the same rule, and
 * says the file's absolute path. */
#ifndef DIAGTOP_DUMP_PATH_H
#define DIAGTOP_DUMP_PATH_H
#include <stddef.h>

/* option and configured may be NULL or "". Returns 0 with the directory in buf (absolute), or -1 with a reason. */
int dump_directory(const char *option, const char *configured, char *buf, size_t bufsz, char *err, size_t errlen);
/* path made absolute against the current directory (leading "./" dropped; nothing else is normalised, no link
 * followed): 0, or -errno when the current directory cannot be named. */
int dump_path_absolute(const char *path, char *buf, size_t bufsz);
#endif
