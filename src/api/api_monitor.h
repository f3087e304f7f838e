/* api_monitor: the one sampling of the process table that every request of the server shares (/api/processes,
 * /metrics, the page's live table). Keeping one monitor keeps its /proc/PID/stat descriptors and CPU deltas, so a
 * request costs what one refresh of the TUI costs; a sample younger than min_interval is reused, so CPU% always
 * spans a real interval however often clients ask. One request at a time holds it. */
#ifndef DIAGTOP_API_MONITOR_H
#define DIAGTOP_API_MONITOR_H
#include <pthread.h>
#include <stddef.h>

#include "model/monitor.h"

struct api_monitor {
    pthread_mutex_t lock;
    struct monitor m;
    double min_interval; /* seconds */
    double last;         /* monotonic time of the last sample */
    unsigned long long samples;
};

/* Takes a first sample and a second one 0.2 s later (CPU% of the first answer spans an interval, as in batch
 * mode). Returns 0 or -errno with a reason. */
int api_monitor_init(struct api_monitor *am, double min_interval, char *err, size_t errlen);
void api_monitor_destroy(struct api_monitor *am);
/* Locks the monitor, samples again when the last sample is older than min_interval, and rebuilds am->m.view for
 * o (threads are never shown). On success the caller reads am->m and then calls api_monitor_release; on failure
 * nothing is held. */
int api_monitor_acquire(struct api_monitor *am, const struct procview_opts *o, char *err, size_t errlen);
void api_monitor_release(struct api_monitor *am);
#endif
