#include "api_sampler.h"

#include <errno.h>
#include <signal.h>
#include <time.h>

static void deadline_after(struct timespec *ts, double seconds)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    long long ns = ts->tv_nsec + (long long)(seconds * 1e9);
    ts->tv_sec += (time_t)(ns / 1000000000LL);
    ts->tv_nsec = (long)(ns % 1000000000LL);
}

/* One sample a period, as a request would take it (the same lock, the same reuse of a younger sample). */
static void *sample_loop(void *arg)
{
    struct api_sampler *s = arg;
    const struct procview_opts o = {.sort = COL_CPU};
    pthread_mutex_lock(&s->lock);
    while (!s->stop) {
        struct timespec ts;
        deadline_after(&ts, s->every);
        while (!s->stop && pthread_cond_timedwait(&s->wake, &s->lock, &ts) != ETIMEDOUT) {}
        if (s->stop) break;
        pthread_mutex_unlock(&s->lock);
        char err[256];
        if (api_monitor_acquire(s->mon, &o, err, sizeof err) == 0) api_monitor_release(s->mon);
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

int api_sampler_start(struct api_sampler *s, struct api_monitor *mon, double every)
{
    *s = (struct api_sampler){.mon = mon, .every = every};
    pthread_mutex_init(&s->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->wake, &ca);
    pthread_condattr_destroy(&ca);
    /* signals stay with the server's own threads (SIGTERM stops it) */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&s->thread, NULL, sample_loop, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) return -rc;
    s->running = 1;
    return 0;
}

void api_sampler_stop(struct api_sampler *s)
{
    if (!s->mon) return;
    if (s->running) {
        pthread_mutex_lock(&s->lock);
        s->stop = 1;
        pthread_cond_signal(&s->wake);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->thread, NULL);
        s->running = 0;
    }
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->lock);
    s->mon = NULL;
}
