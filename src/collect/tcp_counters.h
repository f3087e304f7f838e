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
    unsigned short port;                /* local port */
    unsigned char listening;            /* TCP_LISTEN */
    unsigned char accepted;             /* listening, and a connection new to this dump has its port: accepted */
    unsigned char fresh;                /* not in the previous dump, a complete one of a few seconds ago: every
                                         * byte it moved, it moved since then */
    int owned;                          /* a process's descriptor scan found it (kept from dump to dump) */
    double unowned_since;               /* when it was first seen moving bytes with no owner found (0: not) */
};

/* How long the owner of a socket that moves bytes is looked for (every process's descriptors are counted at each
 * refresh meanwhile): long enough for each process's periodic rescan to come round; after that it is taken to
 * belong to no process diagtop can see (another user's, or a kernel socket). */
#define TCP_OWNER_SEARCH_SECONDS 6.0

struct tcp_counters {
    struct tcp_socket_bytes *slots; /* open addressing by inode; inode 0: empty */
    size_t cap, n;
    struct tcp_socket_bytes *prev; /* the previous dump, whose ownership the new one keeps */
    size_t prev_cap;
    size_t searching; /* sockets moving bytes whose owner is being looked for: descriptor counts must be checked */
    int ok, prev_ok;  /* this dump and the previous one were complete */
    double time, prev_time;
    unsigned long long dumps; /* how many dumps were taken (for tests and benchmarks) */
    unsigned long long netns; /* inode of the network namespace dumped (diagtop's own) */
    int per_family;           /* the kernel refused the one request for both families: one a family */
};

/* Replaces the table with a fresh dump of IPv4 and IPv6 TCP sockets at time now (monotonic seconds). Returns 0
 * or -errno with a reason. */
int tcp_counters_dump(struct tcp_counters *t, double now, char *err, size_t errlen);
/* The counters of a socket inode, or NULL when no TCP socket has it. */
const struct tcp_socket_bytes *tcp_counters_find(const struct tcp_counters *t, unsigned long inode);
/* tcp_counters_find for a socket a process's descriptors hold: it is marked owned, which stops the search. */
const struct tcp_socket_bytes *tcp_counters_claim(struct tcp_counters *t, unsigned long inode);
void tcp_counters_free(struct tcp_counters *t);

/* The dump's steps (exposed for tests): begin keeps the table as the previous one and empties it; add puts one
 * socket in (0 or -ENOMEM); settle (ok: the dump is complete) carries each socket's ownership over from the previous dump, counts the
 * sockets whose owner is still being looked for, and marks the listeners that accepted a new one (a server
 * blocked in accept() has its next descriptor reserved already: its count does not change when a connection
 * comes, so the one who listens on the port is asked first). */
void tcp_counters_begin(struct tcp_counters *t);
int tcp_counters_add(struct tcp_counters *t, struct tcp_socket_bytes socket);
void tcp_counters_settle(struct tcp_counters *t, double now, int ok);
#endif
