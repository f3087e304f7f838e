/* config_file: the settings file, $XDG_CONFIG_HOME/diagtop/config (default ~/.config/diagtop/config): loaded over
 * the defaults at start, written atomically (temporary file, then rename) when a setting changes in the monitor. */
#ifndef DIAGTOP_CONFIG_FILE_H
#define DIAGTOP_CONFIG_FILE_H
#include <stddef.h>

#include "model/settings.h"

/* The config file's path into buf; returns 0 or -1 when no home directory is known. */
int config_file_path(char *buf, size_t bufsz);
/* Loads the file over s. A missing file is not an error; a bad line is skipped with a warning in err (returns 1).
 * Returns 0 when all was read cleanly. */
int config_file_load(struct settings *s, const char *path, char *err, size_t errlen);
/* The defaults with the user's config file over them, for a one-shot command (which shows no warnings: the
 * monitor does). */
void config_file_settings(struct settings *s);
int config_file_save(const struct settings *s, const char *path, char *err, size_t errlen);
#endif
