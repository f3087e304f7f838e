/* api_guard: keeps slow or idle clients from holding the server's connections. libmicrohttpd's own timeout is
 * per read, so a client sending one byte a second never times out. The guard gives each request, from its first
 * byte to the end of its headers, one deadline, and when the connections run short it closes the ones still
 * reading a request, oldest first, so that a client who sends its request at once always finds a slot. A
 * connection whose request is being answered is never touched. */
#ifndef DIAGTOP_API_GUARD_H
#define DIAGTOP_API_GUARD_H
#include <pthread.h>

#include "util/ticker.h"

struct api_guard_conn; /* one connection, from libmicrohttpd's start notification to its close */

struct api_guard {
    pthread_mutex_t lock; /* the list */
    struct ticker watcher; /* four sweeps a second: a deadline holds to a quarter second */
    struct api_guard_conn *head;
    unsigned open, max;   /* connections now, and the most libmicrohttpd will take */
    double deadline;      /* seconds from a request's first byte to the end of its headers */
    double (*now)(void);  /* the clock (monotonic seconds) */
    int (*close_fd)(int fd); /* how a connection is ended: shutdown, so that its own thread sees the end */
    unsigned long closed_slow, closed_crowded; /* for the log and /metrics */
};

/* Starts the watcher thread. Returns 0 or -errno. */
int api_guard_start(struct api_guard *g, unsigned max, double deadline);
void api_guard_stop(struct api_guard *g);
/* A new connection on fd (NULL when out of memory: it is then simply not guarded). */
struct api_guard_conn *api_guard_open(struct api_guard *g, int fd);
/* Its request's headers are in: it is being answered, and left alone until api_guard_request_done. */
void api_guard_request_in(struct api_guard *g, struct api_guard_conn *c);
/* Its answer is sent: the next request's clock starts. */
void api_guard_request_done(struct api_guard *g, struct api_guard_conn *c);
void api_guard_close(struct api_guard *g, struct api_guard_conn *c);
/* One pass of the watcher (called by its thread; public for the unit test). Returns how many it closed. */
unsigned api_guard_sweep(struct api_guard *g);
#endif
