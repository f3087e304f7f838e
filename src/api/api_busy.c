#include "api_busy.h"

#include <stdio.h>
#include <string.h>

void api_busy_init(struct api_busy *b)
{
    memset(b, 0, sizeof *b);
    pthread_mutex_init(&b->lock, NULL);
}

void api_busy_destroy(struct api_busy *b)
{
    pthread_mutex_destroy(&b->lock);
}

int api_busy_take(struct api_busy *b, int pid, const char *what, char *err, size_t errlen)
{
    pthread_mutex_lock(&b->lock);
    int free_slot = -1, rc = 0;
    for (int i = 0; i < API_BUSY_MAX; i++) {
        if (b->pids[i] == pid) {
            snprintf(err, errlen, "process %d is busy with a %s; try again when it is done", pid, b->what[i]);
            rc = 409;
            break;
        }
        if (!b->pids[i] && free_slot < 0) free_slot = i;
    }
    if (!rc && free_slot < 0) {
        snprintf(err, errlen, "%d actions are running already; try again later", API_BUSY_MAX);
        rc = 503;
    }
    if (!rc) {
        b->pids[free_slot] = pid;
        b->what[free_slot] = what;
    }
    pthread_mutex_unlock(&b->lock);
    return rc;
}

void api_busy_release(struct api_busy *b, int pid)
{
    pthread_mutex_lock(&b->lock);
    for (int i = 0; i < API_BUSY_MAX; i++)
        if (b->pids[i] == pid) b->pids[i] = 0;
    pthread_mutex_unlock(&b->lock);
}
