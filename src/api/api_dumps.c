#include "api_dumps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/procstat.h"
#include "render/dump_json.h"
#include "render/json_util.h"
#include "util/clock.h"

const char *api_dump_state_name(enum api_dump_state s)
{
    static const char *const names[] = {"running", "done", "failed", "cancelled"};
    return names[s];
}

void api_dumps_init(struct api_dumps *ds, const char *dir, struct api_busy *busy)
{
    memset(ds, 0, sizeof *ds);
    pthread_mutex_init(&ds->lock, NULL);
    snprintf(ds->dir, sizeof ds->dir, "%s", dir);
    ds->busy = busy;
}

static void on_progress(void *arg, unsigned long long done, unsigned long long total)
{
    struct api_dump *d = arg;
    pthread_mutex_lock(&d->owner->lock);
    d->done = done;
    d->total = total;
    pthread_mutex_unlock(&d->owner->lock);
}

static void *worker(void *arg)
{
    struct api_dump *d = arg;
    struct dump_result r;
    char err[512] = "";
    memset(&r, 0, sizeof r);
    int rc = dump_write(d->pid, &d->opts, &r, err, sizeof err);
    pthread_mutex_lock(&d->owner->lock);
    d->result = r;
    d->ended = clock_monotonic_seconds();
    if (rc == 0) d->state = API_DUMP_DONE;
    else d->state = d->cancel ? API_DUMP_CANCELLED : API_DUMP_FAILED;
    snprintf(d->error, sizeof d->error, "%s", rc == 0 ? "" : err);
    if (rc == 0) snprintf(d->path, sizeof d->path, "%s", r.path);
    pthread_mutex_unlock(&d->owner->lock);
    api_busy_release(d->owner->busy, d->pid);
    return NULL;
}

/* A slot for a new dump: a free one, else the oldest that failed or was cancelled. Called locked. */
static int free_slot(struct api_dumps *ds)
{
    int oldest = -1;
    for (int i = 0; i < API_DUMPS_MAX; i++) {
        if (!ds->d[i]) return i;
        if ((ds->d[i]->state == API_DUMP_FAILED || ds->d[i]->state == API_DUMP_CANCELLED) &&
            (oldest < 0 || ds->d[i]->created < ds->d[oldest]->created))
            oldest = i;
    }
    return oldest;
}

static void dump_free(struct api_dump *d)
{
    if (d->joinable) pthread_join(d->thread, NULL);
    free(d);
}

int api_dumps_start(struct api_dumps *ds, int pid, int full, int filter_set, unsigned filter, enum dump_mode mode,
                    char *id, char *err, size_t errlen)
{
    struct api_dump *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "out of memory");
        return 500;
    }
    if (api_id_new(d->id) < 0) {
        snprintf(err, errlen, "no random id: %s", strerror(errno));
        free(d);
        return 500;
    }
    int st = api_busy_take(ds->busy, pid, "dump", err, errlen);
    if (st) {
        free(d);
        return st;
    }
    d->pid = pid;
    d->owner = ds;
    d->created = (double)time(NULL);
    d->started = clock_monotonic_seconds();
    struct procstat ps;
    if (procstat_read(pid, 0, &ps) == 0) snprintf(d->comm, sizeof d->comm, "%s", ps.comm);
    /* The CLI's name; a second dump of the process within the same second gets part of its id too. */
    dump_default_name(pid, ds->dir, d->path, sizeof d->path);
    struct stat sb;
    if (lstat(d->path, &sb) == 0) {
        size_t n = strlen(d->path);
        snprintf(d->path + n, sizeof d->path - n, "-%.8s", d->id);
    }
    const char *slash = strrchr(d->path, '/');
    snprintf(d->name, sizeof d->name, "%.255s", slash ? slash + 1 : d->path);
    dump_options_default(&d->opts);
    d->opts.path = d->path;
    d->opts.full = full;
    d->opts.filter_set = filter_set;
    d->opts.filter = filter;
    d->opts.mode = mode;
    d->opts.cancel = &d->cancel;
    d->opts.progress = on_progress;
    d->opts.progress_arg = d;

    pthread_mutex_lock(&ds->lock);
    int slot = free_slot(ds);
    if (slot < 0) {
        pthread_mutex_unlock(&ds->lock);
        api_busy_release(ds->busy, pid);
        snprintf(err, errlen, "%d dumps are kept already: DELETE /api/dumps/ID some of them first", API_DUMPS_MAX);
        free(d);
        return 503;
    }
    struct api_dump *old = ds->d[slot];
    int rc = pthread_create(&d->thread, NULL, worker, d);
    if (rc) {
        pthread_mutex_unlock(&ds->lock);
        api_busy_release(ds->busy, pid);
        snprintf(err, errlen, "cannot start a thread: %s", strerror(rc));
        free(d);
        return 503;
    }
    d->joinable = 1;
    ds->d[slot] = d;
    pthread_mutex_unlock(&ds->lock);
    if (old) dump_free(old);
    memcpy(id, d->id, API_ID_LEN + 1);
    return 0;
}

int api_dumps_adopt(struct api_dumps *ds, int pid, const char *comm, const char *path, char *id, char *err,
                    size_t errlen)
{
    struct api_dump *d = calloc(1, sizeof *d);
    if (!d || api_id_new(d->id) < 0) {
        snprintf(err, errlen, "%s", d ? "no random id" : "out of memory");
        free(d);
        return 500;
    }
    d->pid = pid;
    d->owner = ds;
    d->adopted = 1;
    d->state = API_DUMP_DONE;
    d->created = (double)time(NULL);
    d->started = d->ended = clock_monotonic_seconds();
    snprintf(d->comm, sizeof d->comm, "%s", comm);
    snprintf(d->path, sizeof d->path, "%s", path);
    const char *slash = strrchr(d->path, '/');
    snprintf(d->name, sizeof d->name, "%.255s", slash ? slash + 1 : d->path);
    struct stat st;
    if (stat(d->path, &st) == 0) d->done = d->total = (unsigned long long)st.st_size;
    pthread_mutex_lock(&ds->lock);
    int slot = free_slot(ds);
    struct api_dump *old = slot >= 0 ? ds->d[slot] : NULL;
    if (slot >= 0) ds->d[slot] = d;
    pthread_mutex_unlock(&ds->lock);
    if (slot < 0) {
        snprintf(err, errlen, "%d dumps are kept already: DELETE /api/dumps/ID some of them first", API_DUMPS_MAX);
        free(d);
        return 503;
    }
    if (old) dump_free(old);
    memcpy(id, d->id, API_ID_LEN + 1);
    return 0;
}

/* Called locked. */
static int find(struct api_dumps *ds, const char *id)
{
    for (int i = 0; i < API_DUMPS_MAX; i++)
        if (ds->d[i] && !strcmp(ds->d[i]->id, id)) return i;
    return -1;
}

/* The status of d as JSON. Called locked. */
static cJSON *status_json(const struct api_dump *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", d->id);
    json_add_i64(o, "pid", d->pid);
    json_add_bytes(o, "name", d->comm, strlen(d->comm));
    cJSON_AddStringToObject(o, "state", api_dump_state_name(d->state));
    char iso[32], loc[64];
    clock_format_iso8601(iso, sizeof iso, (time_t)d->created);
    cJSON_AddStringToObject(o, "created", iso);
    snprintf(loc, sizeof loc, "/api/dumps/%s", d->id);
    cJSON_AddStringToObject(o, "location", loc);
    json_add_bytes(o, "file", d->name, strlen(d->name));
    json_add_u64(o, "bytes_done", d->done);
    json_add_u64(o, "bytes_total", d->total);
    double fraction = d->state == API_DUMP_DONE ? 1 : d->total ? (double)d->done / (double)d->total : 0;
    json_add_fixed(o, "progress", fraction > 1 ? 1 : fraction, 3);
    /* a finished dump's own measure; a failed one stopped at some step of its own, timed here */
    double elapsed = d->adopted                     ? 0
                     : d->state == API_DUMP_DONE      ? d->result.total_ms
                     : d->state == API_DUMP_RUNNING ? (clock_monotonic_seconds() - d->started) * 1e3
                                                    : (d->ended - d->started) * 1e3;
    json_add_fixed(o, "elapsed_ms", elapsed, 1);
    if (d->state == API_DUMP_FAILED || d->state == API_DUMP_CANCELLED) json_add_string_or_null(o, "error", d->error);
    else cJSON_AddNullToObject(o, "error");
    cJSON_AddBoolToObject(o, "from_trigger", d->adopted);
    if (d->state == API_DUMP_DONE && !d->adopted) { /* the fields of `diagtop dump --json` */
        dump_json_add(o, &d->result);
    }
    return o;
}

static char *print(cJSON *o)
{
    char *t = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return t;
}

char *api_dumps_status(struct api_dumps *ds, const char *id, enum api_dump_state *state)
{
    pthread_mutex_lock(&ds->lock);
    int i = find(ds, id);
    cJSON *o = i >= 0 ? status_json(ds->d[i]) : NULL;
    if (i >= 0) *state = ds->d[i]->state;
    pthread_mutex_unlock(&ds->lock);
    return o ? print(o) : NULL;
}

char *api_dumps_list(struct api_dumps *ds)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *a = cJSON_AddArrayToObject(doc, "dumps");
    pthread_mutex_lock(&ds->lock);
    for (int i = 0; i < API_DUMPS_MAX; i++)
        if (ds->d[i]) cJSON_AddItemToArray(a, status_json(ds->d[i]));
    pthread_mutex_unlock(&ds->lock);
    return print(doc);
}

int api_dumps_open(struct api_dumps *ds, const char *id, int *fd, unsigned long long *size, char *name,
                   size_t namelen, enum api_dump_state *state)
{
    pthread_mutex_lock(&ds->lock);
    int i = find(ds, id), rc = 404;
    if (i >= 0) {
        struct api_dump *d = ds->d[i];
        *state = d->state;
        rc = 409;
        if (d->state == API_DUMP_DONE) {
            struct stat st;
            *fd = open(d->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
            if (*fd >= 0 && fstat(*fd, &st) == 0 && S_ISREG(st.st_mode)) {
                *size = (unsigned long long)st.st_size;
                snprintf(name, namelen, "%s", d->name);
                rc = 0;
            } else {
                if (*fd >= 0) close(*fd);
                snprintf(d->error, sizeof d->error, "the core file is gone from the dump directory");
                d->state = API_DUMP_FAILED;
                *state = d->state;
            }
        }
    }
    pthread_mutex_unlock(&ds->lock);
    return rc;
}

int api_dumps_delete(struct api_dumps *ds, const char *id)
{
    pthread_mutex_lock(&ds->lock);
    int i = find(ds, id);
    if (i < 0) {
        pthread_mutex_unlock(&ds->lock);
        return 404;
    }
    struct api_dump *d = ds->d[i];
    ds->d[i] = NULL;
    d->cancel = 1;
    pthread_mutex_unlock(&ds->lock);
    /* The worker checks the flag between chunks (the target is detached first, the partial file removed), and
     * takes the lock for its result: join unlocked. */
    if (d->joinable) {
        pthread_join(d->thread, NULL);
        d->joinable = 0;
    }
    if (d->state == API_DUMP_DONE) unlink(d->path);
    dump_free(d);
    return 0;
}

void api_dumps_shutdown(struct api_dumps *ds)
{
    pthread_mutex_lock(&ds->lock);
    for (int i = 0; i < API_DUMPS_MAX; i++)
        if (ds->d[i]) ds->d[i]->cancel = 1;
    pthread_mutex_unlock(&ds->lock);
    for (int i = 0; i < API_DUMPS_MAX; i++) {
        if (ds->d[i]) dump_free(ds->d[i]);
        ds->d[i] = NULL;
    }
    pthread_mutex_destroy(&ds->lock);
}
