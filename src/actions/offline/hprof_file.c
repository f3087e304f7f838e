/* hprof_file: map a heap dump, inflating a gzipped one into an unlinked temporary file first. */
#include "hprof_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

enum { CHUNK = 1 << 20 };

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? -errno : -EIO;
        p += w, n -= (size_t)w;
    }
    return 0;
}

/* Inflates every gzip member of in (mapped) into out. zlib stops at each member's end: reset and go on while
 * input remains, as gzip(1) does. Returns 0 or a negative errno; *bad is set for corrupt input. */
static int inflate_members(const unsigned char *in, size_t n, int out, uint64_t *outlen, int *bad)
{
    unsigned char *buf = malloc(CHUNK);
    if (!buf) return -ENOMEM;
    z_stream z;
    memset(&z, 0, sizeof z);
    int rc = inflateInit2(&z, 16 + MAX_WBITS) == Z_OK ? 0 : -ENOMEM;
    size_t used = 0;
    *outlen = 0;
    while (rc == 0 && used < n) {
        size_t take = n - used < (1u << 30) ? n - used : (1u << 30);
        z.next_in = (unsigned char *)in + used;
        z.avail_in = (unsigned)take;
        int zr;
        do {
            z.next_out = buf;
            z.avail_out = CHUNK;
            zr = inflate(&z, Z_NO_FLUSH);
            if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
                *bad = 1;
                rc = -EINVAL;
                break;
            }
            size_t got = CHUNK - z.avail_out;
            if (got && (rc = write_all(out, buf, got)) < 0) break;
            *outlen += got;
            if (zr == Z_STREAM_END) break;
            if (zr == Z_BUF_ERROR && z.avail_in == 0) break;
        } while (z.avail_out == 0 || z.avail_in > 0);
        used += take - z.avail_in;
        if (rc < 0) break;
        if (zr == Z_STREAM_END) {
            inflateReset(&z);
        } else if (used >= n) {
            *bad = 1; /* the last member ends before its trailer: a truncated file */
            rc = -EINVAL;
        }
    }
    inflateEnd(&z);
    free(buf);
    return rc;
}

/* The inflated copy: an O_TMPFILE (nothing to clean up on any exit), or a named file unlinked at once where the
 * file system has no O_TMPFILE. */
static int temp_open(const char *dir)
{
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
    char path[4096];
    snprintf(path, sizeof path, "%s/diagtop-hprof-XXXXXX", dir);
    fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0) unlink(path);
    return fd;
}

static int map_fd(struct hprof_file *f, int fd, size_t size)
{
    if (size == 0) {
        f->bytes = NULL;
        f->size = 0;
        return 0;
    }
    void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) return -errno;
    madvise(p, size, MADV_SEQUENTIAL);
    f->bytes = p;
    f->size = size;
    return 0;
}

int hprof_file_open(struct hprof_file *f, const char *path, const char *tmpdir, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        return -1;
    }
    f->stored_size = (uint64_t)st.st_size;
    int rc = map_fd(f, fd, (size_t)st.st_size);
    close(fd);
    if (rc < 0) {
        snprintf(err, errlen, "%s: mmap: %s", path, strerror(-rc));
        return -1;
    }
    if (f->size < 2 || f->bytes[0] != 0x1f || f->bytes[1] != 0x8b) return 0;

    /* gzip: inflate into a temporary file and map that instead */
    const unsigned char *gz = f->bytes;
    size_t gzlen = f->size;
    if (!tmpdir) tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    int out = temp_open(tmpdir);
    if (out < 0) {
        snprintf(err, errlen, "%s is gzipped, and no temporary file for it in %s: %s", path, tmpdir, strerror(errno));
        munmap((void *)gz, gzlen);
        f->bytes = NULL;
        return -1;
    }
    uint64_t outlen = 0;
    int bad = 0;
    rc = inflate_members(gz, gzlen, out, &outlen, &bad);
    munmap((void *)gz, gzlen);
    f->bytes = NULL;
    f->size = 0;
    if (rc == 0) rc = map_fd(f, out, (size_t)outlen);
    close(out);
    if (rc < 0) {
        if (bad)
            snprintf(err, errlen, "%s: corrupt or truncated gzip data after %llu inflated bytes", path,
                     (unsigned long long)outlen);
        else if (rc == -ENOSPC || rc == -EDQUOT)
            snprintf(err, errlen, "%s: inflating it needs more space than %s has (%llu bytes written); set TMPDIR",
                     path, tmpdir, (unsigned long long)outlen);
        else
            snprintf(err, errlen, "%s: inflating into %s: %s", path, tmpdir, strerror(-rc));
        return -1;
    }
    f->gzipped = 1;
    return 0;
}

void hprof_file_release(const struct hprof_file *f, size_t from, size_t to)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    from = (from + page - 1) & ~(page - 1); /* whole pages inside the range only */
    to = (to < f->size ? to : f->size) & ~(page - 1);
    if (f->bytes && to > from) madvise((void *)(f->bytes + from), to - from, MADV_DONTNEED);
}

void hprof_file_close(struct hprof_file *f)
{
    if (f->bytes) munmap((void *)f->bytes, f->size);
    memset(f, 0, sizeof *f);
}
