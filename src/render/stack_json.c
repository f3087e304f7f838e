#include "stack_json.h"

#include <stdio.h>
#include <string.h>

#include "json_util.h"

cJSON *stack_json_frame(const struct stack_frame *f, int source)
{
    cJSON *j = cJSON_CreateObject();
    json_add_hex(j, "pc", f->pc);
    json_add_string_or_null(j, "function", f->function);
    if (f->function && !f->inlined) json_add_hex(j, "offset", f->offset);
    else if (!f->function && f->module) json_add_hex(j, "module_offset", f->offset);
    cJSON_AddBoolToObject(j, "inlined", f->inlined);
    if (source) {
        json_add_string_or_null(j, "file", f->file);
        if (f->file) json_add_i64(j, "line", f->line);
        else cJSON_AddNullToObject(j, "line");
    }
    json_add_string_or_null(j, "module", f->module);
    return j;
}

cJSON *stack_json_frames(const struct stack_frame *f, int n, int source)
{
    cJSON *frames = cJSON_CreateArray();
    for (int k = 0; k < n; k++) cJSON_AddItemToArray(frames, stack_json_frame(&f[k], source));
    return frames;
}

cJSON *stack_json_threads(const struct stack_result *r, int source)
{
    cJSON *threads = cJSON_CreateArray();
    for (int i = 0; i < r->nthreads; i++) {
        const struct stack_thread *t = &r->threads[i];
        cJSON *tj = cJSON_CreateObject();
        json_add_i64(tj, "tid", t->tid);
        if (r->offline) {
            json_add_string_or_null(tj, "mark", t->mark[0] ? t->mark : NULL);
        } else {
            json_add_bytes(tj, "name", t->name, strlen(t->name));
            char state[2] = {t->state ? t->state : '?', 0};
            cJSON_AddStringToObject(tj, "state", state);
            if (t->cpu_percent >= 0) json_add_fixed(tj, "cpu_percent", t->cpu_percent, 1);
            else cJSON_AddNullToObject(tj, "cpu_percent");
        }
        cJSON_AddItemToObject(tj, "frames", stack_json_frames(t->frames, t->nframes, source));
        json_add_string_or_null(tj, "error", t->error[0] ? t->error : NULL);
        cJSON_AddItemToArray(threads, tj);
    }
    return threads;
}

char *stack_json(const struct stack_result *r, int source)
{
    cJSON *doc = cJSON_CreateObject();
    json_add_i64(doc, "pid", r->pid);
    json_add_bytes(doc, "name", r->comm, strlen(r->comm));
    json_add_fixed(doc, "stopped_ms", r->stopped_ms, 3);
    json_add_fixed(doc, "capture_ms", r->total_ms, 3);
    cJSON_AddBoolToObject(doc, "target_was_stopped", r->target_was_stopped);
    cJSON_AddBoolToObject(doc, "not_stopped", r->not_stopped);
    cJSON_AddItemToObject(doc, "threads", stack_json_threads(r, source));
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    return text;
}

char *stack_json_error(int pid, const char *error)
{
    cJSON *doc = cJSON_CreateObject();
    json_add_i64(doc, "pid", pid);
    json_add_string_or_null(doc, "error", error);
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    return text;
}
