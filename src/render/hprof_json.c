/* hprof_json: the analysis of a heap dump as one JSON document. */
#include "hprof_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"

static cJSON *summary(const struct heap_summary *s)
{
    cJSON *o = cJSON_CreateObject();
    json_add_u64(o, "file_bytes", s->file_bytes);
    json_add_u64(o, "dump_bytes", s->dump_bytes);
    cJSON_AddBoolToObject(o, "gzipped", s->gzipped);
    json_add_u64(o, "id_size", s->id_size);
    cJSON_AddStringToObject(o, "layout", s->layout);
    json_add_u64(o, "layout_matched", s->layout_matched);
    json_add_u64(o, "layout_tried", s->layout_tried);
    json_add_u64(o, "timestamp_ms", s->timestamp_ms);
    json_add_u64(o, "objects", s->objects);
    json_add_u64(o, "classes", s->classes);
    json_add_u64(o, "roots", s->roots);
    json_add_u64(o, "shallow_bytes", s->shallow_bytes);
    json_add_u64(o, "reachable", s->reachable);
    json_add_u64(o, "reachable_bytes", s->reachable_bytes);
    json_add_u64(o, "weak_only", s->weak_only);
    json_add_u64(o, "weak_only_bytes", s->weak_only_bytes);
    json_add_u64(o, "index_bytes", s->index_bytes);
    return o;
}

static cJSON *histogram(const struct heap_class_row *r, size_t n, int retained)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        json_add_string_or_null(o, "class", r[i].name);
        json_add_u64(o, "count", r[i].count);
        json_add_u64(o, "shallow", r[i].shallow);
        if (retained) json_add_u64(o, "retained", r[i].retained);
        else cJSON_AddNullToObject(o, "retained");
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *objects(const struct heap_object_row *r, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        json_add_hex(o, "id", r[i].id);
        json_add_string_or_null(o, "class", r[i].class_name);
        cJSON_AddBoolToObject(o, "is_class", r[i].is_class);
        json_add_u64(o, "shallow", r[i].shallow);
        json_add_u64(o, "retained", r[i].retained);
        cJSON_AddBoolToObject(o, "reachable", r[i].reachable);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

/* One node and, below it, its children: nested objects, built with an explicit stack of (node, its JSON). */
static cJSON *path_node(const struct heap_path_node *nd)
{
    cJSON *o = cJSON_CreateObject();
    json_add_string_or_null(o, "step", nd->label);
    json_add_string_or_null(o, "class", nd->class_name);
    json_add_u64(o, "instances", nd->instances);
    json_add_u64(o, "retained", nd->retained);
    if (nd->single) {
        json_add_hex(o, "object", nd->object);
        json_add_u64(o, "object_retained", nd->object_retained);
    } else {
        cJSON_AddNullToObject(o, "object");
        cJSON_AddNullToObject(o, "object_retained");
    }
    cJSON_AddItemToObject(o, "children", cJSON_CreateArray());
    return o;
}

static cJSON *paths(const struct heap_paths *p)
{
    cJSON *o = cJSON_CreateObject();
    json_add_string_or_null(o, "of", p->what);
    json_add_u64(o, "asked", p->asked);
    json_add_u64(o, "reached", p->reached);
    json_add_u64(o, "weak_only", p->weak_only);
    json_add_u64(o, "retained", p->retained);
    cJSON *roots = cJSON_AddArrayToObject(o, "tree");
    cJSON **made = calloc(p->nnodes ? p->nnodes : 1, sizeof *made);
    if (!made) return o;
    /* nodes come parents first: each one's JSON goes into its parent's, made before it */
    for (size_t i = 0; i < p->nnodes; i++) {
        made[i] = path_node(&p->nodes[i]);
        uint32_t up = p->nodes[i].parent;
        cJSON_AddItemToArray(up == HEAP_NO_NODE ? roots : cJSON_GetObjectItem(made[up], "children"), made[i]);
    }
    cJSON *leaves = cJSON_AddArrayToObject(o, "paths");
    for (size_t i = 0; i < p->nnodes; i++) {
        if (p->nodes[i].first_child != HEAP_NO_NODE) continue;
        cJSON *l = cJSON_CreateObject();
        char *chain = heap_paths_chain(p, (uint32_t)i);
        json_add_string_or_null(l, "path", chain);
        free(chain);
        json_add_u64(l, "instances", p->nodes[i].instances);
        json_add_u64(l, "retained", p->nodes[i].retained);
        cJSON_AddItemToArray(leaves, l);
    }
    free(made);
    return o;
}

static cJSON *suspects(const struct heap_suspect *s, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        json_add_hex(o, "id", s[i].id);
        json_add_string_or_null(o, "class", s[i].class_name);
        json_add_u64(o, "retained", s[i].retained);
        json_add_string_or_null(o, "path", s[i].path);
        cJSON *acc = cJSON_AddObjectToObject(o, "accumulation");
        json_add_hex(acc, "id", s[i].accumulation_id);
        json_add_string_or_null(acc, "class", s[i].accumulation_class);
        json_add_u64(acc, "retained", s[i].accumulation_retained);
        json_add_u64(acc, "children", s[i].accumulation_children);
        json_add_string_or_null(acc, "children_class", s[i].children_class);
        json_add_u64(acc, "children_class_count", s[i].children_class_count);
        json_add_u64(acc, "children_class_retained", s[i].children_class_retained);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *fields(const struct heap_report *r)
{
    cJSON *o = objects(r->object, 1), *self = cJSON_DetachItemFromArray(o, 0);
    cJSON_Delete(o);
    cJSON *a = cJSON_AddArrayToObject(self, "fields");
    for (size_t i = 0; i < r->nfields; i++) {
        cJSON *f = cJSON_CreateObject();
        json_add_string_or_null(f, "name", r->fields[i].name);
        cJSON_AddStringToObject(f, "type", r->fields[i].type);
        json_add_string_or_null(f, "value", r->fields[i].value);
        if (r->fields[i].ref) json_add_hex(f, "ref", r->fields[i].ref);
        else cJSON_AddNullToObject(f, "ref");
        cJSON_AddItemToArray(a, f);
    }
    return self;
}

static cJSON *diff(const struct heap_diff_row *d, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        json_add_string_or_null(o, "class", d[i].name);
        json_add_u64(o, "count", d[i].count);
        json_add_i64(o, "delta_count", d[i].dcount);
        json_add_u64(o, "shallow", d[i].shallow);
        json_add_i64(o, "delta_shallow", d[i].dshallow);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

char *hprof_json_report(const struct heap_report *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    json_add_string_or_null(o, "file", r->path);
    cJSON_AddItemToObject(o, "summary", summary(&r->summary));
    if (r->histogram) cJSON_AddItemToObject(o, "histogram", histogram(r->histogram, r->nhistogram, r->summary.reachable > 0));
    if (r->dominators) cJSON_AddItemToObject(o, "dominators", objects(r->dominators, r->ndominators));
    if (r->instances_of) {
        cJSON *in = cJSON_AddObjectToObject(o, "instances");
        json_add_string_or_null(in, "class", r->instances_of);
        json_add_u64(in, "total", r->instances_total);
        cJSON_AddItemToObject(in, "objects", objects(r->instances, r->ninstances));
    }
    if (r->paths) cJSON_AddItemToObject(o, "paths", paths(r->paths));
    if (r->suspect_share > 0) {
        cJSON *s = cJSON_AddObjectToObject(o, "suspects");
        json_add_fixed(s, "share", r->suspect_share, 3);
        cJSON_AddItemToObject(s, "objects", suspects(r->suspects, r->nsuspects));
    }
    if (r->object) cJSON_AddItemToObject(o, "object", fields(r));
    if (r->diff) {
        cJSON *d = cJSON_AddObjectToObject(o, "diff");
        json_add_string_or_null(d, "older", r->diff_path);
        cJSON_AddItemToObject(d, "classes", diff(r->diff, r->ndiff));
    }
    char *doc = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return doc;
}
