/* peer_io: one exchange with an untrusted local peer (an agent) over a non-blocking socket: connect by a
 * deadline, then read the whole reply to EOF by one deadline with a size cap, cancellable and reporting
 * progress on the way. Callers word the errors: these return plain -errno values. */
#ifndef DIAGTOP_PEER_IO_H
#define DIAGTOP_PEER_IO_H
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/socket.h>

struct peer_wait {
    const volatile sig_atomic_t *cancel;
    double takes; /* seconds the peer is known to take before it replies: progress is elapsed / takes */
    void (*progress)(void *arg, double fraction); /* about 4 times a second while takes > 0 */
    void *progress_arg;
    double t0, last; /* when the exchange began; when progress was last reported (set both to now) */
};

int peer_cancelled(const struct peer_wait *w);
/* Waits for events on fd: 1 ready, 0 the deadline passed, -ECANCELED, -errno. */
int peer_wait_ready(int fd, short events, double deadline, struct peer_wait *w);
/* connect()s the non-blocking fd by the deadline: 0, -ETIMEDOUT, -ECANCELED, -errno. EAGAIN (a Unix socket's
 * backlog is full: the peer is busy) is tried again every 20 ms until the deadline. */
int peer_connect(int fd, const struct sockaddr *sa, socklen_t salen, double deadline, struct peer_wait *w);
/* Reads until EOF by the deadline (a peer trickling a byte now and then is as hung as a silent one): 0 with
 * *data (malloc'd, NUL-terminated, the NUL not counted) and *len; a reset after some bytes counts as their end.
 * Else -ETIMEDOUT, -EMSGSIZE (more than max bytes), -ENOMEM, -ECANCELED or -errno, with *len the bytes that
 * came and *data NULL. */
int peer_read_all(int fd, double deadline, size_t max, struct peer_wait *w, char **data, size_t *len);
#endif
