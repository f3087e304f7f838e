#include "rt_json.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"

static char *finish(cJSON *doc)
{
    char *text = doc ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    return text;
}

static cJSON *frames_json(const struct rt_frame *f, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        cJSON *j = cJSON_CreateObject();
        json_add_string_or_null(j, "function", f[i].function);
        json_add_string_or_null(j, "file", f[i].file);
        if (f[i].line > 0) json_add_i64(j, "line", f[i].line);
        else cJSON_AddNullToObject(j, "line");
        cJSON_AddItemToArray(a, j);
    }
    return a;
}

static cJSON *doc_for(int pid, const char *provider)
{
    cJSON *doc = cJSON_CreateObject();
    json_add_i64(doc, "pid", pid);
    json_add_string_or_null(doc, "provider", provider);
    return doc;
}

static cJSON *lock_json(const struct rt_lock *l)
{
    cJSON *j = cJSON_CreateObject();
    json_add_string_or_null(j, "address", l->address);
    json_add_string_or_null(j, "class", l->class_name);
    return j;
}

/* A Java thread's locks: what it waits for (and who holds it), what it holds, its CPU. */
static void java_locks_json(cJSON *j, const struct rt_stack *s, const struct rt_thread *t)
{
    json_add_fixed_or_null(j, "cpu_ms", t->cpu_ms >= 0, t->cpu_ms, 2);
    json_add_fixed_or_null(j, "elapsed_seconds", t->elapsed_s >= 0, t->elapsed_s, 2);
    if (t->waits_for.address) {
        cJSON *w = lock_json(&t->waits_for);
        json_add_string_or_null(w, "how", t->wait_how);
        if (t->held_by >= 0 && t->held_by < s->n) {
            cJSON *h = cJSON_AddObjectToObject(w, "held_by");
            json_add_i64(h, "id", s->threads[t->held_by].id);
            json_add_string_or_null(h, "name", s->threads[t->held_by].name);
        } else {
            cJSON_AddNullToObject(w, "held_by");
        }
        cJSON_AddItemToObject(j, "waiting_for", w);
    } else {
        cJSON_AddNullToObject(j, "waiting_for");
    }
    cJSON *holds = cJSON_AddArrayToObject(j, "holds");
    for (int i = 0; i < t->nholds; i++) cJSON_AddItemToArray(holds, lock_json(&t->holds[i]));
}

static cJSON *deadlocks_json(const struct rt_stack *s)
{
    cJSON *all = cJSON_CreateArray();
    for (int i = 0; i < s->ndeadlocks; i++) {
        cJSON *cycle = cJSON_CreateArray();
        for (int k = 0; k < s->deadlocks[i].n; k++) {
            const struct rt_deadlock_edge *e = &s->deadlocks[i].edges[k];
            cJSON *j = lock_json(&e->lock);
            json_add_string_or_null(j, "thread", e->thread);
            json_add_string_or_null(j, "how", e->how);
            json_add_string_or_null(j, "held_by", e->held_by);
            cJSON_AddItemToArray(cycle, j);
        }
        cJSON_AddItemToArray(all, cycle);
    }
    return all;
}

char *rt_json_stack(const struct rt_stack *s)
{
    cJSON *doc = doc_for(s->pid, s->provider);
    json_add_fixed(doc, "request_ms", s->ms, 3);
    json_add_fixed(doc, "stopped_ms", s->stopped_ms, 3);
    cJSON *threads = cJSON_AddArrayToObject(doc, "threads");
    for (int i = 0; i < s->n; i++) {
        const struct rt_thread *t = &s->threads[i];
        cJSON *j = cJSON_CreateObject();
        json_add_i64(j, "id", t->id);
        json_add_string_or_null(j, "name", t->name);
        json_add_string_or_null(j, "state", t->state);
        if (t->wait_seconds >= 0) json_add_i64(j, "wait_seconds", t->wait_seconds);
        else cJSON_AddNullToObject(j, "wait_seconds");
        if (t->os_tid) json_add_i64(j, "os_tid", t->os_tid);
        else cJSON_AddNullToObject(j, "os_tid");
        cJSON_AddBoolToObject(j, "daemon", t->daemon);
        cJSON_AddItemToObject(j, "frames", frames_json(t->frames, t->nframes));
        json_add_string_or_null(j, "created_by", t->created_by);
        if (t->name) java_locks_json(j, s, t);
        cJSON_AddItemToArray(threads, j);
    }
    if (s->n && s->threads[0].name) {
        cJSON_AddItemToObject(doc, "deadlocks", deadlocks_json(s));
        cJSON_AddBoolToObject(doc, "lock_holders", s->lock_holders);
    }
    return finish(doc);
}

static const char *unit_name(enum rt_unit u)
{
    switch (u) {
    case RT_BYTES: return "bytes";
    case RT_COUNT: return "count";
    case RT_NANOSECONDS: return "nanoseconds";
    case RT_TIME: return "nanoseconds since the epoch";
    case RT_RATIO: return "ratio";
    case RT_BOOL: return "bool";
    default: return "text";
    }
}

char *rt_json_fields(int pid, const struct rt_fields *fs)
{
    cJSON *doc = doc_for(pid, fs->provider);
    cJSON *sections = cJSON_AddObjectToObject(doc, "sections"), *units = cJSON_AddObjectToObject(doc, "units");
    for (int i = 0; i < fs->n; i++) {
        const struct rt_field *f = &fs->f[i];
        cJSON *sec = cJSON_GetObjectItemCaseSensitive(sections, f->section);
        if (!sec) sec = cJSON_AddObjectToObject(sections, f->section);
        if (f->unit == RT_TEXT) json_add_string_or_null(sec, f->key, f->text);
        else if (f->unit == RT_BOOL) cJSON_AddBoolToObject(sec, f->key, f->u != 0);
        else if (f->is_double) cJSON_AddNumberToObject(sec, f->key, f->d);
        else json_add_u64(sec, f->key, f->u);
        if (!cJSON_GetObjectItemCaseSensitive(units, f->key)) cJSON_AddStringToObject(units, f->key, unit_name(f->unit));
    }
    return finish(doc);
}

char *rt_json_gc(int pid, const struct rt_gc *g)
{
    cJSON *doc = doc_for(pid, g->provider);
    if (g->heap_before >= 0) json_add_i64(doc, "heap_before", g->heap_before);
    else cJSON_AddNullToObject(doc, "heap_before");
    if (g->heap_after >= 0) json_add_i64(doc, "heap_after", g->heap_after);
    else cJSON_AddNullToObject(doc, "heap_after");
    json_add_fixed(doc, "request_ms", g->ms, 3);
    json_add_string_or_null(doc, "message", g->message);
    return finish(doc);
}

static void add_count(cJSON *j, const char *name, long long v)
{
    if (v >= 0) json_add_i64(j, name, v);
    else cJSON_AddNullToObject(j, name);
}

char *rt_json_heap(const struct heap_view *v)
{
    const struct rt_heap *h = v->cur;
    cJSON *doc = doc_for(h->pid, h->provider);
    cJSON_AddStringToObject(doc, "kind", h->kind);
    json_add_fixed(doc, "taken_at", h->taken_at, 3);
    json_add_i64(doc, "total_count", h->total_count);
    json_add_i64(doc, "total_bytes", h->total_bytes);
    json_add_string_or_null(doc, "saved_path", h->saved_path);
    if (v->first) json_add_fixed(doc, "minutes_since_first", v->minutes, 3);
    cJSON *rows = cJSON_AddArrayToObject(doc, "rows");
    for (int i = 0; i < v->n; i++) {
        const struct heap_view_row *r = &v->rows[i];
        cJSON *j = cJSON_CreateObject();
        json_add_string_or_null(j, "name", r->row->name);
        json_add_i64(j, "count", r->row->count);
        json_add_i64(j, "bytes", r->row->bytes);
        add_count(j, "alloc_count", r->row->alloc_count);
        add_count(j, "alloc_bytes", r->row->alloc_bytes);
        if (r->row->stack) cJSON_AddItemToObject(j, "stack", frames_json(r->row->stack, r->row->nstack));
        if (v->first) {
            json_add_i64(j, "delta_count", r->since_first.count);
            json_add_i64(j, "delta_bytes", r->since_first.bytes);
            json_add_fixed(j, "bytes_per_minute", r->bytes_per_minute, 1);
            cJSON_AddBoolToObject(j, "new", r->since_first.is_new);
        }
        if (v->prev) {
            json_add_i64(j, "delta_count_prev", r->since_prev.count);
            json_add_i64(j, "delta_bytes_prev", r->since_prev.bytes);
        }
        cJSON_AddItemToArray(rows, j);
    }
    return finish(doc);
}

char *rt_json_profile(int pid, const struct rt_profile *p)
{
    cJSON *doc = doc_for(pid, p->provider);
    cJSON_AddStringToObject(doc, "format", p->format);
    cJSON_AddStringToObject(doc, "unit", p->unit);
    json_add_fixed(doc, "seconds", p->seconds, 3);
    json_add_i64(doc, "total", p->total);
    json_add_string_or_null(doc, "saved_path", p->saved_path);
    json_add_string_or_null(doc, "note", p->note[0] ? p->note : NULL);
    cJSON *rows = cJSON_AddArrayToObject(doc, "rows");
    for (int i = 0; i < p->n; i++) {
        cJSON *j = cJSON_CreateObject();
        json_add_string_or_null(j, "function", p->rows[i].function);
        json_add_string_or_null(j, "file", p->rows[i].file);
        json_add_i64(j, "flat", p->rows[i].flat);
        json_add_i64(j, "cum", p->rows[i].cum);
        cJSON_AddItemToArray(rows, j);
    }
    return finish(doc);
}

char *rt_json_file(int pid, const struct rt_file *f)
{
    cJSON *doc = doc_for(pid, f->provider);
    json_add_string_or_null(doc, "path", f->path);
    json_add_u64(doc, "bytes", f->bytes);
    json_add_fixed(doc, "request_ms", f->ms, 3);
    return finish(doc);
}

char *rt_json_error(int pid, const char *provider, const char *error)
{
    cJSON *doc = doc_for(pid, provider);
    json_add_string_or_null(doc, "error", error);
    return finish(doc);
}

/* ---- reading a heap document back ---- */

static long long number_of(const cJSON *obj, const char *name, long long fallback)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    return cJSON_IsNumber(v) ? (long long)v->valuedouble : fallback;
}

static char *string_of(const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    return cJSON_IsString(v) && v->valuestring ? strdup(v->valuestring) : NULL;
}

static int read_frames(const cJSON *a, struct rt_frame **out, int *n)
{
    int count = cJSON_GetArraySize(a);
    *out = calloc((size_t)(count ? count : 1), sizeof **out);
    if (!*out) return -ENOMEM;
    *n = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, a) {
        (*out)[*n] = (struct rt_frame){string_of(f, "function"), string_of(f, "file"), (int)number_of(f, "line", 0)};
        (*n)++;
    }
    return 0;
}

int rt_json_read_heap(const char *text, struct rt_heap *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    cJSON *doc = cJSON_Parse(text);
    const cJSON *rows = doc ? cJSON_GetObjectItemCaseSensitive(doc, "rows") : NULL;
    const cJSON *kind = doc ? cJSON_GetObjectItemCaseSensitive(doc, "kind") : NULL;
    if (!cJSON_IsArray(rows) || !cJSON_IsString(kind)) {
        snprintf(err, errlen, "not a heap snapshot of diagtop heap --json");
        cJSON_Delete(doc);
        return -EINVAL;
    }
    snprintf(out->kind, sizeof out->kind, "%s", kind->valuestring);
    char *prov = string_of(doc, "provider");
    snprintf(out->provider, sizeof out->provider, "%s", prov ? prov : "");
    free(prov);
    out->pid = (int)number_of(doc, "pid", 0);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(doc, "taken_at");
    out->taken_at = cJSON_IsNumber(t) ? t->valuedouble : 0;
    int n = cJSON_GetArraySize(rows), rc = 0;
    out->rows = calloc((size_t)(n ? n : 1), sizeof *out->rows);
    if (!out->rows) rc = -ENOMEM;
    const cJSON *r;
    cJSON_ArrayForEach(r, rows) {
        if (rc < 0) break;
        struct rt_heap_row *row = &out->rows[out->n++];
        row->name = string_of(r, "name");
        row->count = number_of(r, "count", 0);
        row->bytes = number_of(r, "bytes", 0);
        row->alloc_count = number_of(r, "alloc_count", -1);
        row->alloc_bytes = number_of(r, "alloc_bytes", -1);
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(r, "stack");
        if (cJSON_IsArray(st)) rc = read_frames(st, &row->stack, &row->nstack);
    }
    cJSON_Delete(doc);
    if (rc < 0) {
        snprintf(err, errlen, "out of memory");
        rt_heap_free(out);
        return rc;
    }
    rt_heap_finish(out);
    return 0;
}
