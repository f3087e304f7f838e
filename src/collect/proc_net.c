#include "proc_net.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/grow.h"

#define RECOUNT_SECONDS 5.0 /* with no socket searched for: one may have been handed to another process */
#define RESCAN_SECONDS 5.0  /* while one is searched for, also with the same count: a file may have closed and a
                             * socket opened */
#define RESCAN_FDS 256      /* ...for up to this many descriptors; beyond, proportionally less often */

/* The process's descriptor count from st_size of its fd directory (0 on kernels that do not report it). */
static long long fd_count(int procfd, const char *dir)
{
    char path[80];
    struct stat st;
    snprintf(path, sizeof path, "%s/fd", dir);
    return fstatat(procfd, path, &st, 0) == 0 ? (long long)st.st_size : -errno;
}

static const struct proc_net_socket *known_socket(const struct proc_net_state *s, unsigned long inode)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->socks[i].inode == inode) return &s->socks[i];
    return NULL;
}

/* Lists the socket inodes of the process's descriptors, keeping what the last scan knew of each. */
static int scan_fds(struct proc_net_state *s, int procfd, const char *dir, struct tcp_counters *tcp)
{
    char path[80];
    snprintf(path, sizeof path, "%s/fd", dir);
    int dfd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return -errno;
    DIR *d = fdopendir(dfd);
    if (!d) {
        int e = errno;
        close(dfd);
        return -e;
    }
    struct proc_net_socket *socks = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue; /* "." and "..": not descriptors */
        char link[64];
        ssize_t len = readlinkat(dfd, de->d_name, link, sizeof link - 1);
        unsigned long inode;
        if (len <= 0) continue;
        link[len] = '\0';
        if (sscanf(link, "socket:[%lu]", &inode) != 1) continue;
        const struct tcp_socket_bytes *b = tcp_counters_claim(tcp, inode);
        if (!b) continue; /* a Unix, UDP or netlink socket: no byte counters */
        if (GROW(socks, cap, n, 16) < 0) break;
        const struct proc_net_socket *old = known_socket(s, inode);
        /* a socket new to this scan counts from now: its past belongs to before (or to another holder); but one
         * made since the previous dump moved all its bytes since, for whoever holds it (a reconnect) */
        socks[n++] = old     ? *old
                     : b->fresh ? (struct proc_net_socket){inode, 0, 0}
                                : (struct proc_net_socket){inode, b->received, b->acked};
    }
    closedir(d);
    free(s->socks);
    s->socks = socks;
    s->n = n;
    s->cap = cap;
    return 0;
}

/* Lists the descriptors again when their count changed, or when a socket is searched for and the last listing is
 * a few seconds old; also checks the network namespace, which setns can change. Returns 0 or -errno. */
/* Whether the process's sockets changed in ways its descriptor count may not show: one of its listeners accepted
 * a connection new to this dump, or a socket it held is gone (closed: another may have taken its number). */
static int sockets_changed(const struct proc_net_state *s, const struct tcp_counters *tcp)
{
    for (size_t i = 0; i < s->n; i++) {
        const struct tcp_socket_bytes *b = tcp_counters_find(tcp, s->socks[i].inode);
        if (!b || b->accepted) return 1;
    }
    return 0;
}

static int rescan(struct proc_net_state *s, int procfd, const char *dir, struct tcp_counters *tcp, double now)
{
    long long count = fd_count(procfd, dir);
    if (count < 0) return (int)count;
    /* A listing costs a readlink a descriptor: for a process holding thousands, the listings that only might
     * find something (the same count while a socket is searched for; a changed count while none is, which only a
     * socket handed over from another process would need) come further apart. */
    double every = RESCAN_SECONDS * (count > RESCAN_FDS ? (double)count / RESCAN_FDS : 1.0);
    int due = now - s->scanned >= every;
    int changed = count != s->fd_count;
    if (s->sampled && !sockets_changed(s, tcp) && !(tcp->searching ? changed || due : changed && due)) return 0;
    char path[80];
    struct stat ns;
    snprintf(path, sizeof path, "%s/ns/net", dir);
    if (fstatat(procfd, path, &ns, 0) < 0) return -errno;
    s->other_netns = (unsigned long long)ns.st_ino != tcp->netns;
    int rc = s->other_netns ? 0 : scan_fds(s, procfd, dir, tcp);
    if (rc < 0) return rc;
    s->fd_count = count;
    s->scanned = now;
    return 0;
}

int proc_net_sample(struct proc_net_state *s, int procfd, const char *dir, struct tcp_counters *tcp,
                    double now, unsigned long long *received, unsigned long long *sent)
{
    *received = *sent = 0;
    if (!s->counted || tcp->searching || now - s->counted >= RECOUNT_SECONDS) {
        s->error = rescan(s, procfd, dir, tcp, now);
        s->counted = now; /* a refused listing is tried again only as often as a count */
    }
    if (s->error) return s->error;
    if (s->other_netns) return -EXDEV; /* its sockets are not in the dump */
    for (size_t i = 0; i < s->n; i++) {
        const struct tcp_socket_bytes *b = tcp_counters_claim(tcp, s->socks[i].inode);
        if (!b) continue; /* closed since the scan: what it moved meanwhile is not seen */
        if (b->received > s->socks[i].received) *received += b->received - s->socks[i].received;
        if (b->acked > s->socks[i].acked) *sent += b->acked - s->socks[i].acked;
        s->socks[i].received = b->received;
        s->socks[i].acked = b->acked;
    }
    int first = !s->sampled;
    s->sampled = 1;
    return first ? 0 : 1;
}

int proc_net_quiet(const struct proc_net_state *s, int procfd, const char *dir)
{
    return s->sampled && !s->error && !s->other_netns && s->n == 0 && fd_count(procfd, dir) == s->fd_count;
}

void proc_net_state_free(struct proc_net_state *s)
{
    free(s->socks);
    memset(s, 0, sizeof *s);
}
