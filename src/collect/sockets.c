#include "sockets.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fileio.h"
#include "util/grow.h"

static const char *tcp_state(unsigned st)
{
    static const char *const names[] = {"", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2",
                                        "TIME_WAIT", "CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING"};
    return st < sizeof names / sizeof names[0] ? names[st] : "?";
}

/* "0100007F:1F90" (v4) or 32 hex digits (v6: four words in the kernel's byte order) + ":port" into e. 0 or -1. */
static int parse_endpoint(const char *hex, int v6, struct inet_endpoint *e)
{
    memset(e, 0, sizeof *e);
    const char *colon = strchr(hex, ':');
    if (!colon || sscanf(colon + 1, "%x", &e->port) != 1 || e->port > 65535) return -1;
    e->family = v6 ? AF_INET6 : AF_INET;
    for (int w = 0; w < (v6 ? 4 : 1); w++) {
        unsigned word; /* the kernel prints each 32-bit word of the address as a host-order integer */
        if (sscanf(hex + 8 * w, "%8x", &word) != 1) return -1;
        memcpy(&e->addr[4 * w], &word, 4);
    }
    return 0;
}

void sockets_format_endpoint(const struct inet_endpoint *e, char *out, size_t n)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    inet_ntop(e->family, e->addr, ip, sizeof ip);
    snprintf(out, n, e->family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, e->port);
}

int sockets_parse_inet_line(const char *line, int v6, struct inet_line *out)
{
    /* "  0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000  0 12345 ..." */
    char local[64], remote[64];
    if (sscanf(line, " %*d: %63s %63s %x %*x:%*x %*x:%*x %*x %*u %*u %lu", local, remote, &out->state,
               &out->inode) != 4)
        return -1;
    return parse_endpoint(local, v6, &out->local) == 0 && parse_endpoint(remote, v6, &out->remote) == 0 ? 0 : -1;
}

int sockets_parse_inet(const char *line, const char *proto, int v6, unsigned long *inode, char *desc, size_t n)
{
    struct inet_line in;
    char l[80], r[80];
    if (sockets_parse_inet_line(line, v6, &in) < 0) return -1;
    *inode = in.inode;
    sockets_format_endpoint(&in.local, l, sizeof l);
    sockets_format_endpoint(&in.remote, r, sizeof r);
    int is_tcp = strncmp(proto, "tcp", 3) == 0;
    if (is_tcp && in.state == 0x0A) snprintf(desc, n, "%s %s LISTEN", proto, l);
    else if (!is_tcp && in.remote.port == 0) snprintf(desc, n, "%s %s", proto, l); /* not connected */
    else
        snprintf(desc, n, "%s %s -> %s%s%s", proto, l, r, is_tcp ? " " : "", is_tcp ? tcp_state(in.state) : "");
    return 0;
}

int sockets_parse_unix(const char *line, unsigned long *inode, char *desc, size_t n)
{
    /* "0000000000000000: 00000002 00000000 00010000 0001 01 12345 /run/x.sock" */
    unsigned type, st;
    int off = 0;
    if (sscanf(line, "%*[0-9a-fA-F]: %*x %*x %*x %x %x %lu%n", &type, &st, inode, &off) != 3) return -1;
    const char *path = line + off;
    while (*path == ' ') path++;
    size_t plen = strcspn(path, "\n");
    const char *kind = type == 1 ? "stream" : type == 2 ? "dgram" : type == 5 ? "seqpacket" : "?";
    if (plen) snprintf(desc, n, "unix %s %.*s", kind, (int)plen, path);
    else snprintf(desc, n, "unix %s (unnamed)", kind);
    return 0;
}

static int add(struct socket_table *t, unsigned long inode, const char *desc)
{
    if (GROW(t->entries, t->cap, t->n, 64) < 0) return -ENOMEM;
    t->entries[t->n].inode = inode;
    snprintf(t->entries[t->n].desc, sizeof t->entries[t->n].desc, "%s", desc);
    t->n++;
    return 0;
}

int sockets_load(int pid, struct socket_table *t)
{
    static const struct { const char *file, *proto; int v6; } tables[] = {
        {"tcp", "tcp", 0}, {"tcp6", "tcp6", 1}, {"udp", "udp", 0}, {"udp6", "udp6", 1}, {"unix", NULL, 0}};
    size_t max = 4 << 20;
    char *buf = malloc(max);
    if (!buf) return -ENOMEM;
    int any = 0;
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/net/%s", pid, tables[i].file);
        if (fileio_read_at(AT_FDCWD, path, buf, max) <= 0) continue;
        any = 1;
        char *line = strchr(buf, '\n'); /* header */
        while (line && *++line) {
            unsigned long inode;
            char desc[160];
            int ok = tables[i].proto ? sockets_parse_inet(line, tables[i].proto, tables[i].v6, &inode, desc, sizeof desc)
                                     : sockets_parse_unix(line, &inode, desc, sizeof desc);
            if (ok == 0 && inode) add(t, inode, desc);
            line = strchr(line, '\n');
        }
    }
    free(buf);
    return any ? 0 : -EACCES;
}

const char *sockets_describe(const struct socket_table *t, unsigned long inode)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->entries[i].inode == inode) return t->entries[i].desc;
    return NULL;
}

void sockets_free(struct socket_table *t)
{
    free(t->entries);
    memset(t, 0, sizeof *t);
}
