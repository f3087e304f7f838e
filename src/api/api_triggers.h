/* api_triggers: `diagtop watch` inside the server. Each armed trigger is a watch (model/watch.h) running in a
 * thread of its own until its count is reached, its process is gone, or it is disarmed; it keeps its last events,
 * and each file one of its captures writes becomes a dump resource (api_dumps_adopt), so that it is downloaded and
 * deleted like a dump. Counts of firings and captures feed /metrics. The table locks itself.
 * Not armed here: exec (a command run on the server for a remote client) and --signal/--exit (they hold a ptrace
 * seize for as long as the watch lasts, waiting for SIGCHLD, which a threaded server's other threads would take). */
#ifndef DIAGTOP_API_TRIGGERS_H
#define DIAGTOP_API_TRIGGERS_H
#include <pthread.h>
#include <signal.h>
#include <stddef.h>

#include "api_dumps.h"
#include "api_id.h"
#include "model/watch.h"

#define API_TRIGGERS_MAX 16
#define API_TRIGGER_EVENTS 32 /* the last ones of each trigger */

/* One event of a trigger, as kept for GET (a watch_event without its pointers). */
struct api_trigger_event {
    enum watch_event_kind kind;
    double wall;
    int pid;
    char comm[64];
    char trigger[32];                /* the condition that fired ("cpu", "rss"...) */
    double value;                    /* TRIGGER */
    char action[16];                 /* CAPTURE, SKIPPED, FAILED */
    char file[256];                  /* CAPTURE: the file's name in the dump directory */
    char dump_id[API_ID_LEN + 1];    /* CAPTURE: its resource, /api/dumps/ID ("" when the table was full) */
    unsigned long long bytes;
    double pause_ms;
    char msg[256];
};

struct api_triggers;

struct api_trigger {
    char id[API_ID_LEN + 1];
    struct watch_config c;
    char name[256], cgroup[1024];    /* c.name and c.cgroup point here */
    char spec[1024];                 /* what was asked, as the query gave it, for listing */
    volatile sig_atomic_t cancel;
    int running;
    int result;                      /* once ended: watch_run's (0 count reached or disarmed, 1 target gone) */
    char error[256];                 /* why it could not run */
    int firings, captures;
    struct api_trigger_event ev[API_TRIGGER_EVENTS];
    unsigned long long nev;          /* events so far; the last API_TRIGGER_EVENTS are kept */
    double created;                  /* wall clock */
    pthread_t thread;
    int joinable;
    struct api_triggers *owner;
};

struct api_triggers {
    pthread_mutex_t lock;
    struct api_trigger *t[API_TRIGGERS_MAX];
    struct api_dumps *dumps;
    unsigned long long firings_total, captures_total, failed_total; /* since the server started */
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
