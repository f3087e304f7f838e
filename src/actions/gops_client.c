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

#include "../util/clock.h"
#include "../util/peer_io.h"

/* The wait of one exchange: its cancel flag and progress. */
static struct peer_wait wait_of(const struct gops_exchange *x)
{
    double now = clock_monotonic_seconds();
    return (struct peer_wait){.cancel = x->cancel, .takes = x->takes, .progress = x->progress,
                              .progress_arg = x->progress_arg, .t0 = now, .last = now};
}

static int connect_local(const struct gops_exchange *x, double timeout, struct peer_wait *w, char *err,
                         size_t errlen)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot create a socket: %s", strerror(e));
        return -e;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)x->port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int rc = peer_connect(fd, (struct sockaddr *)&sa, sizeof sa, w->t0 + timeout, w);
    if (rc == 0) return fd;
    close(fd);
    if (rc == -ECONNREFUSED)
        snprintf(err, errlen, "connection to the gops agent on 127.0.0.1:%u refused: nothing listens there now",
                 x->port);
    else if (rc == -ETIMEDOUT)
        snprintf(err, errlen, "the gops agent on 127.0.0.1:%u did not accept the connection within %g s", x->port,
                 timeout);
    else if (rc == -ECANCELED) snprintf(err, errlen, "cancelled");
    else snprintf(err, errlen, "cannot connect to 127.0.0.1:%u: %s", x->port, strerror(-rc));
    return rc;
}

/* Words for a reply that failed after it was sent. */
static void reply_error(const struct gops_exchange *x, int rc, size_t got, double allowed, char *err,
                        size_t errlen)
{
    if (rc == -ECANCELED) snprintf(err, errlen, "cancelled");
    else if (rc == -ETIMEDOUT && got == 0)
        snprintf(err, errlen, "no reply from the gops agent on 127.0.0.1:%u within %g s (it accepted but did not "
                 "answer: hung, or busy with another client)", x->port, allowed);
    else if (rc == -ETIMEDOUT)
        snprintf(err, errlen, "the gops agent on 127.0.0.1:%u sent %zu bytes but did not finish its reply within "
                 "%g s", x->port, got, allowed);
    else if (rc == -EMSGSIZE)
        snprintf(err, errlen, "the reply of the gops agent on 127.0.0.1:%u exceeds %zu %s: refused (not a gops "
                 "agent, or a misbehaving one)", x->port,
                 x->max_reply >= (1u << 20) ? x->max_reply >> 20 : x->max_reply >> 10,
                 x->max_reply >= (1u << 20) ? "MiB" : "KiB");
    else if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
    else if (rc == -ECONNRESET)
        snprintf(err, errlen, "the gops agent on 127.0.0.1:%u reset the connection without replying", x->port);
    else snprintf(err, errlen, "reading from the gops agent on 127.0.0.1:%u: %s", x->port, strerror(-rc));
}

int gops_client_exchange(const struct gops_exchange *x, struct gops_reply *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    double timeout = x->timeout > 0 ? x->timeout : 5.0;
    struct peer_wait w = wait_of(x);
    int fd = connect_local(x, timeout, &w, err, errlen);
    if (fd < 0) return fd;

    int rc = 0;
    /* The command goes in one send: the agent reads its byte, then (setgc) the varint from what is buffered. */
    ssize_t sent = send(fd, x->cmd, x->cmdlen, MSG_NOSIGNAL);
    if (sent != (ssize_t)x->cmdlen) {
        rc = sent < 0 ? -errno : -EIO;
        snprintf(err, errlen, "cannot send the command to the gops agent on 127.0.0.1:%u: %s", x->port,
                 strerror(-rc));
    } else {
        char *data;
        rc = peer_read_all(fd, clock_monotonic_seconds() + x->takes + timeout, x->max_reply, &w, &data, &out->len);
        if (rc < 0) reply_error(x, rc, out->len, x->takes + timeout, err, errlen);
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
