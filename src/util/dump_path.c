#include "dump_path.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"

int dump_directory(const char *option, const char *configured, char *buf, size_t bufsz, char *err, size_t errlen)
{
    const char *env = getenv("DIAGTOP_DUMP_DIR");
    const char *chosen = option && *option ? option : env && *env ? env : configured && *configured ? configured : NULL;
    if (chosen) {
        if (dump_path_absolute(chosen, buf, bufsz) == 0) return 0;
        snprintf(err, errlen, "cannot tell where %s is: the current directory is gone", chosen);
        return -1;
    }
    if (access(".", W_OK) == 0 && getcwd(buf, bufsz)) return 0;
    const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    if (state && *state == '/') snprintf(buf, bufsz, "%s/diagtop/dumps", state);
    else if (home && *home) snprintf(buf, bufsz, "%s/.local/state/diagtop/dumps", home);
    else {
        snprintf(err, errlen, "no writable dump directory: use --dump-dir");
        return -1;
    }
    if (fileio_mkdirs(buf, 0700) < 0) {
        snprintf(err, errlen, "cannot create %s", buf);
        return -1;
    }
    return 0;
}

int dump_path_absolute(const char *path, char *buf, size_t bufsz)
{
    if (path[0] == '/') {
        snprintf(buf, bufsz, "%s", path);
        return 0;
    }
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) return -errno;
    while (path[0] == '.' && path[1] == '/') /* ./x is x: the message shows the plain path */
        for (path += 2; *path == '/'; path++) {}
    if (!strcmp(path, ".") || !*path) snprintf(buf, bufsz, "%s", cwd);
    else snprintf(buf, bufsz, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", path);
    return 0;
}
