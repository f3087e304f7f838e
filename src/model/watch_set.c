#include "watch_set.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void watch_set_init(struct watch_set *set, watch_set_capture_hook on_capture, void *hook_arg)
{
    memset(set, 0, sizeof *set);
    pthread_mutex_init(&set->lock, NULL);
    set->on_capture = on_capture;
    set->hook_arg = hook_arg;
}

void watch_set_lock(struct watch_set *set) { pthread_mutex_lock(&set->lock); }
void watch_set_unlock(struct watch_set *set) { pthread_mutex_unlock(&set->lock); }

/* The processes an entry follows, kept from its events. Called locked. */
static void follow(struct watch_set_entry *w, const struct watch_event *e)
{
    int at = -1;
    for (int i = 0; i < w->npids; i++)
        if (w->pids[i] == e->pid) at = i;
    if (e->kind == WATCH_EV_WATCHING && at < 0 && w->npids < (int)(sizeof w->pids / sizeof w->pids[0]))
        w->pids[w->npids++] = e->pid;
    else if (e->kind == WATCH_EV_EXITED && at >= 0)
        w->pids[at] = w->pids[--w->npids];
}

/* The event as kept: its pointers turned into text. */
static void keep(struct watch_set_event *k, const struct watch_event *e)
{
    memset(k, 0, sizeof *k);
    k->kind = e->kind;
    k->wall = e->wall;
    k->pid = e->pid;
    snprintf(k->comm, sizeof k->comm, "%s", e->comm);
    if (e->cond) {
        snprintf(k->trigger, sizeof k->trigger, "%s", watch_cond_name(e->cond->kind));
        if (e->kind == WATCH_EV_TRIGGER) {
            watch_cond_describe(e->cond, k->trigger_text, sizeof k->trigger_text);
            watch_cond_format_value(e->cond, e->value, k->value_text, sizeof k->value_text);
        }
    }
    k->value = e->value;
    if (e->action) snprintf(k->action, sizeof k->action, "%s", watch_action_name(e->action->kind));
    k->bytes = e->bytes;
    k->pause_ms = e->pause_ms;
    snprintf(k->msg, sizeof k->msg, "%.255s", e->msg);
    if (e->kind == WATCH_EV_CAPTURE && e->file[0]) {
        const char *slash = strrchr(e->file, '/');
        snprintf(k->file, sizeof k->file, "%.255s", slash ? slash + 1 : e->file);
        snprintf(k->path, sizeof k->path, "%.1023s", e->file);
    }
}

/* The watch's callback, in its thread: the front end's hook first (so that the event names what it made of the
 * file), then the event and the counts kept. */
static void on_event(void *arg, const struct watch_event *e)
{
    struct watch_set_entry *w = arg;
    struct watch_set *set = w->owner;
    struct watch_set_event k;
    keep(&k, e);
    if (k.path[0] && set->on_capture) {
        char err[256] = "";
        if (set->on_capture(set->hook_arg, e, k.ref, sizeof k.ref, err, sizeof err) < 0)
            snprintf(k.msg, sizeof k.msg, "%.150s; %.100s", e->msg, err);
    }
    pthread_mutex_lock(&set->lock);
    w->ev[w->nev % WATCH_SET_EVENTS] = k;
    w->nev++;
    follow(w, e);
    if (e->kind == WATCH_EV_TRIGGER) {
        w->firings++;
        set->firings_total++;
    } else if (e->kind == WATCH_EV_CAPTURE) {
        w->captures++;
        set->captures_total++;
    } else if (e->kind == WATCH_EV_FAILED) {
        w->failures++;
        set->failed_total++;
    }
    pthread_mutex_unlock(&set->lock);
}

static void *worker(void *arg)
{
    struct watch_set_entry *w = arg;
    char err[256] = "";
    int rc = watch_run(&w->c, err, sizeof err);
    pthread_mutex_lock(&w->owner->lock);
    w->running = 0;
    w->npids = 0;
    w->result = rc;
    if (rc < 0) snprintf(w->error, sizeof w->error, "%s", err);
    pthread_mutex_unlock(&w->owner->lock);
    return NULL;
}

/* A slot for a new watch: a free one, else the oldest that ended. Called locked. */
static int free_slot(struct watch_set *set)
{
    int oldest = -1;
    for (int i = 0; i < WATCH_SET_MAX; i++) {
        if (!set->w[i]) return i;
        if (!set->w[i]->running && (oldest < 0 || set->w[i]->seq < set->w[oldest]->seq)) oldest = i;
    }
    return oldest;
}

static void entry_free(struct watch_set_entry *w)
{
    if (!w) return;
    w->cancel = 1;
    if (w->joinable) pthread_join(w->thread, NULL);
    free(w);
}

int watch_set_arm(struct watch_set *set, const struct watch_config *c, const char *spec, const char *dir,
                  const char *id, char *id_out, char *err, size_t errlen)
{
    for (int i = 0; i < c->nconds; i++)
        if (watch_cond_is_trap(&c->conds[i])) {
            snprintf(err, errlen, "a signal or exit trigger holds a ptrace seize for as long as it lasts: "
                                  "arm it with diagtop watch on the box");
            return -EINVAL;
        }
    struct watch_set_entry *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    w->c = *c;
    if (c->name) w->c.name = strncpy(w->name, c->name, sizeof w->name - 1);
    if (c->cgroup) w->c.cgroup = strncpy(w->cgroup, c->cgroup, sizeof w->cgroup - 1);
    w->c.dir = strncpy(w->dir, dir, sizeof w->dir - 1);
    w->c.cancel = &w->cancel;
    w->c.on_event = on_event;
    w->c.arg = w;
    snprintf(w->spec, sizeof w->spec, "%s", spec);
    w->owner = set;
    w->created = (double)time(NULL);
    w->running = 1;
    if (c->pid) w->pids[w->npids++] = c->pid; /* marked from the start, before its first sample */

    pthread_mutex_lock(&set->lock);
    int slot = free_slot(set);
    if (slot < 0) {
        pthread_mutex_unlock(&set->lock);
        snprintf(err, errlen, "%d watches are armed already: disarm some of them first", WATCH_SET_MAX);
        free(w);
        return -ENOSPC;
    }
    w->seq = ++set->next_seq;
    if (id) snprintf(w->id, sizeof w->id, "%s", id);
    else snprintf(w->id, sizeof w->id, "%d", w->seq);
    struct watch_set_entry *old = set->w[slot];
    int rc = pthread_create(&w->thread, NULL, worker, w);
    if (rc) {
        pthread_mutex_unlock(&set->lock);
        snprintf(err, errlen, "cannot start a thread: %s", strerror(rc));
        free(w);
        return -rc;
    }
    w->joinable = 1;
    set->w[slot] = w;
    if (id_out) memcpy(id_out, w->id, sizeof w->id);
    pthread_mutex_unlock(&set->lock);
    entry_free(old); /* ended already: its thread is joined at once */
    return 0;
}

/* The slot of the watch named id, or -1. Called locked. */
static int slot_of(const struct watch_set *set, const char *id)
{
    for (int i = 0; i < WATCH_SET_MAX; i++)
        if (set->w[i] && !strcmp(set->w[i]->id, id)) return i;
    return -1;
}

struct watch_set_entry *watch_set_find(struct watch_set *set, const char *id)
{
    int i = slot_of(set, id);
    return i >= 0 ? set->w[i] : NULL;
}

int watch_set_nevents(const struct watch_set_entry *e)
{
    return e->nev > WATCH_SET_EVENTS ? WATCH_SET_EVENTS : (int)e->nev;
}

const struct watch_set_event *watch_set_event_at(const struct watch_set_entry *e, int i)
{
    unsigned long long first = e->nev - (unsigned long long)watch_set_nevents(e);
    return &e->ev[(first + (unsigned long long)i) % WATCH_SET_EVENTS];
}

int watch_set_disarm(struct watch_set *set, const char *id)
{
    pthread_mutex_lock(&set->lock);
    int i = slot_of(set, id);
    struct watch_set_entry *w = i >= 0 ? set->w[i] : NULL;
    if (w) set->w[i] = NULL;
    pthread_mutex_unlock(&set->lock);
    if (!w) return -ENOENT;
    entry_free(w); /* the watch sees the flag within a round (a dump in flight is cancelled and removed) */
    return 0;
}

void watch_set_counts(struct watch_set *set, int *armed, unsigned long long *firings, unsigned long long *captures,
                      unsigned long long *failed)
{
    pthread_mutex_lock(&set->lock);
    *armed = 0;
    for (int i = 0; i < WATCH_SET_MAX; i++) *armed += set->w[i] && set->w[i]->running;
    *firings = set->firings_total;
    *captures = set->captures_total;
    *failed = set->failed_total;
    pthread_mutex_unlock(&set->lock);
}

void watch_set_shutdown(struct watch_set *set)
{
    pthread_mutex_lock(&set->lock);
    for (int i = 0; i < WATCH_SET_MAX; i++)
        if (set->w[i]) set->w[i]->cancel = 1; /* all stop together; then each is waited for */
    pthread_mutex_unlock(&set->lock);
    for (int i = 0; i < WATCH_SET_MAX; i++) {
        entry_free(set->w[i]);
        set->w[i] = NULL;
    }
    pthread_mutex_destroy(&set->lock);
}
