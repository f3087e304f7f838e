#include "api_triggers.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/json_util.h"
#include "util/clock.h"

/* A capture's file made a dump resource, in the trigger's thread, so that its event names the id. */
static int adopt(void *arg, const struct watch_event *e, char *ref, size_t reflen, char *err, size_t errlen)
{
    struct api_dumps *dumps = arg;
    char id[API_ID_LEN + 1] = "", why[256];
    if (api_dumps_adopt(dumps, e->pid, e->comm, e->file, id, why, sizeof why) != 0) {
        snprintf(err, errlen, "not downloadable: %.80s", why);
        return -1;
    }
    snprintf(ref, reflen, "%s", id);
    return 0;
}

void api_triggers_init(struct api_triggers *ts, struct api_dumps *dumps)
{
    watch_set_init(&ts->set, adopt, dumps);
}

int api_triggers_arm(struct api_triggers *ts, const struct watch_config *c, const char *spec, const char *dir,
                     char *id, char *err, size_t errlen)
{
    for (int i = 0; i < c->nactions; i++)
        if (c->actions[i].kind == WATCH_DO_EXEC) {
            snprintf(err, errlen, "exec is not offered over HTTP (a command run on the server)");
            return 422;
        }
    char rid[API_ID_LEN + 1];
    if (api_id_new(rid) < 0) {
        snprintf(err, errlen, "no random id");
        return 500;
    }
    int rc = watch_set_arm(&ts->set, c, spec, dir, rid, NULL, err, errlen);
    if (rc == -EINVAL) return 422;
    if (rc == -ENOSPC) {
        snprintf(err, errlen, "%d triggers are armed already: DELETE /api/triggers/ID some of them first",
                 WATCH_SET_MAX);
        return 503;
    }
    if (rc < 0) return rc == -ENOMEM ? 500 : 503;
    memcpy(id, rid, sizeof rid);
    return 0;
}

static cJSON *event_json(const struct watch_set_event *k)
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
    if (k->ref[0]) {
        char loc[64];
        snprintf(loc, sizeof loc, "/api/dumps/%s", k->ref);
        cJSON_AddStringToObject(o, "dump", loc);
    }
    if (k->kind == WATCH_EV_CAPTURE) json_add_u64(o, "bytes", k->bytes);
    if (k->pause_ms >= 0 && k->kind == WATCH_EV_CAPTURE) json_add_fixed(o, "pause_ms", k->pause_ms, 2);
    if (k->msg[0]) json_add_bytes(o, "message", k->msg, strlen(k->msg));
    return o;
}

/* A trigger as JSON, its events oldest first. Called locked. */
static cJSON *trigger_json(const struct watch_set_entry *t)
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
    int n = watch_set_nevents(t);
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, event_json(watch_set_event_at(t, i)));
    json_add_u64(o, "events_dropped", t->nev - (unsigned long long)n);
    return o;
}

static char *print(cJSON *o)
{
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

char *api_triggers_status(struct api_triggers *ts, const char *id)
{
    watch_set_lock(&ts->set);
    struct watch_set_entry *t = watch_set_find(&ts->set, id);
    cJSON *o = t ? trigger_json(t) : NULL;
    watch_set_unlock(&ts->set);
    return o ? print(o) : NULL;
}

char *api_triggers_list(struct api_triggers *ts)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *a = cJSON_AddArrayToObject(doc, "triggers");
    watch_set_lock(&ts->set);
    for (int i = 0; i < WATCH_SET_MAX; i++)
        if (ts->set.w[i]) cJSON_AddItemToArray(a, trigger_json(ts->set.w[i]));
    watch_set_unlock(&ts->set);
    return print(doc);
}

int api_triggers_disarm(struct api_triggers *ts, const char *id)
{
    return watch_set_disarm(&ts->set, id) == 0 ? 0 : 404;
}

void api_triggers_counts(struct api_triggers *ts, int *armed, unsigned long long *firings,
                         unsigned long long *captures, unsigned long long *failed)
{
    watch_set_counts(&ts->set, armed, firings, captures, failed);
}

void api_triggers_shutdown(struct api_triggers *ts) { watch_set_shutdown(&ts->set); }
