/* gops_client: one exchange with a gops agent (docs/protocols/gops.md: Transport): connect to its address (the one
 * its socket is bound to, 127.0.0.1 by default) within a timeout, send the command bytes, read until the agent
 * closes. The agent is an untrusted peer that may never answer, never close, or send without end: the reply must
 * complete by a deadline (the command's known duration, e.g. 30 s for a CPU profile, plus the timeout), is capped in
 * size, and the exchange gives up within a tenth of a second of *cancel being set. It never retries and never sends
 * more than the command. */
#ifndef DIAGTOP_GOPS_CLIENT_H
#define DIAGTOP_GOPS_CLIENT_H
#include <signal.h>
#include <stddef.h>

#include "collect/sockets.h"

struct gops_exchange {
    struct inet_endpoint agent;
    int netns_pid;            /* the agent is in this process's network namespace, not ours (a container): the
                               * socket is made there (util/netns_socket, root only); 0: ours */
    const unsigned char *cmd; /* one command byte, and setgc's argument */
    size_t cmdlen;
    double timeout;           /* seconds to connect, and for the reply beyond `takes` (<= 0: 5) */
    double takes;             /* seconds the agent is known to take before it replies (CPU profile: 30) */
    size_t max_reply;         /* bytes */
    const volatile sig_atomic_t *cancel;
    /* While waiting for a command that takes time: elapsed / takes (0..1), about 4 times a second. */
    void (*progress)(void *arg, double fraction);
    void *progress_arg;
};

struct gops_reply {
    unsigned char *data; /* malloc'd, NUL-terminated (the NUL is not counted) */
    size_t len;
    double ms;           /* connect to EOF */
};

/* Returns 0 with the reply (possibly empty: what the agent answers to a command it does not know), or -errno
 * with a one-line reason: -ECONNREFUSED (nothing listens), -ETIMEDOUT (no connection, or no complete reply in
 * time: a hung agent, or one busy with another client), -EMSGSIZE (over max_reply), -ECONNRESET (closed before
 * any reply), -ECANCELED. */
int gops_client_exchange(const struct gops_exchange *x, struct gops_reply *out, char *err, size_t errlen);
void gops_reply_free(struct gops_reply *r);
#endif
