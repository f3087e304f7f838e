#include "ticker.h"

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

static void *run(void *arg)
{
    struct ticker *t = arg;
    pthread_mutex_lock(&t->lock);
    while (!t->stop) {
        struct timespec ts;
        deadline_after(&ts, t->period);
        while (!t->stop && pthread_cond_timedwait(&t->wake, &t->lock, &ts) != ETIMEDOUT) {}
        if (t->stop) break;
        pthread_mutex_unlock(&t->lock);
        t->tick(t->arg);
        pthread_mutex_lock(&t->lock);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

int ticker_start(struct ticker *t, double period, void (*tick)(void *arg), void *arg)
{
    *t = (struct ticker){.tick = tick, .arg = arg, .period = period};
    pthread_mutex_init(&t->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t->wake, &ca);
    pthread_condattr_destroy(&ca);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&t->thread, NULL, run, t);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        pthread_cond_destroy(&t->wake);
        pthread_mutex_destroy(&t->lock);
        t->tick = NULL;
        return -rc;
    }
    t->running = 1;
    return 0;
}

void ticker_stop(struct ticker *t)
{
    if (!t->tick) return;
    if (t->running) {
        pthread_mutex_lock(&t->lock);
        t->stop = 1;
        pthread_cond_signal(&t->wake);
        pthread_mutex_unlock(&t->lock);
        pthread_join(t->thread, NULL);
        t->running = 0;
    }
    pthread_cond_destroy(&t->wake);
    pthread_mutex_destroy(&t->lock);
    t->tick = NULL;
}
