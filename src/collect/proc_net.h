/* proc_net: a process's TCP traffic, as the byte counters of the sockets its descriptors hold (tcp_counters),
 * matched through /proc/PID/fd the way `ss -tp` matches them. The descriptor scan is what costs: it is redone
 * only when the process's count of descriptors changed (st_size of /proc/PID/fd, Linux 6.2 and later). Even the
 * count is looked at only while the dump holds a socket moving bytes that no scan found (a new connection: whose
 * is it?), and otherwise every few seconds (a socket handed to another process). */
#ifndef DIAGTOP_PROC_NET_H
#define DIAGTOP_PROC_NET_H
#include <stddef.h>

#include "tcp_counters.h"

struct proc_net_socket {
    unsigned long inode;
    unsigned long long received, acked; /* at the last sample */
};

/* One process's state between samples (zero-initialised; freed with proc_net_state_free). */
struct proc_net_state {
    struct proc_net_socket *socks;
    size_t n, cap;
    long long fd_count; /* at the last scan; -1 before the first */
    double scanned;     /* when /proc/PID/fd was last listed */
    double counted;     /* when the descriptors were last counted */
    int error;          /* the last scan's -errno (EACCES: another user's process), kept until the next count */
    int sampled;        /* a sample was taken: the next one gives deltas */
    int other_netns;    /* in another network namespace than diagtop's, at the last scan */
};

/* Bytes received and sent (acked by the peer) on the process's TCP sockets since its last sample; a socket first
 * seen now counts from now. The sockets it holds are claimed in tcp (tcp_counters_claim). dir: "PID" below procfd. Returns 1 with deltas, 0 for a first sample (deltas 0), or
 * -errno (EACCES: another user's process; EXDEV: another network namespace, whose sockets the dump does not see). */
int proc_net_sample(struct proc_net_state *s, int procfd, const char *dir, struct tcp_counters *tcp,
                    double now, unsigned long long *received, unsigned long long *sent);
/* Whether the process held no TCP socket at its last listing and still holds as many descriptors (one fstat):
 * then its rates are 0 without a dump. For the few rows a pane or a filter watches, where a dump (a walk of the
 * kernel's whole socket hash, 1.4 ms here) would cost more than everything else; for a full table one dump is
 * cheaper than a count a process. */
int proc_net_quiet(const struct proc_net_state *s, int procfd, const char *dir);
void proc_net_state_free(struct proc_net_state *s);
#endif
