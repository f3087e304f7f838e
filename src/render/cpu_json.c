#include "cpu_json.h"

#include <stdio.h>
#include <string.h>

#include "cpu_top.h"
#include "json_util.h"

/* The same frame object as stack_json's, so that scripts read both alike. */
static cJSON *frame_json(const struct cpu_frame *f)
{
    cJSON *j = cJSON_CreateObject();
    json_add_string_or_null(j, "function", f->function);
    json_add_string_or_null(j, "module", f->module);
    json_add_string_or_null(j, "file", f->file);
    if (f->file) json_add_i64(j, "line", f->line);
    else cJSON_AddNullToObject(j, "line");
    cJSON_AddBoolToObject(j, "inlined", f->inlined);
    json_add_hex(j, "pc", f->pc);
    if (f->function && !f->inlined) json_add_hex(j, "offset", f->offset);
    else if (!f->function && f->module) json_add_hex(j, "module_offset", f->offset);
    return j;
}

static void add_meta(cJSON *doc, const struct cpu_report *r, const struct cpu_top *t)
{
    json_add_i64(doc, "pid", r->pid);
    json_add_bytes(doc, "name", r->comm, strnlen(r->comm, sizeof r->comm));
    json_add_bytes(doc, "method", r->method, strnlen(r->method, sizeof r->method));
    size_t why = strnlen(r->method_why, sizeof r->method_why);
    if (why) json_add_bytes(doc, "method_why", r->method_why, why);
    else cJSON_AddNullToObject(doc, "method_why");
    json_add_i64(doc, "hz", r->hz);
    json_add_fixed(doc, "seconds", r->seconds, 3);
    json_add_i64(doc, "samples", t->samples);
    json_add_i64(doc, "lost", r->lost);
    json_add_i64(doc, "period_ns", r->period_ns);
    if (r->target_cost_percent >= 0) json_add_fixed(doc, "target_cost_percent", r->target_cost_percent, 2);
    else cJSON_AddNullToObject(doc, "target_cost_percent");
    json_add_i64(doc, "cpu_ns", t->cpu_ns);
    if (t->tid) json_add_i64(doc, "tid", t->tid);
    else cJSON_AddNullToObject(doc, "tid");
}

char *cpu_json(const struct cpu_report *r, const struct cpu_json_opts *o)
{
    static const struct cpu_json_opts defaults = {0};
    if (!o) o = &defaults;
    struct cpu_top t;
    struct cpu_top_opts to = {.sort = CPU_TOP_BY_OWN, .tid = o->tid, .limit = o->functions};
    if (cpu_top_build(r, &to, &t) < 0) return NULL;
    cJSON *doc = cJSON_CreateObject();
    add_meta(doc, r, &t);
    cJSON *threads = cJSON_AddArrayToObject(doc, "threads");
    for (int i = 0; i < r->nthreads; i++) {
        const struct cpu_thread *th = &r->threads[i];
        if (o->tid && th->tid != o->tid) continue;
        cJSON *j = cJSON_CreateObject();
        json_add_i64(j, "tid", th->tid);
        json_add_bytes(j, "name", th->name, strnlen(th->name, sizeof th->name));
        json_add_i64(j, "samples", th->samples);
        cJSON_AddItemToArray(threads, j);
    }
    cJSON *fns = cJSON_AddArrayToObject(doc, "functions");
    for (int i = 0; i < t.n; i++) {
        const struct cpu_top_row *row = &t.rows[i];
        cJSON *j = cJSON_CreateObject();
        json_add_string_or_null(j, "name", row->name);
        json_add_string_or_null(j, "module", row->module);
        json_add_i64(j, "own_samples", row->own);
        json_add_i64(j, "total_samples", row->total);
        json_add_i64(j, "own_cpu_ns", row->own_ns);
        json_add_i64(j, "total_cpu_ns", row->total_ns);
        cJSON_AddItemToArray(fns, j);
    }
    cJSON *stacks = cJSON_AddArrayToObject(doc, "stacks");
    for (int i = 0; i < r->nstacks && !o->no_stacks; i++) {
        const struct cpu_stack *s = &r->stacks[i];
        if (s->samples <= 0 || (o->tid && s->tid != o->tid)) continue;
        cJSON *j = cJSON_CreateObject();
        json_add_i64(j, "tid", s->tid);
        json_add_i64(j, "samples", s->samples);
        json_add_i64(j, "cpu_ns", cpu_top_stack_ns(r, s));
        cJSON_AddBoolToObject(j, "truncated", s->truncated);
        cJSON *frames = cJSON_AddArrayToObject(j, "frames");
        for (int k = 0; k < s->nframes; k++)
            if (s->frames[k] >= 0 && s->frames[k] < r->nframes)
                cJSON_AddItemToArray(frames, frame_json(&r->frames[s->frames[k]]));
        cJSON_AddItemToArray(stacks, j);
    }
    cpu_top_free(&t);
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    return text;
}
