#include "dump_json.h"

#include <stdio.h>
#include <string.h>

#include "json_util.h"

void dump_json_add(cJSON *o, const struct dump_result *r)
{
    json_add_string_or_null(o, "path", r->path);
    json_add_u64(o, "apparent_bytes", r->apparent_bytes);
    json_add_u64(o, "allocated_bytes", r->allocated_bytes);
    json_add_u64(o, "bytes_read", r->bytes_read);
    json_add_u64(o, "bytes_written", r->bytes_written);
    json_add_i64(o, "threads", r->threads);
    json_add_i64(o, "mappings_written", r->mappings_written);
    json_add_i64(o, "mappings_skipped", r->mappings_skipped);
    char f[16];
    snprintf(f, sizeof f, "0x%x", r->filter);
    cJSON_AddStringToObject(o, "coredump_filter", f);
    json_add_fixed(o, "duration_ms", r->total_ms, 1);
    json_add_fixed(o, "stopped_ms", r->stopped_ms, 1);
    cJSON_AddStringToObject(o, "mode", dump_mode_name(r->mode));
    json_add_string_or_null(o, "mode_reason", r->mode_reason[0] ? r->mode_reason : NULL);
    cJSON *pauses = cJSON_AddArrayToObject(o, "pauses_ms");
    for (int i = 0; i < r->npauses && i < (int)(sizeof r->pauses_ms / sizeof r->pauses_ms[0]); i++) {
        char ms[32];
        snprintf(ms, sizeof ms, "%.2f", r->pauses_ms[i]);
        cJSON_AddItemToArray(pauses, cJSON_CreateRaw(ms));
    }
    json_add_fixed(o, "pause_longest_ms", r->pause_longest_ms, 2);
    cJSON *regions = cJSON_AddArrayToObject(o, "unfaithful_regions");
    for (int i = 0; i < r->nregions && i < DUMP_REGIONS_MAX; i++) {
        const struct dump_region *g = &r->regions[i];
        cJSON *e = cJSON_CreateObject();
        json_add_hex(e, "start", g->start);
        json_add_hex(e, "end", g->end);
        json_add_u64(e, "bytes", g->bytes);
        json_add_bytes(e, "path", g->path, strnlen(g->path, sizeof g->path));
        cJSON_AddStringToObject(e, "kind", dump_region_kind_name(g->kind));
        cJSON_AddBoolToObject(e, "consistent", g->consistent);
        cJSON_AddItemToArray(regions, e);
    }
    json_add_i64(o, "unfaithful_regions_total", r->regions_total);
    json_add_string_or_null(o, "zombie", r->zombie[0] ? r->zombie : NULL);
}
