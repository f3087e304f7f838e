#include "stack_json.h"

#include <stdio.h>
#include <string.h>

#include "json_util.h"
#include "util/text.h"

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

/* What a blocked thread waits on (collect/thread_wait); paths and names are untrusted bytes. */
static cJSON *wait_json(const struct thread_wait *w)
{
    cJSON *j = cJSON_CreateObject();
    json_add_string_or_null(j, "syscall", w->syscall);
    json_add_i64(j, "nr", w->nr);
    cJSON_AddBoolToObject(j, "restarted", w->restarted);
    cJSON *args = cJSON_AddArrayToObject(j, "args");
    for (int i = 0; w->nr >= 0 && i < 6; i++) {
        char hex[24];
        snprintf(hex, sizeof hex, "0x%llx", w->args[i]);
        cJSON_AddItemToArray(args, cJSON_CreateString(hex));
    }
    json_add_bytes(j, "call", w->call, strlen(w->call));
    if (w->fd >= 0) json_add_i64(j, "fd", w->fd);
    else cJSON_AddNullToObject(j, "fd");
    json_add_string_or_null(j, "fd_kind", w->fd >= 0 ? w->fd_kind : NULL);
    if (w->object[0]) json_add_bytes(j, "object", w->object, strlen(w->object));
    else cJSON_AddNullToObject(j, "object");
    if (w->futex) {
        json_add_hex(j, "futex", w->futex);
        cJSON *peers = cJSON_AddArrayToObject(j, "futex_waiters");
        for (int i = 0; i < w->npeers; i++) cJSON_AddItemToArray(peers, cJSON_CreateNumber(w->peers[i]));
    } else {
        cJSON_AddNullToObject(j, "futex");
        cJSON_AddNullToObject(j, "futex_waiters");
    }
    if (w->kernel) {
        cJSON *k = cJSON_AddArrayToObject(j, "kernel_stack");
        for (int i = 0; i < w->nkernel; i++) {
            char clean[512];
            text_sanitize_utf8(clean, sizeof clean, w->kernel[i], strlen(w->kernel[i]));
            cJSON_AddItemToArray(k, cJSON_CreateString(clean));
        }
    } else {
        cJSON_AddNullToObject(j, "kernel_stack");
    }
    json_add_fixed_or_null(j, "last_ran_seconds_ago", w->since >= 0, w->since, 3);
    return j;
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
            cJSON_AddBoolToObject(tj, "read_unstopped", t->left_running);
            if (t->wait) cJSON_AddItemToObject(tj, "wait", wait_json(t->wait));
            else cJSON_AddNullToObject(tj, "wait");
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
