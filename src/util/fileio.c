#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

ssize_t fileio_pread_all(int fd, char *buf, size_t bufsz)
{
    size_t got = 0;
    while (got + 1 < bufsz) {
        ssize_t r = pread(fd, buf + got, bufsz - 1 - got, (off_t)got);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    buf[got] = '\0';
    return (ssize_t)got;
}

ssize_t fileio_pread_once(int fd, char *buf, size_t bufsz)
{
    ssize_t r;
    do r = pread(fd, buf, bufsz - 1, 0);
    while (r < 0 && errno == EINTR);
    if (r < 0) return -errno;
    buf[r] = '\0';
    return r;
}

ssize_t fileio_read_at(int dirfd, const char *path, char *buf, size_t bufsz)
{
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    ssize_t r = fileio_pread_all(fd, buf, bufsz);
    close(fd);
    return r;
}

char *fileio_read_file(int dirfd, const char *path, size_t max, ssize_t *len)
{
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    size_t cap = max < 65536 ? max : 65536, n = 0;
    char *buf = malloc(cap);
    int e = buf ? 0 : ENOMEM;
    /* The buffer grows as the file does: procfs files have no size to ask for beforehand. */
    while (!e) {
        if (n + 1 >= cap) {
            if (cap >= max) break; /* at the limit: what fits is returned */
            size_t grown = cap * 2 < max ? cap * 2 : max;
            char *b = realloc(buf, grown);
            if (!b) {
                e = ENOMEM;
                break;
            }
            buf = b;
            cap = grown;
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) e = errno;
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (e) {
        free(buf);
        errno = e;
        return NULL;
    }
    buf[n] = '\0';
    if (len) *len = (ssize_t)n;
    return buf;
}

char *fileio_read_proc(int procfd, int pid, const char *name, size_t max, ssize_t *len)
{
    char path[128];
    if (procfd == AT_FDCWD) snprintf(path, sizeof path, "/proc/%d/%s", pid, name);
    else snprintf(path, sizeof path, "%d/%s", pid, name);
    return fileio_read_file(procfd, path, max, len);
}

int fileio_mkdirs(const char *path, mode_t mode)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) return -ENAMETOOLONG;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(tmp, mode) < 0 && errno != EEXIST) return -errno;
        *p = '/';
    }
    if (mkdir(tmp, mode) < 0 && errno != EEXIST) return -errno;
    return 0;
}

int fileio_write_full(int fd, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? -errno : -ENOSPC;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int fileio_pwrite_full(int fd, const void *buf, size_t len, off_t at)
{
    const unsigned char *p = buf;
    while (len) {
        ssize_t w = pwrite(fd, p, len, at);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? -errno : -ENOSPC;
        p += w;
        at += w;
        len -= (size_t)w;
    }
    return 0;
}

int fileio_create_private(int dirfd, const char *path, int flags)
{
    int fd = openat(dirfd, path, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    return fd < 0 ? -errno : fd;
}

int fileio_write_atomic(const char *path, const char *data, size_t len, mode_t mode, char *err, size_t errlen)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        snprintf(err, errlen, "path too long: %s", path);
        return -ENAMETOOLONG;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(e));
        return -e;
    }
    int rc = fileio_write_full(fd, data, len);
    if (rc < 0) {
        close(fd);
        unlink(tmp);
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(-rc));
        return rc;
    }
    if (fsync(fd) < 0 || close(fd) < 0) {
        int e = errno;
        unlink(tmp);
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(e));
        return -e;
    }
    if (rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(e));
        return -e;
    }
    return 0;
}
