#include "gops_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/netns_socket.h"
#include "util/peer_io.h"

/* The wait of one exchange: its cancel flag and progress. */
static struct peer_wait wait_of(const struct gops_exchange *x)
{
    double now = clock_monotonic_seconds();
    return (struct peer_wait){.cancel = x->cancel, .takes = x->takes, .progress = x->progress,
                              .progress_arg = x->progress_arg, .t0 = now, .last = now};
}

static int connect_agent(const struct gops_exchange *x, const char *at, double timeout, struct peer_wait *w,
                         char *err, size_t errlen)
{
    int type = SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC;
    int fd = x->netns_pid ? netns_socket(x->netns_pid, x->agent.family, type) : socket(x->agent.family, type, 0);
    if (fd < 0) {
        int e = x->netns_pid ? -fd : errno;
        if (x->netns_pid && e == EPERM)
            snprintf(err, errlen, "the gops agent on %s cannot be reached: entering process %d's network namespace "
                     "needs root (CAP_SYS_ADMIN)", at, x->netns_pid);
        else snprintf(err, errlen, "cannot create a socket%s: %s",
                      x->netns_pid ? " in the target's network namespace" : "", strerror(e));
        return -e;
    }
    struct sockaddr_storage sa = {0};
    socklen_t len;
    if (x->agent.family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&sa;
        *a = (struct sockaddr_in6){.sin6_family = AF_INET6, .sin6_port = htons((unsigned short)x->agent.port)};
        memcpy(&a->sin6_addr, x->agent.addr, 16);
        len = sizeof *a;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&sa;
        *a = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((unsigned short)x->agent.port)};
        memcpy(&a->sin_addr, x->agent.addr, 4);
        len = sizeof *a;
    }
    int rc = peer_connect(fd, (struct sockaddr *)&sa, len, w->t0 + timeout, w);
    if (rc == 0) return fd;
    close(fd);
    if (rc == -ECONNREFUSED)
        snprintf(err, errlen, "connection to the gops agent on %s refused: nothing listens there now", at);
    else if (rc == -ETIMEDOUT)
        snprintf(err, errlen, "the gops agent on %s did not accept the connection within %g s", at, timeout);
    else if (rc == -ECANCELED) snprintf(err, errlen, "cancelled");
    else snprintf(err, errlen, "cannot connect to %s: %s", at, strerror(-rc));
    return rc;
}

/* Words for a reply that failed after it was sent. */
static void reply_error(const struct gops_exchange *x, const char *at, int rc, size_t got, double allowed, char *err,
                        size_t errlen)
{
    if (rc == -ECANCELED) snprintf(err, errlen, "cancelled");
    else if (rc == -ETIMEDOUT && got == 0)
        snprintf(err, errlen, "no reply from the gops agent on %s within %g s (it accepted but did not "
                 "answer: hung, or busy with another client)", at, allowed);
    else if (rc == -ETIMEDOUT)
        snprintf(err, errlen, "the gops agent on %s sent %zu bytes but did not finish its reply within "
                 "%g s", at, got, allowed);
    else if (rc == -EMSGSIZE)
        snprintf(err, errlen, "the reply of the gops agent on %s exceeds %zu %s: refused (not a gops "
                 "agent, or a misbehaving one)", at,
                 x->max_reply >= (1u << 20) ? x->max_reply >> 20 : x->max_reply >> 10,
                 x->max_reply >= (1u << 20) ? "MiB" : "KiB");
    else if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
    else if (rc == -ECONNRESET)
        snprintf(err, errlen, "the gops agent on %s reset the connection without replying", at);
    else snprintf(err, errlen, "reading from the gops agent on %s: %s", at, strerror(-rc));
}

int gops_client_exchange(const struct gops_exchange *x, struct gops_reply *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    double timeout = x->timeout > 0 ? x->timeout : 5.0;
    struct peer_wait w = wait_of(x);
    char at[128];
    sockets_format_endpoint(&x->agent, at, sizeof at);
    if (x->netns_pid) { /* the address is the container's, not ours: say so wherever it is named */
        size_t n = strlen(at);
        snprintf(at + n, sizeof at - n, " (in the network namespace of process %d)", x->netns_pid);
    }
    int fd = connect_agent(x, at, timeout, &w, err, errlen);
    if (fd < 0) return fd;

    int rc = 0;
    /* The command goes in one send: the agent reads its byte, then (setgc) the varint from what is buffered. */
    ssize_t sent = send(fd, x->cmd, x->cmdlen, MSG_NOSIGNAL);
    if (sent != (ssize_t)x->cmdlen) {
        rc = sent < 0 ? -errno : -EIO;
        snprintf(err, errlen, "cannot send the command to the gops agent on %s: %s", at,
                 strerror(-rc));
    } else {
        char *data;
        rc = peer_read_all(fd, clock_monotonic_seconds() + x->takes + timeout, x->max_reply, &w, &data, &out->len);
        if (rc < 0) reply_error(x, at, rc, out->len, x->takes + timeout, err, errlen);
        else out->data = (unsigned char *)data;
        out->ms = (clock_monotonic_seconds() - w.t0) * 1000.0;
    }
    close(fd);
    if (rc < 0) gops_reply_free(out);
    return rc;
}

void gops_reply_free(struct gops_reply *r)
{
    free(r->data);
    memset(r, 0, sizeof *r);
}
