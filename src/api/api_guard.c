#include "api_guard.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

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

static void *watch(void *arg)
{
    struct api_guard *g = arg;
    pthread_mutex_lock(&g->lock);
    while (!g->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += 250 * 1000000L; /* four passes a second: a deadline holds to a quarter second */
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&g->wake, &g->lock, &ts);
        if (g->stop) break;
        pthread_mutex_unlock(&g->lock);
        api_guard_sweep(g);
        pthread_mutex_lock(&g->lock);
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

int api_guard_start(struct api_guard *g, unsigned max, double deadline)
{
    *g = (struct api_guard){.max = max, .deadline = deadline, .now = clock_monotonic_seconds, .close_fd = shutdown_fd};
    pthread_mutex_init(&g->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g->wake, &ca);
    pthread_condattr_destroy(&ca);
    int rc = pthread_create(&g->thread, NULL, watch, g);
    if (rc) return -rc;
    g->running = 1;
    return 0;
}

void api_guard_stop(struct api_guard *g)
{
    if (g->running) {
        pthread_mutex_lock(&g->lock);
        g->stop = 1;
        pthread_cond_signal(&g->wake);
        pthread_mutex_unlock(&g->lock);
        pthread_join(g->thread, NULL);
        g->running = 0;
    }
    /* libmicrohttpd has closed every connection by now (its daemon stops first), so the list is empty. */
    pthread_cond_destroy(&g->wake);
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
