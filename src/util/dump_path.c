#include "dump_path.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fileio.h"

int dump_directory(const char *option, const char *configured, char *buf, size_t bufsz, char *err, size_t errlen)
{
    const char *env = getenv("DIAGTOP_DUMP_DIR");
    const char *chosen = option && *option ? option : env && *env ? env : configured && *configured ? configured : NULL;
    if (chosen) {
        snprintf(buf, bufsz, "%s", chosen);
        return 0;
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
