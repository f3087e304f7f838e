#include "config_file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fileio.h"

int config_file_path(char *buf, size_t bufsz)
{
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    if (xdg && *xdg == '/') snprintf(buf, bufsz, "%s/diagtop/config", xdg);
    else if (home && *home) snprintf(buf, bufsz, "%s/.config/diagtop/config", home);
    else return -1;
    return 0;
}

void config_file_settings(struct settings *s)
{
    char config[4096], ignored[256];
    settings_defaults(s);
    if (config_file_path(config, sizeof config) == 0) config_file_load(s, config, ignored, sizeof ignored);
}

int config_file_load(struct settings *s, const char *path, char *err, size_t errlen)
{
    char text[8192];
    ssize_t n = fileio_read_at(AT_FDCWD, path, text, sizeof text);
    if (n == -ENOENT) return 0;
    if (n < 0) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror((int)-n));
        return 1;
    }
    int bad = 0, lineno = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        lineno++;
        if (settings_apply_line(s, line) < 0 && !bad) {
            snprintf(err, errlen, "%s:%d: ignoring unknown setting", path, lineno);
            bad = 1;
        }
    }
    return bad;
}

int config_file_save(const struct settings *s, const char *path, char *err, size_t errlen)
{
    char dir[4096], text[4096];
    snprintf(dir, sizeof dir, "%s", path);
    int rc = fileio_mkdirs(dirname(dir), 0700);
    if (rc < 0) {
        snprintf(err, errlen, "cannot create the directory of %s: %s", path, strerror(-rc));
        return rc;
    }
    settings_format(s, text, sizeof text);
    return fileio_write_atomic(path, text, strlen(text), 0644, err, errlen);
}
