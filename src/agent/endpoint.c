/* endpoint: where the agent listens (include/diagtop-agent.h says the rule diagtop follows to find it) and who may
 * talk to it. The directory must be private: a directory (not a symlink), owned by our effective uid, mode 0700;
 * one made here is made so. Sockets of processes that died are removed, but only when nobody answers on them (a
 * live agent in another PID namespace sharing the directory looks dead from here). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent.h"

/* Made if missing (0700, whatever the umask); then it must be ours and private. */
static int private_dir(const char *dir, char *why, size_t whylen)
{
    if (mkdir(dir, 0700) == 0) {
        if (chmod(dir, 0700) < 0) {
            int e = errno;
            snprintf(why, whylen, "cannot chmod %s: %s", dir, strerror(e));
            return -e;
        }
    } else if (errno != EEXIST) {
        int e = errno;
        snprintf(why, whylen, "cannot create %s: %s", dir, strerror(e));
        return -e;
    }
    struct stat st;
    if (lstat(dir, &st) < 0) {
        int e = errno;
        snprintf(why, whylen, "cannot stat %s: %s", dir, strerror(e));
        return -e;
    }
    if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
        snprintf(why, whylen, "%s is %s, not a directory: not private", dir, S_ISLNK(st.st_mode) ? "a symlink" : "a file");
        return -EPERM;
    }
    if (st.st_uid != geteuid()) {
        snprintf(why, whylen, "%s is owned by uid %u, not by this process's uid %u: not private", dir,
                 (unsigned)st.st_uid, (unsigned)geteuid());
        return -EPERM;
    }
    if (st.st_mode & 077) {
        snprintf(why, whylen, "%s has mode %04o: not private (0700 needed)", dir, (unsigned)(st.st_mode & 07777));
        return -EPERM;
    }
    return 0;
}

/* The directory by the rule of include/diagtop-agent.h. */
static int choose_dir(char *dir, size_t dirsz, char *why, size_t whylen)
{
    const char *v = getenv("DIAGTOP_AGENT_DIR");
    if (v && *v) {
        if (v[0] != '/') {
            snprintf(why, whylen, "DIAGTOP_AGENT_DIR=%s is not an absolute path", v);
            return -EINVAL;
        }
        if ((size_t)snprintf(dir, dirsz, "%s", v) >= dirsz) {
            snprintf(why, whylen, "DIAGTOP_AGENT_DIR is too long");
            return -ENAMETOOLONG;
        }
        return private_dir(dir, why, whylen);
    }
    v = getenv("XDG_RUNTIME_DIR");
    struct stat st;
    if (v && v[0] == '/' && lstat(v, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
        (size_t)snprintf(dir, dirsz, "%s/diagtop", v) < dirsz)
        return private_dir(dir, why, whylen);
    snprintf(dir, dirsz, "/tmp/diagtop-%u", (unsigned)geteuid());
    return private_dir(dir, why, whylen);
}

/* Removes agent.PID.sock files of processes that are gone and whose socket nobody listens on. */
static void clean_stale(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    pid_t self = getpid();
    while ((de = readdir(d))) {
        char *end;
        if (strncmp(de->d_name, "agent.", 6) != 0) continue;
        long pid = strtol(de->d_name + 6, &end, 10);
        if (pid <= 0 || pid == self || strcmp(end, ".sock") != 0) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if ((size_t)snprintf(sa.sun_path, sizeof sa.sun_path, "%s/%s", dir, de->d_name) >= sizeof sa.sun_path)
            continue;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) continue;
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 && errno == ECONNREFUSED)
            unlinkat(dirfd(d), de->d_name, 0);
        close(fd);
    }
    closedir(d);
}

int endpoint_open(char *path, size_t pathsz, char *why, size_t whylen)
{
    char dir[4096];
    int rc = choose_dir(dir, sizeof dir, why, whylen);
    if (rc < 0) return rc;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int n = snprintf(sa.sun_path, sizeof sa.sun_path, "%s/agent.%d.sock", dir, (int)getpid());
    if (n < 0 || (size_t)n >= sizeof sa.sun_path || (size_t)n >= pathsz) {
        snprintf(why, whylen, "the socket path %s/agent.%d.sock is too long for a Unix socket (%zu bytes at most)",
                 dir, (int)getpid(), sizeof sa.sun_path - 1);
        return -ENAMETOOLONG;
    }
    clean_stale(dir);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        snprintf(why, whylen, "socket: %s", strerror(e));
        return -e;
    }
    unlink(sa.sun_path); /* ours by name: left by this pid's previous image (exec) or a dead namesake */
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || chmod(sa.sun_path, 0600) < 0 || listen(fd, 16) < 0) {
        int e = errno;
        snprintf(why, whylen, "cannot listen on %s: %s", sa.sun_path, strerror(e));
        close(fd);
        unlink(sa.sun_path);
        return -e;
    }
    memcpy(path, sa.sun_path, (size_t)n + 1);
    return fd;
}

int endpoint_peer_allowed(int fd, uid_t *uid)
{
    struct ucred cr;
    socklen_t len = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) return 0;
    *uid = cr.uid;
    return cr.uid == geteuid() || cr.uid == 0;
}
