#include "tcp_counters.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define RECV_BUFFER (64 * 1024)
#define STATE_LISTEN 10 /* the kernel's TCP_LISTEN (include/net/tcp_states.h, not in the uapi headers) */
#define LISTENERS_MAX 256
#define FRESH_SECONDS 5.0 /* a socket missing from a dump this old may just have been missed by a process's scan */

static size_t slot_of(unsigned long inode, size_t cap)
{
    return (size_t)((inode * 0x9E3779B97F4A7C15ULL) >> 20) & (cap - 1);
}

static int table_grow(struct tcp_counters *t)
{
    size_t cap = t->cap ? t->cap * 2 : 1024;
    struct tcp_socket_bytes *slots = calloc(cap, sizeof *slots);
    if (!slots) return -ENOMEM;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slots[i].inode) continue;
        size_t k = slot_of(t->slots[i].inode, cap);
        while (slots[k].inode) k = (k + 1) & (cap - 1);
        slots[k] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

int tcp_counters_add(struct tcp_counters *t, struct tcp_socket_bytes socket)
{
    unsigned long inode = socket.inode;
    if (!inode) return 0;
    if ((t->n + 1) * 2 > t->cap && table_grow(t) < 0) return -ENOMEM;
    size_t k = slot_of(inode, t->cap);
    while (t->slots[k].inode && t->slots[k].inode != inode) k = (k + 1) & (t->cap - 1);
    if (!t->slots[k].inode) t->n++;
    t->slots[k] = (struct tcp_socket_bytes){.inode = inode, .received = socket.received, .acked = socket.acked,
                                            .port = socket.port, .listening = socket.listening};
    return 0;
}

static struct tcp_socket_bytes *slot_find(struct tcp_socket_bytes *slots, size_t cap, unsigned long inode)
{
    if (!cap || !inode) return NULL;
    for (size_t k = slot_of(inode, cap); slots[k].inode; k = (k + 1) & (cap - 1))
        if (slots[k].inode == inode) return &slots[k];
    return NULL;
}

const struct tcp_socket_bytes *tcp_counters_find(const struct tcp_counters *t, unsigned long inode)
{
    return slot_find(t->slots, t->cap, inode);
}

const struct tcp_socket_bytes *tcp_counters_claim(struct tcp_counters *t, unsigned long inode)
{
    struct tcp_socket_bytes *b = slot_find(t->slots, t->cap, inode);
    if (b) b->owned = 1;
    return b;
}

static void tcp_counters_clear(struct tcp_counters *t)
{
    if (t->slots) memset(t->slots, 0, t->cap * sizeof *t->slots);
    t->n = 0;
}

void tcp_counters_begin(struct tcp_counters *t)
{
    struct tcp_socket_bytes *slots = t->prev;
    size_t cap = t->prev_cap;
    t->prev = t->slots;
    t->prev_cap = t->cap;
    t->prev_ok = t->ok;
    t->prev_time = t->time;
    t->slots = slots;
    t->cap = cap;
    tcp_counters_clear(t);
}

void tcp_counters_settle(struct tcp_counters *t, double now, int ok)
{
    t->ok = ok;
    t->time = now;
    int prev_recent = t->prev_ok && now - t->prev_time <= FRESH_SECONDS;
    struct tcp_socket_bytes *listeners[LISTENERS_MAX]; /* more are rare; their connections wait for a rescan */
    size_t nlisteners = 0;
    for (size_t i = 0; i < t->cap; i++) {
        struct tcp_socket_bytes *b = &t->slots[i];
        if (!b->inode) continue;
        const struct tcp_socket_bytes *old = slot_find(t->prev, t->prev_cap, b->inode);
        if (old) {
            b->owned = old->owned;
            b->unowned_since = old->unowned_since;
        }
        b->fresh = !old && prev_recent;
        if (b->listening && nlisteners < LISTENERS_MAX) listeners[nlisteners++] = b;
    }
    t->searching = 0;
    for (size_t i = 0; i < t->cap; i++) {
        struct tcp_socket_bytes *b = &t->slots[i];
        /* a listening or silent socket moves nothing: whoever holds it, no row's rate depends on finding it */
        if (!b->inode || b->owned || (!b->received && !b->acked)) continue;
        if (!b->unowned_since) {
            b->unowned_since = now;
            for (size_t l = 0; l < nlisteners; l++)
                if (listeners[l]->port == b->port) listeners[l]->accepted = 1;
        }
        if (now - b->unowned_since < TCP_OWNER_SEARCH_SECONDS) t->searching++;
    }
}

void tcp_counters_free(struct tcp_counters *t)
{
    free(t->slots);
    free(t->prev);
    memset(t, 0, sizeof *t);
}

/* Asks for every TCP socket of one family, in every state, with tcp_info. */
static int send_request(int fd, int family)
{
    struct {
        struct nlmsghdr nh;
        struct inet_diag_req_v2 req;
    } msg = {
        .nh = {.nlmsg_len = sizeof msg, .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
        .req = {.sdiag_family = (unsigned char)family, .sdiag_protocol = IPPROTO_TCP, .idiag_states = ~0U,
                .idiag_ext = 1 << (INET_DIAG_INFO - 1)},
    };
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    return sendto(fd, &msg, sizeof msg, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0 ? -errno : 0;
}

/* The same for IPv4 and IPv6 at once, in the older request form (TCPDIAG_GETSOCK), which the kernel serves with
 * one walk of its socket hash table for both families: the walk, not the sockets, is most of a dump's cost on a
 * quiet machine (262,144 buckets with 24 GiB). */
static int send_request_both(int fd)
{
    struct {
        struct nlmsghdr nh;
        struct inet_diag_req req;
    } msg = {
        .nh = {.nlmsg_len = sizeof msg, .nlmsg_type = TCPDIAG_GETSOCK, .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
        .req = {.idiag_family = AF_INET, .idiag_states = ~0U, .idiag_ext = 1 << (INET_DIAG_INFO - 1)},
    };
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    return sendto(fd, &msg, sizeof msg, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0 ? -errno : 0;
}

/* One socket of the reply: its inode and, when tcp_info is long enough to hold them, its two byte counters. */
static int take_socket(struct tcp_counters *t, const struct nlmsghdr *nh)
{
    if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg))) return 0;
    const struct inet_diag_msg *m = NLMSG_DATA(nh);
    size_t left = nh->nlmsg_len - NLMSG_LENGTH(sizeof *m);
    const struct nlattr *a = (const struct nlattr *)((const char *)m + NLMSG_ALIGN(sizeof *m));
    while (left >= sizeof *a && a->nla_len >= sizeof *a && a->nla_len <= left) {
        if ((a->nla_type & NLA_TYPE_MASK) == INET_DIAG_INFO) {
            size_t len = a->nla_len - NLA_HDRLEN;
            const char *info = (const char *)a + NLA_HDRLEN;
            size_t need = offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(__u64);
            if (len < need) return 0; /* a kernel before 4.2 */
            __u64 received, acked;
            memcpy(&received, info + offsetof(struct tcp_info, tcpi_bytes_received), sizeof received);
            memcpy(&acked, info + offsetof(struct tcp_info, tcpi_bytes_acked), sizeof acked);
            return tcp_counters_add(t, (struct tcp_socket_bytes){.inode = m->idiag_inode, .received = received,
                                                                 .acked = acked, .port = ntohs(m->id.idiag_sport),
                                                                 .listening = m->idiag_state == STATE_LISTEN});
        }
        size_t step = NLA_ALIGN(a->nla_len);
        if (step >= left) break;
        left -= step;
        a = (const struct nlattr *)((const char *)a + step);
    }
    return 0;
}

/* Reads the reply to one request until NLMSG_DONE. */
static int read_reply(int fd, struct tcp_counters *t, char *buf, char *err, size_t errlen)
{
    for (;;) {
        ssize_t n = recv(fd, buf, RECV_BUFFER, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            snprintf(err, errlen, "sock_diag: %s", strerror(errno));
            return -errno;
        }
        if (n == 0) return 0;
        size_t left = (size_t)n;
        for (const struct nlmsghdr *nh = (const struct nlmsghdr *)buf; NLMSG_OK(nh, left); nh = NLMSG_NEXT(nh, left)) {
            if (nh->nlmsg_type == NLMSG_DONE) return 0;
            if (nh->nlmsg_type == NLMSG_ERROR) {
                const struct nlmsgerr *e = NLMSG_DATA(nh);
                int code = nh->nlmsg_len >= NLMSG_LENGTH(sizeof *e) && e->error ? -e->error : EPROTO;
                snprintf(err, errlen, "sock_diag: %s", strerror(code));
                return -code;
            }
            if ((nh->nlmsg_type == SOCK_DIAG_BY_FAMILY || nh->nlmsg_type == TCPDIAG_GETSOCK) &&
                take_socket(t, nh) < 0) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
            }
        }
    }
}

int tcp_counters_dump(struct tcp_counters *t, double now, char *err, size_t errlen)
{
    tcp_counters_begin(t);
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0) {
        snprintf(err, errlen, "sock_diag: %s", strerror(errno));
        return -errno;
    }
    char *buf = malloc(RECV_BUFFER);
    int rc = !buf ? -ENOMEM : t->per_family ? -EOPNOTSUPP : send_request_both(fd);
    if (rc == 0) rc = read_reply(fd, t, buf, err, errlen);
    if (rc < 0 && rc != -ENOMEM) { /* a kernel without the older form: one request a family, from now on */
        t->per_family = 1;
        tcp_counters_clear(t);
        static const int families[] = {AF_INET, AF_INET6};
        rc = 0;
        for (size_t i = 0; rc == 0 && i < sizeof families / sizeof families[0]; i++) {
            rc = send_request(fd, families[i]);
            if (rc < 0) snprintf(err, errlen, "sock_diag: %s", strerror(-rc));
            else rc = read_reply(fd, t, buf, err, errlen);
        }
    }
    free(buf);
    close(fd);
    struct stat ns; /* diagtop's own namespace: looked up once */
    if (!t->netns && stat("/proc/self/ns/net", &ns) == 0) t->netns = (unsigned long long)ns.st_ino;
    if (rc == 0) t->dumps++;
    tcp_counters_settle(t, now, rc == 0);
    return rc;
}
