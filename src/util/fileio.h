/* fileio: small, error-checked file helpers shared by every module. */
#ifndef DIAGTOP_FILEIO_H
#define DIAGTOP_FILEIO_H
#include <stddef.h>
#include <sys/types.h>

/* Reads the whole file at path (relative to dirfd, or AT_FDCWD) into buf (NUL-terminated). Returns bytes read or
 * a negative errno. Files longer than bufsz-1 are truncated. */
ssize_t fileio_read_at(int dirfd, const char *path, char *buf, size_t bufsz);

/* pread from offset 0 of an already open descriptor until EOF: procfs regenerates the text on every read at
 * offset 0. */
ssize_t fileio_pread_all(int fd, char *buf, size_t bufsz);
/* One pread at offset 0, for small one-record procfs files (stat, statm): a second read would make the kernel
 * generate the whole text again just to report EOF, doubling the cost of a refresh. */
ssize_t fileio_pread_once(int fd, char *buf, size_t bufsz);

/* Reads the file at path (relative to dirfd, or AT_FDCWD) into a malloc'd, NUL-terminated buffer that grows as
 * needed up to max bytes (a longer file is cut there). Returns NULL with errno set; *len (if not NULL) gets the
 * length. */
char *fileio_read_file(int dirfd, const char *path, size_t max, ssize_t *len);
/* Reads /proc/PID/<name> into a malloc'd, NUL-terminated buffer of at most max bytes. procfd: an open descriptor of
 * /proc, or AT_FDCWD. Returns NULL with errno set when it cannot be read; *len (if not NULL) gets the length. */
char *fileio_read_proc(int procfd, int pid, const char *name, size_t max, ssize_t *len);

/* Writes all len bytes, again after EINTR and short writes. Returns 0 or -errno; a write that takes nothing is
 * -ENOSPC. Only system calls: safe in a child forked from a multi-threaded process. */
int fileio_write_full(int fd, const void *buf, size_t len);
/* The same at file offset at (pwrite), for files written out of order. */
int fileio_pwrite_full(int fd, const void *buf, size_t len, off_t at);

/* Creates a new file for secrets (dumps, profiles, saved panes): mode 0600, O_EXCL (never overwrites),
 * O_NOFOLLOW (a planted symlink is refused), O_CLOEXEC. path is relative to dirfd (or AT_FDCWD); flags is O_WRONLY
 * or O_RDWR. Returns the descriptor, or -errno with errno set. */
int fileio_create_private(int dirfd, const char *path, int flags);

/* Writes data to path atomically: a temporary file in the same directory, fsync, rename. Returns 0 or -errno
 * with a one-line reason in err. */
int fileio_write_atomic(const char *path, const char *data, size_t len, mode_t mode, char *err, size_t errlen);

/* mkdir -p with the given mode for created components. Returns 0 or -errno. */
int fileio_mkdirs(const char *path, mode_t mode);
#endif
