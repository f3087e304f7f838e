#include "procactivity.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fileio.h"
#include "cgroup_name.h"
#include "procinfo.h"

int procactivity_parse_sched(const char *text, struct proc_sched *out)
{
    /* read for every process at every refresh: strtoull, a fraction of sscanf's cost */
    unsigned long long *fields[] = {&out->run_ns, &out->wait_ns, &out->switches};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        char *end;
        while (*text == ' ') text++;
        if (*text < '0' || *text > '9') return -1;
        errno = 0;
        *fields[i] = strtoull(text, &end, 10);
        if (errno) return -1;
        text = end;
    }
    return 0;
}

int procactivity_parse_io(const char *text, struct proc_io *out)
{
    struct pi_io io;
    procinfo_parse_io(text, &io);
    if (io.read_bytes < 0 || io.write_bytes < 0) return -1;
    *out = (struct proc_io){(unsigned long long)io.read_bytes, (unsigned long long)io.write_bytes};
    return 0;
}

int procactivity_read_unit(int procfd, const char *dir, char *out, size_t outsz)
{
    char path[96], buf[4096];
    snprintf(path, sizeof path, "%s/cgroup", dir);
    ssize_t n = fileio_read_at(procfd, path, buf, sizeof buf);
    if (n < 0) return (int)n;
    cgroup_unit(buf, out, outsz);
    return 0;
}
