/* ticker: a thread that calls a function every period seconds until it is stopped (the server's connection
 * guard, its background sampler). Stopping wakes it at once and waits for a call in progress; the thread blocks
 * every signal, so they stay with the threads that handle them. */
#ifndef DIAGTOP_TICKER_H
#define DIAGTOP_TICKER_H
#include <pthread.h>

struct ticker {
    void (*tick)(void *arg);
    void *arg;
    double period; /* seconds */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop, running;
};

/* Starts calling tick(arg) every period seconds (the first call one period from now). Returns 0 or -errno. */
int ticker_start(struct ticker *t, double period, void (*tick)(void *arg), void *arg);
/* Stops and frees what start made; harmless on a zeroed ticker that never started. */
void ticker_stop(struct ticker *t);
#endif
