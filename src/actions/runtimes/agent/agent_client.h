/* agent_client: one exchange with a diagtop agent (include/diagtop-agent.h: the protocol) and the parsing of its
 * replies. Connect to the Unix socket within a timeout (through an O_PATH descriptor of its directory when the
 * path is longer than a socket address holds), send one request line, read until the agent closes. The agent is
 * an untrusted peer: the whole reply must come by a deadline (what the request takes, e.g. a CPU profile's
 * seconds, plus the timeout), is capped in size, must end with its "end" line, and the exchange gives up within a
 * tenth of a second of *cancel being set. Parsers check every number and bound every count. */
#ifndef DIAGTOP_AGENT_CLIENT_H
#define DIAGTOP_AGENT_CLIENT_H
#include <signal.h>
#include <stddef.h>

#include "actions/runtimes/results.h"

struct agent_exchange {
    const char *path;    /* the socket */
    const char *request; /* one line, without its '\n' */
    double timeout;      /* seconds to connect, and for the reply beyond `takes` (<= 0: 5) */
    double takes;        /* seconds the request is known to take (a CPU profile's duration) */
    size_t max_reply;
    const volatile sig_atomic_t *cancel;
    void (*progress)(void *arg, double fraction); /* while waiting for a request that takes time */
    void *progress_arg;
};

struct agent_reply {
    char *data;      /* malloc'd, NUL-terminated; the body: after the status line, without the "end" line */
    size_t len;
    double ms;       /* connect to EOF */
    int truncated;   /* the agent left rows out (its "truncated 1") */
};

/* Returns 0 with the body of an "ok" reply, or -errno with a one-line reason: the agent's own error (its errno and
 * words), -ECONNREFUSED, -ETIMEDOUT, -EMSGSIZE (over max_reply), -EPROTO (not the agent's protocol, or incomplete:
 * no "end" line), -ECANCELED. */
int agent_client_exchange(const struct agent_exchange *x, struct agent_reply *out, char *err, size_t errlen);
void agent_reply_free(struct agent_reply *r);

/* Each "KEY VALUE" line of a body (not site/sample/thread rows): fn gets the key and the rest of the line. Stops
 * at fn's non-zero return and returns it. */
int agent_reply_each(const struct agent_reply *r, int (*fn)(void *arg, const char *key, const char *value),
                     void *arg);
/* The unsigned value of key, or -ENOENT / -EINVAL. */
int agent_reply_u64(const struct agent_reply *r, const char *key, unsigned long long *v);

/* memstats, as named fields: sections "malloc" (the allocator's view) and "agent" (counters, rates, the heap
 * profile's state); labels with '-' for the agent's '_', keys as the agent wrote them (in_use). Returns 0 or -errno with a reason. */
int agent_parse_memstats(const struct agent_reply *r, struct rt_fields *out, char *err, size_t errlen);

#define AGENT_MAX_PCS 64

/* A heap reply: allocation sites with raw program counters. */
struct agent_site {
    double inuse_objects, inuse_bytes, alloc_objects, alloc_bytes;
    unsigned long long pcs[AGENT_MAX_PCS]; /* return addresses, innermost first */
    int npcs;
};

struct agent_heap {
    double taken_at;                /* the agent's wall clock, seconds */
    unsigned long long interval, samples_live, samples_total, samples_dropped, stacks_dropped;
    struct agent_site *sites;
    int n;
    int truncated;
};

int agent_parse_heap(const struct agent_reply *r, struct agent_heap *out, char *err, size_t errlen);
void agent_heap_free(struct agent_heap *h);

/* A profile reply: distinct stacks per thread. */
struct agent_sample {
    int tid;
    long long count;
    unsigned long long pcs[AGENT_MAX_PCS]; /* the first exact, then return addresses */
    int npcs;
};

struct agent_thread_name {
    int tid;
    char name[64]; /* as the agent wrote it (sanitize to show) */
};

struct agent_profile {
    int hz;
    double seconds;
    long long period_ns, samples, lost;
    struct agent_thread_name *threads;
    int nthreads;
    struct agent_sample *stacks;
    int n;
    int truncated;
};

int agent_parse_profile(const struct agent_reply *r, struct agent_profile *out, char *err, size_t errlen);
void agent_profile_free(struct agent_profile *p);
#endif
