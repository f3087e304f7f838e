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

/* One entry as the file lays it out; name and value are checked by whoever reads them. */
struct entry {
    const unsigned char *e;
    int32_t length, name_off, vlen, data_off;
    char type;
};

/* Calls fn on each entry in turn until it returns non-zero (that is returned). -EINVAL when the bytes are not a
 * performance data file (bad magic, an entry outside it), else 0. */
static int each_entry(const unsigned char *data, size_t n, int (*fn)(const struct entry *en, void *arg), void *arg)
{
    /* the magic is written big-endian whatever the byte order of the rest (byte 4: 0 big, 1 little) */
    if (n < PROLOGUE_SIZE || get_i32(data, 0) != (int32_t)0xcafec0c0 || data[4] > 1) return -EINVAL;
    int little = data[4] == 1;
    int32_t offset = get_i32(data + 24, little), count = get_i32(data + 28, little);
    if (offset < PROLOGUE_SIZE || (size_t)offset > n || count < 0) return -EINVAL;
    size_t at = (size_t)offset;
    for (int32_t i = 0; i < count; i++) {
        if (n - at < ENTRY_HEADER) return -EINVAL;
        struct entry en = {data + at, get_i32(data + at, little), get_i32(data + at + 4, little),
                           get_i32(data + at + 8, little), get_i32(data + at + 16, little), (char)data[at + 12]};
        if (en.length < ENTRY_HEADER || (size_t)en.length > n - at) return -EINVAL;
        int rc = fn(&en, arg);
        if (rc) return rc;
        at += (size_t)en.length;
    }
    return 0;
}

/* The entry's name when it lies inside the entry (NUL-terminated there), else NULL. */
static const char *entry_name(const struct entry *en)
{
    if (en->name_off < ENTRY_HEADER || en->name_off >= en->length) return NULL;
    const char *name = (const char *)en->e + en->name_off;
    return memchr(name, '\0', (size_t)(en->length - en->name_off)) ? name : NULL;
}

struct string_find {
    const char *name;
    char *out;
    size_t outsz;
};

static int string_match(const struct entry *en, void *arg)
{
    struct string_find *f = arg;
    const char *name = entry_name(en);
    if (!name || strcmp(name, f->name)) return 0;
    if (en->type != 'B' || en->vlen < 0 || en->data_off < ENTRY_HEADER || en->data_off > en->length ||
        en->vlen > en->length - en->data_off)
        return -EINVAL;
    const unsigned char *v = en->e + en->data_off;
    size_t len = strnlen((const char *)v, (size_t)en->vlen);
    if (len >= f->outsz) len = f->outsz ? f->outsz - 1 : 0;
    if (f->outsz) {
        memcpy(f->out, v, len);
        f->out[len] = '\0';
    }
    return (int)len + 1; /* non-zero even for "" */
}

int hsperf_string(const unsigned char *data, size_t n, const char *name, char *out, size_t outsz)
{
    if (outsz) out[0] = '\0';
    struct string_find f = {name, out, outsz};
    int rc = each_entry(data, n, string_match, &f);
    return rc > 0 ? rc - 1 : rc < 0 ? rc : -ENOENT;
}

struct heap_sum {
    int little;
    long long used, committed;
    int spaces;
};

/* sun.gc.generation.<0|1>.space.<k>.used or .capacity: the young and old generations' spaces, as jstat -gc sums
 * them (generation 2, the permanent generation of JDK 7 and before, is not heap). */
static int heap_add(const struct entry *en, void *arg)
{
    struct heap_sum *h = arg;
    const char *name = entry_name(en), *pre = "sun.gc.generation.";
    if (!name || strncmp(name, pre, strlen(pre))) return 0;
    const char *p = name + strlen(pre);
    if ((*p != '0' && *p != '1') || strncmp(p + 1, ".space.", 7)) return 0;
    for (p += 8; *p >= '0' && *p <= '9'; p++) {}
    int used = !strcmp(p, ".used");
    if (!used && strcmp(p, ".capacity")) return 0;
    /* a scalar long: type 'J', vector length 0, 8 bytes inside the entry */
    if (en->type != 'J' || en->vlen != 0 || en->data_off < ENTRY_HEADER || en->data_off > en->length - 8) return 0;
    const unsigned char *v = en->e + en->data_off;
    uint64_t x = 0;
    for (int i = 0; i < 8; i++) x |= (uint64_t)v[h->little ? i : 7 - i] << (8 * i);
    if (x > (1ull << 50)) return -EINVAL; /* a petabyte: not a heap */
    if (used) h->used += (long long)x;
    else h->committed += (long long)x;
    h->spaces += !used;
    return 0;
}

int hsperf_heap(const unsigned char *data, size_t n, long long *used, long long *committed)
{
    struct heap_sum h = {n > 4 && data[4] == 1, 0, 0, 0};
    int rc = each_entry(data, n, heap_add, &h);
    if (rc < 0) return rc;
    if (!h.spaces) return -ENOENT;
    *used = h.used;
    *committed = h.committed;
    return 0;
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
