#include "netns_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

int netns_same(int pid)
{
    char path[64];
    struct stat ours, theirs;
    snprintf(path, sizeof path, "/proc/%d/ns/net", pid);
    if (stat("/proc/self/ns/net", &ours) < 0 || stat(path, &theirs) < 0) return -errno;
    return ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
}

struct socket_job {
    int nsfd, family, type;
    int fd, err; /* the result */
};

/* Runs in its own thread: that thread enters the namespace and ends there. */
static void *make_socket(void *arg)
{
    struct socket_job *j = arg;
    if (setns(j->nsfd, CLONE_NEWNET) < 0) {
        j->err = errno;
        return NULL;
    }
    j->fd = socket(j->family, j->type, 0);
    if (j->fd < 0) j->err = errno;
    return NULL;
}

int netns_socket(int pid, int family, int type)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/net", pid);
    int nsfd = open(path, O_RDONLY | O_CLOEXEC);
    if (nsfd < 0) return -errno;
    struct socket_job j = {.nsfd = nsfd, .family = family, .type = type, .fd = -1};
    pthread_t t;
    int rc = pthread_create(&t, NULL, make_socket, &j);
    if (rc == 0) pthread_join(t, NULL);
    close(nsfd);
    if (rc) return -rc;
    return j.fd >= 0 ? j.fd : -j.err;
}
