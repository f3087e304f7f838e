#include "api_monitor.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/clock.h"

int api_monitor_init(struct api_monitor *am, double min_interval, char *err, size_t errlen)
{
    memset(am, 0, sizeof *am);
    am->min_interval = min_interval;
    int rc = monitor_init(&am->m, err, errlen);
    if (rc < 0) return rc;
    struct procview_opts o = {.sort = COL_CPU};
    if ((rc = monitor_refresh(&am->m, &o, err, errlen)) < 0) {
        monitor_destroy(&am->m);
        return rc;
    }
    clock_sleep(0.2, NULL);
    if ((rc = monitor_refresh(&am->m, &o, err, errlen)) < 0) {
        monitor_destroy(&am->m);
        return rc;
    }
    am->last = clock_monotonic_seconds();
    am->samples = 2;
    pthread_mutex_init(&am->lock, NULL);
    return 0;
}

void api_monitor_destroy(struct api_monitor *am)
{
    monitor_destroy(&am->m);
    pthread_mutex_destroy(&am->lock);
}

int api_monitor_acquire(struct api_monitor *am, const struct procview_opts *o, char *err, size_t errlen)
{
    struct procview_opts vo = *o;
    vo.show_threads = 0;
    vo.tree = 0;
    pthread_mutex_lock(&am->lock);
    double now = clock_monotonic_seconds();
    int rc;
    if (now - am->last >= am->min_interval) {
        rc = monitor_refresh(&am->m, &vo, err, errlen);
        if (rc == 0) {
            am->last = now;
            am->samples++;
        }
    } else {
        rc = monitor_rebuild(&am->m, &vo);
        if (rc < 0) snprintf(err, errlen, "out of memory");
    }
    if (rc < 0) pthread_mutex_unlock(&am->lock);
    return rc;
}

void api_monitor_release(struct api_monitor *am)
{
    pthread_mutex_unlock(&am->lock);
}
