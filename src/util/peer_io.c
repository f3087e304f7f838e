#include "peer_io.h"

#include <errno.h>
#include <stdlib.h>

#include "clock.h"

#define SLICE_MS 100 /* how often a wait looks at the cancel flag */

int peer_cancelled(const struct peer_wait *w) { return w->cancel && *w->cancel; }

int peer_wait_ready(int fd, short events, double deadline, struct peer_wait *w)
{
    for (;;) {
        if (peer_cancelled(w)) return -ECANCELED;
        double now = clock_monotonic_seconds();
        if (now >= deadline) return 0;
        if (w->progress && w->takes > 0 && now - w->last >= 0.25) {
            double f = (now - w->t0) / w->takes;
            w->progress(w->progress_arg, f < 1 ? f : 1);
            w->last = now;
        }
        double left_ms = (deadline - now) * 1000.0;
        struct pollfd p = {.fd = fd, .events = events};
        int r = poll(&p, 1, left_ms < SLICE_MS ? (int)left_ms + 1 : SLICE_MS);
        if (r < 0 && errno != EINTR) return -errno;
        if (r > 0) return 1;
    }
}

int peer_connect(int fd, const struct sockaddr *sa, socklen_t salen, double deadline, struct peer_wait *w)
{
    while (connect(fd, sa, salen) < 0) {
        if (errno == EINTR) continue;
        if (errno == EINPROGRESS) {
            int r = peer_wait_ready(fd, POLLOUT, deadline, w), soerr = 0;
            socklen_t sl = sizeof soerr;
            if (r < 0) return r;
            if (r == 0) return -ETIMEDOUT;
            if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0) return -errno;
            return -soerr;
        }
        if (errno != EAGAIN) return -errno;
        if (clock_monotonic_seconds() >= deadline) return -ETIMEDOUT;
        if (peer_cancelled(w)) return -ECANCELED;
        clock_sleep(0.02, w->cancel);
    }
    return 0;
}

int peer_read_all(int fd, double deadline, size_t max, struct peer_wait *w, char **data, size_t *len)
{
    enum { STEP = 65536 };
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (;;) {
        int r = peer_wait_ready(fd, POLLIN, deadline, w);
        if (r <= 0) {
            rc = r < 0 ? r : -ETIMEDOUT;
            break;
        }
        if (n + STEP + 1 > cap) { /* grows by doubling, never beyond what the cap can need */
            size_t ncap = cap ? cap * 2 : STEP + 1;
            if (ncap > max + STEP + 1) ncap = max + STEP + 1;
            char *nb = ncap > cap ? realloc(buf, ncap) : NULL;
            if (!nb) {
                rc = -ENOMEM;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t got = recv(fd, buf + n, cap - n - 1, 0);
        if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (got < 0 && errno == ECONNRESET && n > 0) break; /* bytes after the reply make a peer reset after it */
        if (got < 0) {
            rc = -errno;
            break;
        }
        if (got == 0) break;
        n += (size_t)got;
        if (n > max) {
            rc = -EMSGSIZE;
            break;
        }
    }
    if (rc == 0 && !buf && !(buf = malloc(1))) rc = -ENOMEM;
    *len = n;
    if (rc < 0) {
        free(buf);
        *data = NULL;
        return rc;
    }
    buf[n] = '\0';
    *data = buf;
    return 0;
}
