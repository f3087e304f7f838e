#include "cmd_analyze.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char cmd_analyze_usage[] =
    "usage: diagtop analyze FILE.hprof [OPTIONS]   a Java heap dump (HPROF); --help after the file says more\n"
    "       diagtop analyze CORE [OPTIONS]         an ELF core file; --help after the file says more\n"
    "  read offline, on this machine or another: the process that wrote the file need not exist\n";

enum file_kind { KIND_UNKNOWN, KIND_HPROF, KIND_CORE };

/* What the first bytes say: HPROF starts with "JAVA PROFILE 1.0.", a core with the ELF magic and type ET_CORE. */
static enum file_kind sniff(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return KIND_UNKNOWN;
    }
    unsigned char head[32] = {0};
    ssize_t n = pread(fd, head, sizeof head, 0);
    close(fd);
    if (n >= 18 && memcmp(head, "JAVA PROFILE 1.0.", 17) == 0) return KIND_HPROF;
    if (n >= 18 && memcmp(head, "\177ELF", 4) == 0) {
        unsigned type = head[5] == 2 ? (unsigned)head[16] << 8 | head[17] : (unsigned)head[17] << 8 | head[16];
        if (type == 4) return KIND_CORE;
        snprintf(err, errlen, "%s: an ELF file but not a core (type %u)", path, type);
        return KIND_UNKNOWN;
    }
    snprintf(err, errlen, "%s: neither an HPROF heap dump nor an ELF core", path);
    return KIND_UNKNOWN;
}

/* The first argument that is not an option names the file (options of both readers take their value joined with
 * '=' or as the next word; the first plain word is the file either way, since it comes first in the usage). */
static const char *first_file(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (argv[i][0] != '-') return argv[i];
    return NULL;
}

int cmd_analyze(int argc, char **argv)
{
    const char *file = first_file(argc, argv);
    if (!file) {
        for (int i = 1; i < argc; i++)
            if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
                fputs(cmd_analyze_usage, stdout);
                return 0;
            }
        fputs(cmd_analyze_usage, stderr);
        return 2;
    }
    char err[512];
    switch (sniff(file, err, sizeof err)) {
    case KIND_HPROF: return cmd_analyze_hprof(argc, argv);
    case KIND_CORE: return cmd_analyze_core(argc, argv);
    default: fprintf(stderr, "diagtop analyze: %s\n", err); return 2;
    }
}
