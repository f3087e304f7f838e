#include "api_guard.h"

#include <stdlib.h>
#include <sys/socket.h>

#include "util/clock.h"

struct api_guard_conn {
    struct api_guard_conn *prev, *next;
    int fd;
    int reading;  /* between requests or inside one's headers: what the guard may close */
    int closing;  /* closed once already: its thread is on its way out */
    double since; /* when it started reading the present request */
};

/* Below this many free slots, connections still reading are closed, oldest first. */
static unsigned headroom(const struct api_guard *g)
{
    unsigned h = g->max / 8;
    return h ? h : 1;
}

/* A request slower than this may be closed when slots are short: a real client's headers come in one packet. */
#define CROWDED_GRACE 0.5

static int shutdown_fd(int fd) { return shutdown(fd, SHUT_RDWR); }

static void end(struct api_guard *g, struct api_guard_conn *c)
{
    c->closing = 1;
    g->close_fd(c->fd);
}

unsigned api_guard_sweep(struct api_guard *g)
{
    unsigned n = 0;
    pthread_mutex_lock(&g->lock);
    double t = g->now();
    for (struct api_guard_conn *c = g->head; c; c = c->next)
        if (c->reading && !c->closing && t - c->since > g->deadline) {
            end(g, c);
            g->closed_slow++;
            n++;
        }
    /* The list is oldest first (new connections go to its end, a finished request moves there). */
    unsigned live = 0;
    for (struct api_guard_conn *c = g->head; c; c = c->next) live += !c->closing;
    for (struct api_guard_conn *c = g->head; c && live + headroom(g) > g->max; c = c->next)
        if (c->reading && !c->closing && t - c->since > CROWDED_GRACE) {
            end(g, c);
            g->closed_crowded++;
            live--;
            n++;
        }
    pthread_mutex_unlock(&g->lock);
    return n;
}

static void watch(void *arg) { api_guard_sweep(arg); }

int api_guard_start(struct api_guard *g, unsigned max, double deadline)
{
    *g = (struct api_guard){.max = max, .deadline = deadline, .now = clock_monotonic_seconds, .close_fd = shutdown_fd};
    pthread_mutex_init(&g->lock, NULL);
    return ticker_start(&g->watcher, 0.25, watch, g);
}

void api_guard_stop(struct api_guard *g)
{
    ticker_stop(&g->watcher);
    /* libmicrohttpd has closed every connection by now (its daemon stops first), so the list is empty. */
    pthread_mutex_destroy(&g->lock);
}

static void unlink_conn(struct api_guard *g, struct api_guard_conn *c)
{
    if (c->prev) c->prev->next = c->next;
    else g->head = c->next;
    if (c->next) c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

static void append(struct api_guard *g, struct api_guard_conn *c)
{
    struct api_guard_conn **p = &g->head, *last = NULL;
    while (*p) last = *p, p = &(*p)->next;
    c->prev = last;
    *p = c;
}

struct api_guard_conn *api_guard_open(struct api_guard *g, int fd)
{
    struct api_guard_conn *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->fd = fd;
    c->reading = 1;
    pthread_mutex_lock(&g->lock);
    c->since = g->now();
    append(g, c);
    g->open++;
    pthread_mutex_unlock(&g->lock);
    return c;
}

void api_guard_request_in(struct api_guard *g, struct api_guard_conn *c)
{
    if (!c) return;
    pthread_mutex_lock(&g->lock);
    c->reading = 0;
    pthread_mutex_unlock(&g->lock);
}

void api_guard_request_done(struct api_guard *g, struct api_guard_conn *c)
{
    if (!c) return;
    pthread_mutex_lock(&g->lock);
    c->reading = 1;
    c->since = g->now();
    unlink_conn(g, c); /* now the youngest reader */
    append(g, c);
    pthread_mutex_unlock(&g->lock);
}

void api_guard_close(struct api_guard *g, struct api_guard_conn *c)
{
    if (!c) return;
    pthread_mutex_lock(&g->lock);
    unlink_conn(g, c);
    g->open--;
    pthread_mutex_unlock(&g->lock);
    free(c);
}
