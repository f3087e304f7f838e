/* A socket made in another process's network namespace: it belongs to that namespace, and the calling thread
 * never leaves its own. Needs root (setns, unshare); says so and skips otherwise. */
#include "check.h"
#include "util/netns_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static ino_t inode_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_ino : 0;
}

/* A child in a network namespace of its own, until killed; 0 when that cannot be made here. */
static pid_t child_in_new_netns(void)
{
    int ready[2];
    if (pipe(ready) < 0) return 0;
    pid_t pid = fork();
    if (pid == 0) {
        char ok = unshare(CLONE_NEWNET) == 0 ? 'y' : 'n';
        if (write(ready[1], &ok, 1) < 0) _exit(1);
        for (;;) pause();
    }
    char ok = 'n';
    if (pid < 0 || read(ready[0], &ok, 1) != 1 || ok != 'y') {
        if (pid > 0) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
        }
        pid = 0;
    }
    close(ready[0]);
    close(ready[1]);
    return pid;
}

static void the_socket_is_in_the_targets_namespace_and_we_stay_in_ours(void)
{
    pid_t child = child_in_new_netns();
    if (!child) {
        printf("  (unshare(CLONE_NEWNET) refused here: not run)\n");
        return;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)child);
    ino_t theirs = inode_of(path), ours = inode_of("/proc/thread-self/ns/net");
    CHECK(theirs != 0 && ours != 0 && theirs != ours);
    CHECK_INT(netns_same((int)child), 0);
    CHECK_INT(netns_same((int)getpid()), 1);

    int fd = netns_socket((int)child, AF_INET, SOCK_STREAM | SOCK_CLOEXEC);
    CHECK(fd >= 0);
    int ns = fd >= 0 ? ioctl(fd, SIOCGSKNS) : -1; /* the namespace the socket belongs to */
    struct stat st;
    CHECK(ns >= 0 && fstat(ns, &st) == 0 && st.st_ino == theirs);
    CHECK(inode_of("/proc/thread-self/ns/net") == ours); /* this thread never moved */
    if (ns >= 0) close(ns);
    if (fd >= 0) close(fd);

    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    CHECK(netns_socket((int)child, AF_INET, SOCK_STREAM) < 0); /* gone: an error, no socket */
}

int main(void)
{
    check_suite = "netns_socket";
    RUN(the_socket_is_in_the_targets_namespace_and_we_stay_in_ours);
    CHECK_EXIT();
}
