/* sockets: what a socket inode is, from the target's /proc/PID/net/{tcp,tcp6,udp,udp6,unix}: protocol, local and
 * remote address, TCP state. */
#ifndef DIAGTOP_SOCKETS_H
#define DIAGTOP_SOCKETS_H
#include <stddef.h>

struct socket_entry {
    unsigned long inode;
    char desc[160]; /* "tcp 127.0.0.1:8080 LISTEN", "tcp6 [::1]:22 -> [::1]:51234 ESTABLISHED", "unix /run/x.sock" */
};

/* An address as /proc/net/tcp{,6} prints it, decoded. */
struct inet_endpoint {
    int family;              /* AF_INET or AF_INET6 */
    unsigned char addr[16];  /* network order (4 bytes for AF_INET) */
    unsigned port;
};

struct socket_table {
    struct socket_entry *entries;
    size_t n, cap;
};

/* Loads every socket the target's network namespace knows. Returns 0 or -errno. */
int sockets_load(int pid, struct socket_table *t);
const char *sockets_describe(const struct socket_table *t, unsigned long inode);
void sockets_free(struct socket_table *t);

/* One line of /proc/net/tcp|udp (v6: tcp6|udp6), decoded. */
struct inet_line {
    struct inet_endpoint local, remote;
    unsigned state; /* TCP: 0x0A is LISTEN */
    unsigned long inode;
};

/* Decodes one line of /proc/net/tcp|udp (v6: tcp6|udp6); 0, or -1 when it is not one (the header). */
int sockets_parse_inet_line(const char *line, int v6, struct inet_line *out);
/* "127.0.0.1:8080", "[::1]:22". */
void sockets_format_endpoint(const struct inet_endpoint *e, char *out, size_t n);

/* Parses one line of /proc/net/tcp|udp (v6: tcp6|udp6) into inode and description; returns 0 or -1. */
int sockets_parse_inet(const char *line, const char *proto, int v6, unsigned long *inode, char *desc, size_t n);
/* Parses one line of /proc/net/unix. */
int sockets_parse_unix(const char *line, unsigned long *inode, char *desc, size_t n);
#endif
