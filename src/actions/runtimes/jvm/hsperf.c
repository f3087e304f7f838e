#include "hsperf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fileio.h"

/* magic, byte order, versions, accessible, used, overflow, time stamp, the entries' offset and count */
#define PROLOGUE_SIZE 32
#define ENTRY_HEADER 20    /* length, name offset, vector length, type, flags, units, variability, data offset */
#define FILE_MAX (1u << 20) /* PerfDataMemorySize is 32 KiB by default; the JVM caps it far below this */

static int32_t get_i32(const unsigned char *p, int little)
{
    uint32_t v = little ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
                        : (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
    return (int32_t)v;
}

int hsperf_string(const unsigned char *data, size_t n, const char *name, char *out, size_t outsz)
{
    if (outsz) out[0] = '\0';
    /* the magic is written big-endian whatever the byte order of the rest (byte 4: 0 big, 1 little) */
    if (n < PROLOGUE_SIZE || get_i32(data, 0) != (int32_t)0xcafec0c0 || data[4] > 1) return -EINVAL;
    int little = data[4] == 1;
    int32_t offset = get_i32(data + 24, little), count = get_i32(data + 28, little);
    if (offset < PROLOGUE_SIZE || (size_t)offset > n || count < 0) return -EINVAL;
    size_t at = (size_t)offset, want = strlen(name);
    for (int32_t i = 0; i < count; i++) {
        if (n - at < ENTRY_HEADER) return -EINVAL;
        const unsigned char *e = data + at;
        int32_t length = get_i32(e, little), name_off = get_i32(e + 4, little), vlen = get_i32(e + 8, little),
                data_off = get_i32(e + 16, little);
        if (length < ENTRY_HEADER || (size_t)length > n - at) return -EINVAL;
        /* the name and the value lie inside the entry */
        if (name_off >= ENTRY_HEADER && name_off < length && (size_t)(length - name_off) > want &&
            memcmp(e + name_off, name, want) == 0 && e[name_off + (int32_t)want] == '\0') {
            if (e[12] != 'B' || vlen < 0 || data_off < ENTRY_HEADER || data_off > length || vlen > length - data_off)
                return -EINVAL;
            const unsigned char *v = e + data_off;
            size_t len = strnlen((const char *)v, (size_t)vlen);
            if (len >= outsz) len = outsz ? outsz - 1 : 0;
            if (outsz) {
                memcpy(out, v, len);
                out[len] = '\0';
            }
            return (int)len;
        }
        at += (size_t)length;
    }
    return -ENOENT;
}

/* The file <dir>/<nspid> in an hsperfdata_<user> directory of the JVM's /tmp, when it is a regular file of uid. */
static unsigned char *read_owned(int dirfd, int nspid, uid_t uid, size_t *n)
{
    char name[24];
    snprintf(name, sizeof name, "%d", nspid);
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != uid || st.st_size <= 0) {
        close(fd);
        return NULL;
    }
    /* the file (32 KiB by default), capped, and a byte for the reader's NUL */
    size_t room = (st.st_size < FILE_MAX ? (size_t)st.st_size : FILE_MAX) + 1;
    unsigned char *buf = malloc(room);
    ssize_t got = buf ? fileio_pread_all(fd, (char *)buf, room) : -1;
    close(fd);
    if (got <= 0) {
        free(buf);
        return NULL;
    }
    *n = (size_t)got;
    return buf;
}

unsigned char *hsperf_read(int pid, int nspid, uid_t uid, size_t *n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/root/tmp", pid);
    int tmp = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (tmp < 0) return NULL;
    DIR *d = fdopendir(tmp);
    if (!d) {
        close(tmp);
        return NULL;
    }
    unsigned char *buf = NULL;
    struct dirent *de;
    /* the directory is named by the JVM's user name as its own passwd says: found by its pid file's owner */
    while (!buf && (de = readdir(d))) {
        if (strncmp(de->d_name, "hsperfdata_", 11) != 0) continue;
        int userdir = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (userdir < 0) continue;
        buf = read_owned(userdir, nspid, uid, n);
        close(userdir);
    }
    closedir(d);
    return buf;
}
