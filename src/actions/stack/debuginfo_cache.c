#include "debuginfo_cache.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/fileio.h"
#include "elf_inflate.h"
#include "gopclntab.h"

/* Beyond this, libdw reads the file and inflates it itself: a memfd is memory. */
#define INFLATE_MAX (1UL << 30)

int debuginfo_cache_dir(char *buf, size_t bufsz)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg == '/') snprintf(buf, bufsz, "%s/diagtop/debug", xdg);
    else if (home && *home) snprintf(buf, bufsz, "%s/.cache/diagtop/debug", home);
    else return -1;
    return 0;
}

/* Puts the inflated copy in mem at path: a temporary file renamed over it once complete and on disk, so that a
 * concurrent writer or a crash never leaves a partial copy. Only system calls: it runs in a child of a process
 * that may have threads. */
static int write_copy(int mem, off_t size, const char *tmp, const char *path)
{
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600); /* in a 0700 directory */
    if (fd < 0) return -errno;
    off_t off = 0;
    int rc = 0;
    while (rc == 0 && off < size) {
        ssize_t n = sendfile(fd, mem, &off, (size_t)(size - off)); /* leaves mem's shared file position alone */
        if (n <= 0) rc = n < 0 ? -errno : -EIO;
    }
    if (rc == 0 && fsync(fd) < 0) rc = -errno;
    close(fd);
    if (rc == 0 && rename(tmp, path) < 0) rc = -errno;
    if (rc < 0) unlink(tmp);
    return rc;
}

/* The copy one keep asks for: its memfd as it is, or when this run's copy was cut (or never made) a full one
 * inflated now from the source. */
static int full_copy(const struct debuginfo_keep *k)
{
    return k->mem >= 0 ? k->mem : elf_inflate_memfd(k->src, INFLATE_MAX, NULL);
}

static int by_value(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* Closes every file descriptor but the keeps' own. */
static void close_all_but(const struct debuginfo_keep *keeps, size_t n)
{
    int *fds = malloc((2 * n + 1) * sizeof *fds), m = 0;
    if (!fds) return;
    for (size_t i = 0; i < n; i++) {
        if (keeps[i].mem >= 0) fds[m++] = keeps[i].mem;
        if (keeps[i].src >= 0) fds[m++] = keeps[i].src;
    }
    qsort(fds, (size_t)m, sizeof *fds, by_value);
    unsigned from = 0;
    for (int i = 0; i < m; from = (unsigned)fds[i++] + 1)
        if ((unsigned)fds[i] > from) close_range(from, (unsigned)fds[i] - 1, 0);
    close_range(from, ~0U, 0);
    free(fds);
}

/* Writes the copies for the next runs from a grandchild that nobody waits for, at the lowest CPU and I/O priority,
 * outside the terminal's process group: the answer never waits for the disk or for inflating what it did not
 * need, and a Ctrl-C of the user's does not reach it. Its only open files are the keeps'. (glibc's fork leaves
 * malloc usable in the child of a threaded process: the inflate needs it.) */
static void keep_detached(const struct debuginfo_keep *keeps, size_t n)
{
    pid_t child = fork();
    if (child == 0) {
        if (fork() == 0) {
            setsid();
            setpriority(PRIO_PROCESS, 0, 19);
            syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0, 3 << 13 /* IOPRIO_CLASS_IDLE */);
            close_all_but(keeps, n); /* a pipe to the user's shell among them would keep it waiting */
            int failed = 0;
            for (size_t i = 0; i < n; i++) {
                char tmp[4300];
                snprintf(tmp, sizeof tmp, "%s.tmp.%ld", keeps[i].path, (long)getpid());
                int mem = full_copy(&keeps[i]);
                struct stat st; /* not lseek: the position is shared with the parent's libdw */
                failed |= mem < 0 || fstat(mem, &st) < 0 || st.st_size <= 0 ||
                          write_copy(mem, st.st_size, tmp, keeps[i].path) < 0;
            }
            _exit(failed);
        }
        _exit(0);
    }
    while (child > 0 && waitpid(child, NULL, 0) < 0 && errno == EINTR) {}
}

void debuginfo_cache_keep_now(struct debuginfo_keeps *k)
{
    if (k->n) keep_detached(k->v, k->n);
    for (size_t i = 0; i < k->n; i++) {
        if (k->v[i].mem >= 0) close(k->v[i].mem);
        if (k->v[i].src >= 0) close(k->v[i].src);
    }
    free(k->v);
    memset(k, 0, sizeof *k);
}

/* Notes a copy to keep at path: mem when complete, else src to inflate again. Into keeps when given (their fds
 * then theirs), else written at once. */
static void keep(struct debuginfo_keeps *keeps, int mem, int src, const char *path)
{
    struct debuginfo_keep k = {.mem = -1, .src = -1};
    snprintf(k.path, sizeof k.path, "%s", path);
    if (!keeps) {
        k.mem = mem;
        k.src = src;
        keep_detached(&k, 1);
        return;
    }
    struct debuginfo_keep *v = realloc(keeps->v, (keeps->n + 1) * sizeof *v);
    if (!v) return;
    keeps->v = v;
    k.mem = mem >= 0 ? fcntl(mem, F_DUPFD_CLOEXEC, 0) : -1; /* libdw closes the one it reads */
    k.src = src >= 0 ? fcntl(src, F_DUPFD_CLOEXEC, 0) : -1;
    if (k.mem >= 0 || k.src >= 0) keeps->v[keeps->n++] = k;
}

int debuginfo_cache_build_id(Dwfl_Module *mod, char *hex, size_t hexsz)
{
    const unsigned char *id;
    GElf_Addr vaddr;
    int len = dwfl_module_build_id(mod, &id, &vaddr);
    if (len <= 1 || (size_t)len * 2 + 1 > hexsz) return -1;
    for (int i = 0; i < len; i++) snprintf(hex + 2 * i, 3, "%02x", id[i]);
    return 0;
}

/* The path of the decompressed copy for a build-id, or -1. */
static int cached_path(const char *hex, char *buf, size_t bufsz)
{
    char dir[4096];
    if (debuginfo_cache_dir(dir, sizeof dir) < 0) return -1;
    return snprintf(buf, bufsz, "%.3900s/%s.debug", dir, hex) < (int)bufsz ? 0 : -1;
}

static int enough_space(const char *path, int src_fd)
{
    struct statvfs vfs;
    struct stat st;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    /* Decompressed debug info is a few times the compressed size: want ten times that free, and 1 GiB. */
    return statvfs(dir, &vfs) == 0 && fstat(src_fd, &st) == 0 &&
           (unsigned long long)vfs.f_bavail * vfs.f_frsize > 10ULL * (unsigned long long)st.st_size + (1ULL << 30);
}

/* The debug file in fd with its compressed sections inflated (part as its reader says), in memory (a memfd),
 * and, when path is given and its disk has room, written there for the next runs after this one has its answer.
 * Negative when nothing is compressed or the copy cannot be made: libdw then reads fd itself. */
static int inflate(int fd, const char *path, struct inflate_part *part, struct debuginfo_keeps *keeps)
{
    int mem = elf_inflate_memfd(fd, INFLATE_MAX, part);
    if (mem < 0) return mem;
    char dir[4096];
    if (path && debuginfo_cache_dir(dir, sizeof dir) == 0 && fileio_mkdirs(dir, 0700) == 0 && enough_space(path, fd))
        keep(keeps, part && part->cut ? -1 : mem, part && part->cut ? fd : -1, path);
    return mem;
}

int debuginfo_cache_find_for(struct inflate_part *part, struct debuginfo_keeps *keeps, Dwfl_Module *mod,
                             void **userdata, const char *modname, GElf_Addr base, const char *file_name,
                             const char *debuglink_file, GElf_Word debuglink_crc, char **debuginfo_file_name)
{
    char hex[132], path[4200], sys[256];
    int use_cache = !getenv("DIAGTOP_NO_DEBUG_CACHE");
    int have_id = debuginfo_cache_build_id(mod, hex, sizeof hex) == 0 && cached_path(hex, path, sizeof path) == 0;
    if (have_id) {
        int cached = use_cache ? open(path, O_RDONLY | O_CLOEXEC) : -1;
        if (cached >= 0) {
            *debuginfo_file_name = strdup(path);
            return cached;
        }
        /* The usual place of distribution debug files (libc6-dbg, -dbgsym): inflated here, once, rather than
         * by libdw's slower zlib, and kept for the next runs. */
        snprintf(sys, sizeof sys, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
        int fd = open(sys, O_RDONLY | O_CLOEXEC);
        int mem = fd >= 0 ? inflate(fd, use_cache ? path : NULL, part, keeps) : -1;
        if (fd >= 0) close(fd);
        if (mem >= 0) {
            *debuginfo_file_name = strdup(sys);
            return mem;
        }
    }
    /* Elsewhere (a debuglink, another debug directory): the standard search. It may keep its own handle on the
     * file it found, so this run reads that one; the copy serves the next runs. */
    int fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file, debuglink_crc,
                                          debuginfo_file_name);
    if (fd >= 0 && use_cache && have_id) {
        int mem = inflate(fd, path, NULL, keeps);
        if (mem >= 0) close(mem);
        lseek(fd, 0, SEEK_SET);
    }
    return fd;
}

int debuginfo_cache_find(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
                         const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                         char **debuginfo_file_name)
{
    return debuginfo_cache_find_for(NULL, NULL, mod, userdata, modname, base, file_name, debuglink_file,
                                    debuglink_crc, debuginfo_file_name);
}

/* The copy of a program whose own DWARF is compressed (Go links its binaries so): named after the file's
 * identity, since such a program may carry no GNU build-id, and made again when the file changes. */
static int program_copy_path(int fd, char *buf, size_t bufsz)
{
    struct stat st;
    char dir[4096];
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || debuginfo_cache_dir(dir, sizeof dir) < 0) return -1;
    return snprintf(buf, bufsz, "%.3900s/%llx-%llx-%llx-%llx.%09ld.elf", dir, (unsigned long long)st.st_dev,
                    (unsigned long long)st.st_ino, (unsigned long long)st.st_size,
                    (unsigned long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec) < (int)bufsz ? 0 : -1;
}

int debuginfo_cache_find_elf(Dwfl_Module *mod, void **userdata, const char *module_name, Dwarf_Addr base,
                             char **file_name, Elf **elfp)
{
    int fd = dwfl_linux_proc_find_elf(mod, userdata, module_name, base, file_name, elfp);
    return fd < 0 || *elfp ? fd : debuginfo_cache_program(fd, elfp);
}

int debuginfo_cache_program(int fd, Elf **elfp)
{
    char path[4200];
    if (!getenv("DIAGTOP_NO_GOPCLNTAB")) { /* a Go program its tables serve: its DWARF is read only if ever needed */
        Elf *elf = gopclntab_elf(fd);
        if (elf) {
            *elfp = elf;
            return fd;
        }
    }
    int use_cache = !getenv("DIAGTOP_NO_DEBUG_CACHE") && program_copy_path(fd, path, sizeof path) == 0;
    int copy = use_cache ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (copy < 0) copy = inflate(fd, use_cache ? path : NULL, NULL, NULL);
    if (copy < 0) { /* nothing compressed, or a layout not rewritten: the file itself */
        lseek(fd, 0, SEEK_SET);
        return fd;
    }
    close(fd); /* *file_name stays the program's own path: debuglinks are looked up next to it */
    return copy;
}

static int kept_path(const char *name, char *path, size_t len)
{
    char dir[4096];
    return debuginfo_cache_dir(dir, sizeof dir) == 0 && snprintf(path, len, "%s/%s", dir, name) < (int)len ? 0 : -1;
}

FILE *debuginfo_cache_open_kept(const char *name)
{
    char path[4400];
    return kept_path(name, path, sizeof path) == 0 ? fopen(path, "re") : NULL;
}

void debuginfo_cache_keep(const char *name, const char *format, ...)
{
    char path[4400], tmp[4500], dir[4096];
    if (kept_path(name, path, sizeof path) < 0 || debuginfo_cache_dir(dir, sizeof dir) < 0 || fileio_mkdirs(dir, 0700) < 0)
        return;
    snprintf(tmp, sizeof tmp, "%s.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "wxe");
    if (!f) return;
    va_list ap;
    va_start(ap, format);
    int ok = vfprintf(f, format, ap) > 0;
    va_end(ap);
    if (fclose(f) != 0 || !ok || rename(tmp, path) < 0) unlink(tmp);
}
