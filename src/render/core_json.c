#include "core_json.h"

#include "actions/offline/core_auxv.h"

#include <stdio.h>
#include <string.h>

#include "json_util.h"
#include "stack_json.h"

static cJSON *signal_json(const struct core_report *r)
{
    const struct core_signal *s = &r->notes.signal;
    if (!s->present) return cJSON_CreateNull();
    cJSON *j = cJSON_CreateObject();
    char name[32], text[200];
    json_add_i64(j, "number", s->signo);
    cJSON_AddStringToObject(j, "name", core_notes_signal_name(s->signo, name, sizeof name));
    json_add_i64(j, "code", s->code);
    cJSON_AddStringToObject(j, "description", core_notes_signal_describe(s, text, sizeof text));
    if (core_notes_signal_has_addr(s)) json_add_hex(j, "address", s->addr);
    else cJSON_AddNullToObject(j, "address");
    if (core_notes_signal_sent(s)) {
        json_add_i64(j, "sender_pid", s->sender_pid);
        json_add_i64(j, "sender_uid", s->sender_uid);
    }
    if (r->signal_tid) json_add_i64(j, "tid", r->signal_tid);
    else cJSON_AddNullToObject(j, "tid");
    return j;
}

static cJSON *process_json(const struct core_report *r)
{
    const struct core_notes *n = &r->notes;
    cJSON *j = cJSON_CreateObject();
    json_add_i64(j, "pid", r->stacks.pid);
    json_add_bytes(j, "name", n->fname, strlen(n->fname));
    if (n->state) {
        json_add_bytes(j, "args", n->args, strlen(n->args));
        char state[2] = {n->state, 0};
        cJSON_AddStringToObject(j, "state", state);
        json_add_i64(j, "ppid", n->ppid);
        json_add_i64(j, "uid", n->uid);
        json_add_i64(j, "gid", n->gid);
    }
    if (n->auxv_entry) json_add_hex(j, "entry", n->auxv_entry);
    json_add_fixed_or_null(j, "taken_unix_seconds", n->taken_realtime_ns > 0, (double)n->taken_realtime_ns / 1e9, 3);
    cJSON *auxv = cJSON_AddArrayToObject(j, "auxv");
    for (int i = 0; i < n->nauxv; i++) {
        const struct core_auxv_entry *a = &n->auxv[i];
        cJSON *e = cJSON_CreateObject();
        json_add_u64(e, "type", a->type);
        json_add_string_or_null(e, "name", core_auxv_name(a->type));
        if (core_auxv_format(a->type) == AUXV_DEC) json_add_u64(e, "value", a->value);
        else json_add_hex(e, "value", a->value);
        const char *str = r->auxv_strings ? r->auxv_strings[i] : NULL;
        if (str) json_add_bytes(e, "string", str, strlen(str));
        cJSON_AddItemToArray(auxv, e);
    }
    return j;
}

static cJSON *goroutines_json(const struct goroutines *gs, int source)
{
    if (!gs->go) return cJSON_CreateNull();
    cJSON *j = cJSON_CreateObject();
    json_add_string_or_null(j, "error", gs->why_not[0] ? gs->why_not : NULL);
    cJSON *list = cJSON_AddArrayToObject(j, "list");
    for (int i = 0; i < gs->n; i++) {
        const struct goroutine *g = &gs->list[i];
        cJSON *gj = cJSON_CreateObject();
        json_add_i64(gj, "id", g->id);
        json_add_string_or_null(gj, "state", g->state);
        json_add_fixed_or_null(gj, "waiting_since_s", g->waiting_since_s >= 0, g->waiting_since_s, 3);
        json_add_fixed_or_null(gj, "waited_s", g->waited_s >= 0, g->waited_s, 3);
        if (g->tid) json_add_i64(gj, "tid", g->tid);
        else cJSON_AddNullToObject(gj, "tid");
        cJSON_AddBoolToObject(gj, "system", g->system);
        cJSON_AddItemToObject(gj, "frames", stack_json_frames(g->frames, g->nframes, source));
        cJSON_AddItemToObject(gj, "created_by",
                              g->created_by.function ? stack_json_frame(&g->created_by, source) : cJSON_CreateNull());
        json_add_string_or_null(gj, "error", g->error[0] ? g->error : NULL);
        cJSON_AddItemToArray(list, gj);
    }
    return j;
}

static cJSON *heap_json(const struct core_heap *hp)
{
    if (!hp->allocator[0] && !hp->why_not[0]) return cJSON_CreateNull();
    cJSON *j = cJSON_CreateObject();
    json_add_string_or_null(j, "allocator", hp->allocator[0] ? hp->allocator : NULL);
    cJSON_AddBoolToObject(j, "walked", hp->walked);
    json_add_string_or_null(j, "error", hp->walked ? NULL : hp->why_not);
    if (!hp->walked) return j;
    const struct glibc_heap *h = &hp->h;
    json_add_i64(j, "arenas", h->arenas);
    json_add_u64(j, "in_use_bytes", h->in_use_bytes);
    json_add_u64(j, "in_use_chunks", h->in_use_chunks);
    json_add_u64(j, "free_bytes", h->free_bytes);
    json_add_u64(j, "free_chunks", h->free_chunks);
    json_add_u64(j, "cached_chunks", h->cached_chunks);
    json_add_u64(j, "top_bytes", h->top_bytes);
    json_add_u64(j, "mmapped_bytes", h->mmapped_bytes);
    json_add_u64(j, "mmapped_chunks", h->mmapped_chunks);
    json_add_u64_or_null(j, "mmapped_expected", h->mmapped_expected >= 0, (unsigned long long)h->mmapped_expected);
    json_add_u64(j, "system_bytes", h->system_bytes);
    json_add_string_or_null(j, "warning", h->warning[0] ? h->warning : NULL);
    cJSON *classes = cJSON_AddArrayToObject(j, "classes");
    for (int i = 0; i < h->nclasses; i++) {
        const struct heap_class *c = &h->classes[i];
        cJSON *cj = cJSON_CreateObject();
        json_add_u64(cj, "chunk_size", c->chunk_size);
        json_add_u64(cj, "count", c->count);
        json_add_u64(cj, "bytes", c->bytes);
        cJSON *samples = cJSON_AddArrayToObject(cj, "samples");
        for (int k = 0; k < c->nsample; k++) {
            cJSON *sj = cJSON_CreateObject();
            char hex[2 * HEAP_SAMPLE_BYTES + 1];
            for (int b = 0; b < HEAP_SAMPLE_BYTES; b++) snprintf(hex + 2 * b, 3, "%02x", c->head[k][b]);
            json_add_hex(sj, "address", c->sample[k]);
            cJSON_AddStringToObject(sj, "head_hex", hex);
            cJSON_AddItemToArray(samples, sj);
        }
        cJSON_AddItemToArray(classes, cj);
    }
    return j;
}

static cJSON *modules_json(const struct core_report *r)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < r->nmodules; i++) {
        const struct core_module *m = &r->modules[i];
        cJSON *j = cJSON_CreateObject();
        json_add_bytes(j, "name", m->name, strlen(m->name));
        json_add_hex(j, "start", m->start);
        json_add_hex(j, "end", m->end);
        json_add_string_or_null(j, "build_id", m->build_id[0] ? m->build_id : NULL);
        json_add_string_or_null(j, "file", m->file);
        cJSON_AddBoolToObject(j, "in_core", m->in_core);
        json_add_string_or_null(j, "debug_file", m->debug_file);
        json_add_i64(j, "frames", m->frames);
        cJSON_AddItemToArray(a, j);
    }
    return a;
}

char *core_json(const struct core_report *r, const char *path, int source)
{
    cJSON *doc = cJSON_CreateObject();
    json_add_string_or_null(doc, "core", path);
    json_add_u64(doc, "file_size", r->notes.file_size);
    json_add_u64(doc, "needed_size", r->notes.needed_size);
    cJSON_AddBoolToObject(doc, "truncated", r->notes.needed_size > r->notes.file_size);
    cJSON_AddItemToObject(doc, "process", process_json(r));
    cJSON_AddItemToObject(doc, "signal", signal_json(r));
    cJSON_AddItemToObject(doc, "goroutines", goroutines_json(&r->goroutines, source));
    cJSON_AddItemToObject(doc, "threads", stack_json_threads(&r->stacks, source));
    cJSON_AddItemToObject(doc, "heap", heap_json(&r->heap));
    json_add_i64(doc, "missing_files", r->missing);
    cJSON_AddItemToObject(doc, "modules", modules_json(r));
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    return text;
}

char *core_json_diff(const struct core_diff *d, const char *old_path, const char *new_path, int source)
{
    cJSON *doc = cJSON_CreateObject();
    json_add_string_or_null(doc, "old", old_path);
    json_add_string_or_null(doc, "new", new_path);
    cJSON_AddBoolToObject(doc, "same_program", d->same_program);
    json_add_i64(doc, "old_pid", d->old->stacks.pid);
    json_add_i64(doc, "new_pid", d->new->stacks.pid);
    json_add_i64(doc, "old_threads", d->old->stacks.nthreads);
    json_add_i64(doc, "new_threads", d->new->stacks.nthreads);
    json_add_i64(doc, "old_goroutines", d->old->goroutines.n);
    json_add_i64(doc, "new_goroutines", d->new->goroutines.n);
    if (d->sizes) {
        cJSON *h = cJSON_AddObjectToObject(doc, "heap");
        json_add_u64(h, "old_in_use_bytes", d->old->heap.h.in_use_bytes);
        json_add_u64(h, "new_in_use_bytes", d->new->heap.h.in_use_bytes);
        json_add_u64(h, "old_in_use_chunks", d->old->heap.h.in_use_chunks);
        json_add_u64(h, "new_in_use_chunks", d->new->heap.h.in_use_chunks);
        cJSON *sizes = cJSON_AddArrayToObject(h, "sizes");
        for (int i = 0; i < d->nsizes; i++) {
            cJSON *z = cJSON_CreateObject();
            json_add_u64(z, "chunk_size", d->sizes[i].chunk_size);
            json_add_u64(z, "old_count", d->sizes[i].old_count);
            json_add_u64(z, "new_count", d->sizes[i].new_count);
            json_add_u64(z, "old_bytes", d->sizes[i].old_bytes);
            json_add_u64(z, "new_bytes", d->sizes[i].new_bytes);
            cJSON_AddItemToArray(sizes, z);
        }
    } else {
        cJSON_AddNullToObject(doc, "heap");
    }
    cJSON *stacks = cJSON_AddArrayToObject(doc, "stacks");
    for (int i = 0; i < d->nstacks; i++) {
        const struct core_diff_stack *s = &d->stacks[i];
        cJSON *sj = cJSON_CreateObject();
        cJSON_AddStringToObject(sj, "kind", s->goroutine ? "goroutine" : "thread");
        json_add_string_or_null(sj, "state", s->state);
        json_add_i64(sj, "old_count", s->old_count);
        json_add_i64(sj, "new_count", s->new_count);
        cJSON_AddItemToObject(sj, "frames", stack_json_frames(s->frames, s->nframes, source));
        cJSON_AddItemToArray(stacks, sj);
    }
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    return text;
}
