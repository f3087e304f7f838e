#include "api_triggers.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "render/json_util.h"
#include "util/clock.h"

void api_triggers_init(struct api_triggers *ts, struct api_dumps *dumps)
{
    memset(ts, 0, sizeof *ts);
    pthread_mutex_init(&ts->lock, NULL);
    ts->dumps = dumps;
}

/* The watch's callback, in the trigger's thread: the event kept (a capture's file made a dump resource first, so
 * that the event names its id), the counts kept. */
static void on_event(void *arg, const struct watch_event *e)
{
    struct api_trigger *t = arg;
    struct api_trigger_event k;
    memset(&k, 0, sizeof k);
    k.kind = e->kind;
    k.wall = e->wall;
    k.pid = e->pid;
    snprintf(k.comm, sizeof k.comm, "%s", e->comm);
    if (e->cond) snprintf(k.trigger, sizeof k.trigger, "%s", watch_cond_name(e->cond->kind));
    k.value = e->value;
    if (e->action) snprintf(k.action, sizeof k.action, "%s", watch_action_name(e->action->kind));
    k.bytes = e->bytes;
    k.pause_ms = e->pause_ms;
    snprintf(k.msg, sizeof k.msg, "%.255s", e->msg);
    if (e->kind == WATCH_EV_CAPTURE && e->file[0]) {
        const char *slash = strrchr(e->file, '/');
        snprintf(k.file, sizeof k.file, "%.255s", slash ? slash + 1 : e->file);
        char err[256];
        if (api_dumps_adopt(t->owner->dumps, e->pid, e->comm, e->file, k.dump_id, err, sizeof err) != 0)
            snprintf(k.msg, sizeof k.msg, "%.150s; not downloadable: %.80s", e->msg, err);
    }
    pthread_mutex_lock(&t->owner->lock);
    t->ev[t->nev % API_TRIGGER_EVENTS] = k;
    t->nev++;
    if (e->kind == WATCH_EV_TRIGGER) {
        t->firings++;
        t->owner->firings_total++;
    } else if (e->kind == WATCH_EV_CAPTURE) {
        t->captures++;
        t->owner->captures_total++;
    } else if (e->kind == WATCH_EV_FAILED) {
        t->owner->failed_total++;
    }
    pthread_mutex_unlock(&t->owner->lock);
}

static void *worker(void *arg)
{
    struct api_trigger *t = arg;
    char err[256] = "";
    int rc = watch_run(&t->c, err, sizeof err);
    pthread_mutex_lock(&t->owner->lock);
    t->running = 0;
    t->result = rc;
    if (rc < 0) snprintf(t->error, sizeof t->error, "%s", err);
    pthread_mutex_unlock(&t->owner->lock);
    return NULL;
}

/* What HTTP does not arm: said before anything starts. */
static int refused(const struct watch_config *c, char *err, size_t errlen)
{
    for (int i = 0; i < c->nconds; i++)
        if (watch_cond_is_trap(&c->conds[i])) {
            snprintf(err, errlen, "a signal or exit trigger holds a ptrace seize for as long as it lasts: "
                                  "arm it with diagtop watch on the box");
            return 422;
        }
    for (int i = 0; i < c->nactions; i++)
        if (c->actions[i].kind == WATCH_DO_EXEC) {
            snprintf(err, errlen, "exec is not offered over HTTP (a command run on the server)");
            return 422;
        }
    return 0;
}

/* A slot for a new trigger: a free one, else the oldest that ended. Called locked. */
static int free_slot(struct api_triggers *ts)
{
    int oldest = -1;
    for (int i = 0; i < API_TRIGGERS_MAX; i++) {
        if (!ts->t[i]) return i;
        if (!ts->t[i]->running && (oldest < 0 || ts->t[i]->created < ts->t[oldest]->created)) oldest = i;
    }
    return oldest;
}

static void trigger_free(struct api_trigger *t)
{
    if (!t) return;
    t->cancel = 1;
    if (t->joinable) pthread_join(t->thread, NULL);
    free(t);
}

int api_triggers_arm(struct api_triggers *ts, const struct watch_config *c, const char *spec, const char *dir,
                     char *id, char *err, size_t errlen)
{
    int st = refused(c, err, errlen);
    if (st) return st;
    struct api_trigger *t = calloc(1, sizeof *t);
    if (!t || api_id_new(t->id) < 0) {
        snprintf(err, errlen, "%s", t ? "no random id" : "out of memory");
        free(t);
        return 500;
    }
    t->c = *c;
    if (c->name) t->c.name = strncpy(t->name, c->name, sizeof t->name - 1);
    if (c->cgroup) t->c.cgroup = strncpy(t->cgroup, c->cgroup, sizeof t->cgroup - 1);
    t->c.dir = dir;
    t->c.cancel = &t->cancel;
    t->c.on_event = on_event;
    t->c.arg = t;
    snprintf(t->spec, sizeof t->spec, "%s", spec);
    t->owner = ts;
    t->created = (double)time(NULL);
    t->running = 1;

    pthread_mutex_lock(&ts->lock);
    int slot = free_slot(ts);
    if (slot < 0) {
        pthread_mutex_unlock(&ts->lock);
        snprintf(err, errlen, "%d triggers are armed already: DELETE /api/triggers/ID some of them first",
                 API_TRIGGERS_MAX);
        free(t);
        return 503;
    }
    struct api_trigger *old = ts->t[slot];
    int rc = pthread_create(&t->thread, NULL, worker, t);
    if (rc) {
        pthread_mutex_unlock(&ts->lock);
        snprintf(err, errlen, "cannot start a thread: %s", strerror(rc));
        free(t);
        return 503;
    }
    t->joinable = 1;
    ts->t[slot] = t;
    pthread_mutex_unlock(&ts->lock);
    trigger_free(old); /* ended already: its thread is joined at once */
    memcpy(id, t->id, API_ID_LEN + 1);
    return 0;
}

static cJSON *event_json(const struct api_trigger_event *k)
{
    cJSON *o = cJSON_CreateObject();
    char iso[32];
    clock_format_iso8601(iso, sizeof iso, (time_t)k->wall);
    cJSON_AddStringToObject(o, "time", iso);
    json_add_fixed(o, "unix_time", k->wall, 3);
    cJSON_AddStringToObject(o, "event", watch_event_name(k->kind));
    if (k->pid) json_add_i64(o, "pid", k->pid);
    if (k->comm[0]) json_add_bytes(o, "comm", k->comm, strlen(k->comm));
    if (k->trigger[0]) cJSON_AddStringToObject(o, "trigger", k->trigger);
    if (k->kind == WATCH_EV_TRIGGER) json_add_fixed(o, "value", k->value, 3);
    if (k->action[0]) cJSON_AddStringToObject(o, "action", k->action);
    if (k->file[0]) json_add_bytes(o, "file", k->file, strlen(k->file));
    if (k->dump_id[0]) {
        char loc[64];
        snprintf(loc, sizeof loc, "/api/dumps/%s", k->dump_id);
        cJSON_AddStringToObject(o, "dump", loc);
    }
    if (k->kind == WATCH_EV_CAPTURE) json_add_u64(o, "bytes", k->bytes);
    if (k->pause_ms >= 0 && k->kind == WATCH_EV_CAPTURE) json_add_fixed(o, "pause_ms", k->pause_ms, 2);
    if (k->msg[0]) json_add_bytes(o, "message", k->msg, strlen(k->msg));
    return o;
}

/* A trigger as JSON, its events oldest first. Called locked. */
static cJSON *trigger_json(const struct api_trigger *t)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", t->id);
    char loc[64], iso[32];
    snprintf(loc, sizeof loc, "/api/triggers/%s", t->id);
    cJSON_AddStringToObject(o, "location", loc);
    if (t->c.pid) json_add_i64(o, "pid", t->c.pid);
    if (t->c.name) json_add_bytes(o, "name", t->c.name, strlen(t->c.name));
    if (t->c.cgroup) json_add_bytes(o, "cgroup", t->c.cgroup, strlen(t->c.cgroup));
    json_add_bytes(o, "spec", t->spec, strlen(t->spec));
    clock_format_iso8601(iso, sizeof iso, (time_t)t->created);
    cJSON_AddStringToObject(o, "created", iso);
    cJSON_AddStringToObject(o, "state", t->running ? "armed" : t->result < 0 ? "failed" : "ended");
    if (t->error[0]) json_add_bytes(o, "error", t->error, strlen(t->error));
    json_add_i64(o, "firings", t->firings);
    json_add_i64(o, "captures", t->captures);
    json_add_i64(o, "count", t->c.count);
    cJSON *a = cJSON_AddArrayToObject(o, "events");
    unsigned long long first = t->nev > API_TRIGGER_EVENTS ? t->nev - API_TRIGGER_EVENTS : 0;
    for (unsigned long long i = first; i < t->nev; i++) cJSON_AddItemToArray(a, event_json(&t->ev[i % API_TRIGGER_EVENTS]));
    json_add_u64(o, "events_dropped", first);
    return o;
}

static char *print(cJSON *o)
{
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

/* Called locked. */
static int find(struct api_triggers *ts, const char *id)
{
    for (int i = 0; i < API_TRIGGERS_MAX; i++)
        if (ts->t[i] && !strcmp(ts->t[i]->id, id)) return i;
    return -1;
}

char *api_triggers_status(struct api_triggers *ts, const char *id)
{
    pthread_mutex_lock(&ts->lock);
    int i = find(ts, id);
    cJSON *o = i >= 0 ? trigger_json(ts->t[i]) : NULL;
    pthread_mutex_unlock(&ts->lock);
    return o ? print(o) : NULL;
}

char *api_triggers_list(struct api_triggers *ts)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *a = cJSON_AddArrayToObject(doc, "triggers");
    pthread_mutex_lock(&ts->lock);
    for (int i = 0; i < API_TRIGGERS_MAX; i++)
        if (ts->t[i]) cJSON_AddItemToArray(a, trigger_json(ts->t[i]));
    pthread_mutex_unlock(&ts->lock);
    return print(doc);
}

int api_triggers_disarm(struct api_triggers *ts, const char *id)
{
    pthread_mutex_lock(&ts->lock);
    int i = find(ts, id);
    struct api_trigger *t = i >= 0 ? ts->t[i] : NULL;
    if (t) ts->t[i] = NULL;
    pthread_mutex_unlock(&ts->lock);
    if (!t) return 404;
    trigger_free(t); /* the watch sees the flag within a round (a dump in flight is cancelled and removed) */
    return 0;
}

void api_triggers_counts(struct api_triggers *ts, int *armed, unsigned long long *firings,
                         unsigned long long *captures, unsigned long long *failed)
{
    pthread_mutex_lock(&ts->lock);
    *armed = 0;
    for (int i = 0; i < API_TRIGGERS_MAX; i++) *armed += ts->t[i] && ts->t[i]->running;
    *firings = ts->firings_total;
    *captures = ts->captures_total;
    *failed = ts->failed_total;
    pthread_mutex_unlock(&ts->lock);
}

void api_triggers_shutdown(struct api_triggers *ts)
{
    pthread_mutex_lock(&ts->lock);
    for (int i = 0; i < API_TRIGGERS_MAX; i++)
        if (ts->t[i]) ts->t[i]->cancel = 1;
    pthread_mutex_unlock(&ts->lock);
    for (int i = 0; i < API_TRIGGERS_MAX; i++) {
        trigger_free(ts->t[i]);
        ts->t[i] = NULL;
    }
    pthread_mutex_destroy(&ts->lock);
}
