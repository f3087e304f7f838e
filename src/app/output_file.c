#include "output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "util/fileio.h"

FILE *output_open(const char *cmd, const char *path)
{
    if (!path) return stdout;
    int fd = fileio_create_private(AT_FDCWD, path, O_WRONLY);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(stderr, "diagtop %s: cannot create %s: %s%s\n", cmd, path, strerror(errno),
                errno == EEXIST ? " (diagtop never overwrites: choose another name)" : "");
        if (fd >= 0) close(fd);
    }
    return f;
}

int output_close(const char *cmd, const char *path, FILE *f, int bad)
{
    if (f == stdout) return bad || fflush(stdout) != 0;
    bad |= fclose(f) != 0;
    if (bad) {
        fprintf(stderr, "diagtop %s: cannot write %s: %s\n", cmd, path, strerror(errno));
        unlink(path);
    }
    return bad;
}

int output_write(const char *cmd, const char *path, const void *data, size_t len)
{
    FILE *f = output_open(cmd, path);
    if (!f) return 1;
    if (!len) len = strlen(data);
    return output_close(cmd, path, f, fwrite(data, 1, len, f) != len);
}
