#include "json_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"

void json_add_u64(cJSON *obj, const char *name, unsigned long long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", v);
    cJSON_AddRawToObject(obj, name, buf);
}

void json_add_i64(cJSON *obj, const char *name, long long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", v);
    cJSON_AddRawToObject(obj, name, buf);
}

cJSON *json_fixed(double v, int decimals)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.*f", decimals, v);
    if (strcmp(buf, "-0.0") == 0 || strcmp(buf, "-0.00") == 0) memmove(buf, buf + 1, strlen(buf));
    return cJSON_CreateRaw(buf);
}

void json_add_fixed(cJSON *obj, const char *name, double v, int decimals)
{
    cJSON_AddItemToObject(obj, name, json_fixed(v, decimals));
}

void json_add_u64_or_null(cJSON *obj, const char *name, int known, unsigned long long v)
{
    if (known) json_add_u64(obj, name, v);
    else cJSON_AddNullToObject(obj, name);
}

void json_add_fixed_or_null(cJSON *obj, const char *name, int known, double v, int decimals)
{
    if (known) json_add_fixed(obj, name, v, decimals);
    else cJSON_AddNullToObject(obj, name);
}

void json_add_hex(cJSON *obj, const char *name, unsigned long long v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "0x%llx", v);
    cJSON_AddStringToObject(obj, name, buf);
}

void json_add_bytes(cJSON *obj, const char *name, const char *bytes, size_t len)
{
    if (!bytes) {
        cJSON_AddNullToObject(obj, name);
        return;
    }
    size_t cap = len * 3 + 1; /* every byte may become U+FFFD */
    char *clean = malloc(cap);
    if (!clean) {
        cJSON_AddNullToObject(obj, name);
        return;
    }
    text_sanitize_utf8(clean, cap, bytes, len);
    cJSON_AddStringToObject(obj, name, clean);
    free(clean);
}

void json_add_string_or_null(cJSON *obj, const char *name, const char *s)
{
    if (s) json_add_bytes(obj, name, s, strlen(s));
    else cJSON_AddNullToObject(obj, name);
}

char *json_merge(const char *doc, const char *name, const char *value)
{
    cJSON *d = cJSON_Parse(doc), *v = cJSON_Parse(value);
    char *text = NULL;
    if (cJSON_IsObject(d) && v) {
        cJSON_DeleteItemFromObjectCaseSensitive(d, name);
        cJSON_AddItemToObject(d, name, v);
        v = NULL;
        text = cJSON_PrintUnformatted(d);
    }
    cJSON_Delete(d);
    cJSON_Delete(v);
    return text;
}
