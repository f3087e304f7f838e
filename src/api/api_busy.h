/* api_busy: the processes the server is acting on (a dump, a CPU profile, a stack capture, a runtime request), at
 * most one action per process at a time and at most API_BUSY_MAX in all: a second request for the same process
 * gets 409, one beyond the total 503, instead of two ptrace sessions or two agent requests racing. */
#ifndef DIAGTOP_API_BUSY_H
#define DIAGTOP_API_BUSY_H
#include <pthread.h>
#include <stddef.h>

#define API_BUSY_MAX 8

struct api_busy {
    pthread_mutex_t lock;
    int pids[API_BUSY_MAX];
    const char *what[API_BUSY_MAX];
};

void api_busy_init(struct api_busy *b);
void api_busy_destroy(struct api_busy *b);
/* Marks pid busy with what ("dump", "profile"). Returns 0, or 409 (pid busy: err says with what) or 503 (too many
 * actions running). */
int api_busy_take(struct api_busy *b, int pid, const char *what, char *err, size_t errlen);
void api_busy_release(struct api_busy *b, int pid);
#endif
