#include "debuginfo_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "util/fileio.h"

/* Does the ELF file have compressed sections? */
static int has_compressed_sections(int fd)
{
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!elf) return 0;
    int found = 0;
    for (Elf_Scn *scn = NULL; !found && (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        found = gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED);
    }
    elf_end(elf);
    return found;
}

static int cache_dir(char *buf, size_t bufsz)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg == '/') snprintf(buf, bufsz, "%s/diagtop/debug", xdg);
    else if (home && *home) snprintf(buf, bufsz, "%s/.cache/diagtop/debug", home);
    else return -1;
    return 0;
}

static int copy_file(int src, int dst)
{
    struct stat st;
    if (fstat(src, &st) < 0) return -errno;
    off_t off = 0;
    while (off < st.st_size) {
        ssize_t n = sendfile(dst, src, &off, (size_t)(st.st_size - off));
        if (n <= 0) return n < 0 ? -errno : -EIO;
    }
    return 0;
}

int debuginfo_cache_decompress(int src_fd, const char *path)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int fd = fileio_create_private(AT_FDCWD, tmp, O_RDWR); /* in a 0700 directory: 0600 hides nothing more */
    if (fd < 0) return fd;
    int rc = copy_file(src_fd, fd);
    Elf *elf = NULL;
    if (rc == 0) {
        elf_version(EV_CURRENT);
        elf = elf_begin(fd, ELF_C_RDWR, NULL);
        if (!elf) rc = -EINVAL;
    }
    for (Elf_Scn *scn = NULL; rc == 0 && (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0) rc = -EINVAL;
    }
    /* libelf lays the file out again with the bigger sections. */
    if (rc == 0 && elf_update(elf, ELF_C_WRITE) < 0) rc = -EIO;
    if (elf) elf_end(elf);
    if (rc == 0 && fsync(fd) < 0) rc = -errno;
    close(fd);
    if (rc == 0 && rename(tmp, path) < 0) rc = -errno;
    if (rc < 0) unlink(tmp);
    return rc;
}

/* The module's build-id in hex, or -1. */
static int build_id_hex(Dwfl_Module *mod, char *hex, size_t hexsz)
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
    if (cache_dir(dir, sizeof dir) < 0) return -1;
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

/* Makes the decompressed copy of the debug file in fd at path, if it has compressed sections and the disk has
 * room. Returns 0 when the copy exists afterwards. */
static int make_copy(int fd, const char *path)
{
    char dir[4096];
    if (!has_compressed_sections(fd) || cache_dir(dir, sizeof dir) < 0 || fileio_mkdirs(dir, 0700) < 0 ||
        !enough_space(path, fd))
        return -1;
    return debuginfo_cache_decompress(fd, path);
}

int debuginfo_cache_find(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
                         const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                         char **debuginfo_file_name)
{
    char hex[132], path[4200];
    int use_cache = !getenv("DIAGTOP_NO_DEBUG_CACHE") && build_id_hex(mod, hex, sizeof hex) == 0 &&
                    cached_path(hex, path, sizeof path) == 0;
    if (use_cache) {
        int cached = open(path, O_RDONLY | O_CLOEXEC);
        if (cached < 0) {
            /* The usual place of distribution debug files (libc6-dbg, -dbgsym): copy it before libdw reads it,
             * so that it is decompressed once, not twice. */
            char sys[256];
            snprintf(sys, sizeof sys, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
            int fd = open(sys, O_RDONLY | O_CLOEXEC);
            if (fd >= 0 && make_copy(fd, path) == 0) cached = open(path, O_RDONLY | O_CLOEXEC);
            if (fd >= 0) close(fd);
        }
        if (cached >= 0) {
            *debuginfo_file_name = strdup(path);
            return cached;
        }
    }
    /* Elsewhere (a debuglink, another debug directory): the standard search. It may keep its own handle on the
     * file it found, so this run reads that one; the copy serves the next runs. */
    int fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file, debuglink_crc,
                                          debuginfo_file_name);
    if (fd >= 0 && use_cache && make_copy(fd, path) == 0) lseek(fd, 0, SEEK_SET);
    return fd;
}

/* The copy of a program whose own DWARF is compressed (Go links its binaries so): named after the file's
 * identity, since such a program may carry no GNU build-id, and made again when the file changes. */
static int program_copy_path(int fd, char *buf, size_t bufsz)
{
    struct stat st;
    char dir[4096];
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || cache_dir(dir, sizeof dir) < 0) return -1;
    return snprintf(buf, bufsz, "%.3900s/%llx-%llx-%llx-%llx.%09ld.elf", dir, (unsigned long long)st.st_dev,
                    (unsigned long long)st.st_ino, (unsigned long long)st.st_size,
                    (unsigned long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec) < (int)bufsz ? 0 : -1;
}

int debuginfo_cache_find_elf(Dwfl_Module *mod, void **userdata, const char *module_name, Dwarf_Addr base,
                             char **file_name, Elf **elfp)
{
    int fd = dwfl_linux_proc_find_elf(mod, userdata, module_name, base, file_name, elfp);
    char path[4200];
    if (fd < 0 || *elfp || getenv("DIAGTOP_NO_DEBUG_CACHE") || program_copy_path(fd, path, sizeof path) < 0)
        return fd;
    int copy = open(path, O_RDONLY | O_CLOEXEC);
    if (copy < 0 && make_copy(fd, path) == 0) copy = open(path, O_RDONLY | O_CLOEXEC);
    if (copy < 0) { /* nothing compressed, or no room: the file itself */
        lseek(fd, 0, SEEK_SET);
        return fd;
    }
    close(fd); /* *file_name stays the program's own path: debuglinks are looked up next to it */
    return copy;
}
