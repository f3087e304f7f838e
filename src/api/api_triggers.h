/* api_triggers: `diagtop watch` inside the server, as JSON. The triggers are a watch_set (model/watch_set.h: a
 * thread per watch, its last events kept); each file one of their captures writes becomes a dump resource
 * (api_dumps_adopt), so that it is downloaded and deleted like a dump. Counts of firings and captures feed /metrics.
 * Not armed here: exec (a command run on the server for a remote client), nor what a watch_set refuses
 * (--signal/--exit). */
#ifndef DIAGTOP_API_TRIGGERS_H
#define DIAGTOP_API_TRIGGERS_H
#include <stddef.h>

#include "api_dumps.h"
#include "api_id.h"
#include "model/watch_set.h"

struct api_triggers {
    struct watch_set set; /* each watch's id is a random API id */
};

void api_triggers_init(struct api_triggers *ts, struct api_dumps *dumps);
/* Disarms every trigger, waits for their threads and frees them (the files stay). */
void api_triggers_shutdown(struct api_triggers *ts);
/* Arms a watch of c (its target strings are copied; c->dir, on_event, arg and cancel are set here). Returns 0 with
 * the id, or an HTTP status with a reason: 422 (exec, a signal or exit condition), 503 (the table is full). */
int api_triggers_arm(struct api_triggers *ts, const struct watch_config *c, const char *spec, const char *dir,
                     char *id, char *err, size_t errlen);
/* One trigger's document (malloc'd JSON), or NULL when there is no such id. */
char *api_triggers_status(struct api_triggers *ts, const char *id);
/* {"triggers": [...]} (malloc'd). */
char *api_triggers_list(struct api_triggers *ts);
/* Stops a trigger (a capture in flight is cancelled), waits for it, and forgets it; its files stay as dumps.
 * Returns 0 or 404. */
int api_triggers_disarm(struct api_triggers *ts, const char *id);
/* For /metrics: triggers armed and running now, and the totals. */
void api_triggers_counts(struct api_triggers *ts, int *armed, unsigned long long *firings,
                         unsigned long long *captures, unsigned long long *failed);
#endif
