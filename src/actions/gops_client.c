#include "gops_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../util/clock.h"

#define SLICE_MS 100 /* how often a wait looks at the cancel flag */

static int cancelled(const struct gops_exchange *x) { return x->cancel && *x->cancel; }

/* Waits until fd is ready for events, the deadline passes (0), or the exchange is cancelled (-ECANCELED).
 * Reports progress on the way. Returns 1 when ready. */
static int wait_for(int fd, short events, double deadline, const struct gops_exchange *x, double t0, double *last)
{
    for (;;) {
        if (cancelled(x)) return -ECANCELED;
        double now = clock_monotonic_seconds();
        if (now >= deadline) return 0;
        if (x->progress && x->takes > 0 && now - *last >= 0.25) {
            double f = (now - t0) / x->takes;
            x->progress(x->progress_arg, f < 1 ? f : 1);
            *last = now;
        }
        double left_ms = (deadline - now) * 1000.0;
        struct pollfd p = {.fd = fd, .events = events};
        int r = poll(&p, 1, left_ms < SLICE_MS ? (int)left_ms + 1 : SLICE_MS);
        if (r < 0 && errno != EINTR) return -errno;
        if (r > 0) return 1;
    }
}

static int connect_local(const struct gops_exchange *x, double timeout, double t0, double *last, char *err,
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
    int rc = 0;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        if (errno != EINPROGRESS) {
            rc = -errno;
        } else {
            int w = wait_for(fd, POLLOUT, t0 + timeout, x, t0, last);
            int soerr = 0;
            socklen_t sl = sizeof soerr;
            if (w < 0) rc = w;
            else if (w == 0) rc = -ETIMEDOUT;
            else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0) rc = -errno;
            else rc = -soerr;
        }
    }
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

int gops_client_exchange(const struct gops_exchange *x, struct gops_reply *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    double timeout = x->timeout > 0 ? x->timeout : 5.0;
    double t0 = clock_monotonic_seconds(), last = t0;
    int fd = connect_local(x, timeout, t0, &last, err, errlen);
    if (fd < 0) return fd;

    int rc = 0;
    size_t cap = 0;
    /* The command goes in one send: the agent reads its byte, then (setgc) the varint from what is buffered. */
    ssize_t w = send(fd, x->cmd, x->cmdlen, MSG_NOSIGNAL);
    if (w != (ssize_t)x->cmdlen) {
        rc = w < 0 ? -errno : -EIO;
        snprintf(err, errlen, "cannot send the command to the gops agent on 127.0.0.1:%u: %s", x->port,
                 strerror(-rc));
        goto out;
    }
    /* The whole reply by one deadline: a peer trickling a byte now and then is as hung as a silent one. */
    double deadline = clock_monotonic_seconds() + x->takes + timeout;
    for (;;) {
        int r = wait_for(fd, POLLIN, deadline, x, t0, &last);
        if (r < 0) {
            rc = r;
            if (r == -ECANCELED) snprintf(err, errlen, "cancelled");
            else snprintf(err, errlen, "waiting for the gops agent: %s", strerror(-r));
            goto out;
        }
        if (r == 0) {
            rc = -ETIMEDOUT;
            if (out->len == 0)
                snprintf(err, errlen, "no reply from the gops agent on 127.0.0.1:%u within %g s (it accepted "
                         "but did not answer: hung, or busy with another client)", x->port, x->takes + timeout);
            else
                snprintf(err, errlen, "the gops agent on 127.0.0.1:%u sent %zu bytes but did not finish its reply "
                         "within %g s", x->port, out->len, x->takes + timeout);
            goto out;
        }
        if (out->len + 65536 + 1 > cap) {
            size_t ncap = cap ? cap * 2 : 65536 + 1;
            if (ncap > x->max_reply + 65536 + 1) ncap = x->max_reply + 65536 + 1;
            unsigned char *nb = ncap > cap ? realloc(out->data, ncap) : NULL;
            if (!nb) {
                rc = -ENOMEM;
                snprintf(err, errlen, "out of memory");
                goto out;
            }
            out->data = nb;
            cap = ncap;
        }
        ssize_t n = recv(fd, out->data + out->len, cap - out->len - 1, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n < 0 && errno == ECONNRESET && out->len > 0) break; /* extra bytes make the agent reset after it */
        if (n < 0) {
            rc = -errno;
            if (rc == -ECONNRESET)
                snprintf(err, errlen, "the gops agent on 127.0.0.1:%u reset the connection without replying",
                         x->port);
            else snprintf(err, errlen, "reading from the gops agent on 127.0.0.1:%u: %s", x->port, strerror(-rc));
            goto out;
        }
        if (n == 0) break;
        out->len += (size_t)n;
        if (out->len > x->max_reply) {
            rc = -EMSGSIZE;
            snprintf(err, errlen, "the reply of the gops agent on 127.0.0.1:%u exceeds %zu %s: refused (not a gops "
                     "agent, or a misbehaving one)", x->port,
                     x->max_reply >= (1u << 20) ? x->max_reply >> 20 : x->max_reply >> 10,
                     x->max_reply >= (1u << 20) ? "MiB" : "KiB");
            goto out;
        }
    }
    if (!out->data && !(out->data = malloc(1))) {
        rc = -ENOMEM;
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    out->data[out->len] = '\0';
    out->ms = (clock_monotonic_seconds() - t0) * 1000.0;
out:
    close(fd);
    if (rc < 0) gops_reply_free(out);
    return rc;
}

void gops_reply_free(struct gops_reply *r)
{
    free(r->data);
    memset(r, 0, sizeof *r);
}
