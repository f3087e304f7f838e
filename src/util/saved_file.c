#include "saved_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dump_path.h"
#include "fileio.h"

#define MAX_TRIES 100 /* names tried when the first is taken */

void saved_file_comm(int pid, char *buf, size_t bufsz)
{
    char path[64];
    snprintf(buf, bufsz, "process");
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    if (fileio_read_at(AT_FDCWD, path, buf, bufsz) > 0) buf[strcspn(buf, "\n")] = '\0';
    for (char *c = buf; *c; c++) /* a file name, not a path, no surprises in a shell or a quoted header */
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
              *c == '_' || *c == '-' || *c == '+'))
            *c = '_';
}

void saved_file_name(int pid, const char *dir, const char *kind, const char *suffix, char *buf, size_t bufsz)
{
    char comm[64], when[32];
    saved_file_comm(pid, comm, sizeof comm);
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y%m%d-%H%M%S", &tm);
    snprintf(buf, bufsz, "%s/%s.%s.%d.%s%s", dir, kind, comm, pid, when, suffix);
}

/* Profiles hold secrets and belong to whoever asked, also through sudo. */
static void give_to_invoking_user(int fd)
{
    const char *uid = getenv("SUDO_UID"), *gid = getenv("SUDO_GID");
    if (geteuid() == 0 && uid && gid && fchown(fd, (uid_t)atoi(uid), (gid_t)atoi(gid)) < 0) {
        /* best effort: the file stays root's, still 0600 */
    }
}

/* tmp renamed to exact, or to the first free one of base+suffix, base-2+suffix, ... */
static int place(int fd, const char *tmp, const char *exact, const char *base, const char *suffix, char *name,
                 size_t namesz)
{
    give_to_invoking_user(fd);
    int rc = -EEXIST;
    for (int i = 1; i <= (exact ? 1 : MAX_TRIES) && rc == -EEXIST; i++) {
        if (exact) snprintf(name, namesz, "%s", exact);
        else if (i == 1) snprintf(name, namesz, "%s%s", base, suffix);
        else snprintf(name, namesz, "%s-%d%s", base, i, suffix);
        rc = syscall(SYS_renameat2, AT_FDCWD, tmp, AT_FDCWD, name, 1 /* RENAME_NOREPLACE */) < 0 ? -errno : 0;
    }
    char abs[4096]; /* the messages say where the file is, wherever diagtop ran */
    if (rc == 0 && name[0] != '/' && dump_path_absolute(name, abs, sizeof abs) == 0) snprintf(name, namesz, "%s", abs);
    return rc;
}

int saved_file_place(int fd, const char *tmp, const char *exact, int pid, const char *dir, const char *kind,
                     const char *suffix, char *name, size_t namesz)
{
    char base[4096] = "";
    if (!exact) saved_file_name(pid, dir, kind, "", base, sizeof base);
    return place(fd, tmp, exact, base, suffix, name, namesz);
}

/* data written to a private temporary file in dir, then placed as exact, base+suffix or the pid's kind's name. */
static int write_placed(int pid, const char *dir, const char *kind, const char *base, const char *suffix,
                        const void *data, size_t len, char **path, char *err, size_t errlen)
{
    *path = NULL;
    if (!dir || !*dir) dir = ".";
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s/.%s.%d.partial.%d", dir, kind, pid, (int)getpid());
    int fd = fileio_create_private(AT_FDCWD, tmp, O_WRONLY);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create a file in %s: %s", dir, strerror(-fd));
        return fd;
    }
    int rc = fileio_write_full(fd, data, len);
    if (rc == 0 && fsync(fd) < 0) rc = -errno;
    if (rc < 0) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(-rc));
        goto out;
    }
    char name[4200];
    if (base) rc = place(fd, tmp, NULL, base, suffix, name, sizeof name);
    else rc = saved_file_place(fd, tmp, NULL, pid, dir, kind, suffix, name, sizeof name);
    if (rc < 0) {
        snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, name, strerror(-rc));
        goto out;
    }
    tmp[0] = '\0';
    if (!(*path = strdup(name))) {
        rc = -ENOMEM;
        snprintf(err, errlen, "out of memory (the file is saved as %s)", name);
    }
out:
    close(fd);
    if (tmp[0]) unlink(tmp); /* no partial file is ever left */
    return rc;
}

int saved_file_write(int pid, const char *dir, const char *kind, const char *suffix, const void *data, size_t len,
                     char **path, char *err, size_t errlen)
{
    return write_placed(pid, dir, kind, NULL, suffix, data, len, path, err, errlen);
}

int saved_file_write_named(int pid, const char *dir, const char *base, const char *suffix, const void *data,
                           size_t len, char **path, char *err, size_t errlen)
{
    return write_placed(pid, dir, "watch", base, suffix, data, len, path, err, errlen);
}
