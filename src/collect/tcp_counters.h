/* tcp_counters: the byte counters of every TCP socket in diagtop's network namespace, by socket inode, from one
 * sock_diag dump (NETLINK_SOCK_DIAG, INET_DIAG_INFO's tcp_info: tcpi_bytes_received and tcpi_bytes_acked), the way
 * `ss -tin` reads them: no pcap, no eBPF, no privilege. A process's share comes from matching these inodes to its
 * descriptors (proctable). */
#ifndef DIAGTOP_TCP_COUNTERS_H
#define DIAGTOP_TCP_COUNTERS_H
#include <stddef.h>

struct tcp_socket_bytes {
    unsigned long inode;
    unsigned long long received, acked; /* since the socket was made */
};

struct tcp_counters {
    struct tcp_socket_bytes *slots; /* open addressing by inode; inode 0: empty */
    size_t cap, n;
    unsigned long long dumps; /* how many dumps were taken (for tests and benchmarks) */
    unsigned long long netns; /* inode of the network namespace dumped (diagtop's own) */
};

/* Replaces the table with a fresh dump of IPv4 and IPv6 TCP sockets. Returns 0 or -errno with a reason. */
int tcp_counters_dump(struct tcp_counters *t, char *err, size_t errlen);
/* The counters of a socket inode, or NULL when no TCP socket has it. */
const struct tcp_socket_bytes *tcp_counters_find(const struct tcp_counters *t, unsigned long inode);
void tcp_counters_free(struct tcp_counters *t);

/* Adds one socket to the table (the dump's step; exposed for tests). Returns 0 or -ENOMEM. */
int tcp_counters_add(struct tcp_counters *t, unsigned long inode, unsigned long long received,
                     unsigned long long acked);
#endif
