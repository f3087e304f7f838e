#include "tasks.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "text.h"

int tasks_open(struct tasks *it, int procfd, int pid)
{
    char path[64];
    snprintf(path, sizeof path, "%s%d/task", procfd == AT_FDCWD ? "/proc/" : "", pid);
    it->dir = NULL;
    int fd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -errno;
    if (!(it->dir = fdopendir(fd))) {
        int e = errno;
        close(fd);
        errno = e;
        return -e;
    }
    return 0;
}

int tasks_next(struct tasks *it)
{
    struct dirent *de;
    int tid;
    while (it->dir && (de = readdir(it->dir)))
        if (text_parse_pid(de->d_name, &tid) == 0) return tid;
    return 0;
}

void tasks_close(struct tasks *it)
{
    if (it->dir) closedir(it->dir);
    it->dir = NULL;
}
