/* json_util: cJSON helpers for exact integers (cJSON stores doubles) and for untrusted strings. */
#ifndef DIAGTOP_JSON_UTIL_H
#define DIAGTOP_JSON_UTIL_H
#include <cjson/cJSON.h>
#include <stddef.h>

void json_add_u64(cJSON *obj, const char *name, unsigned long long v);
void json_add_i64(cJSON *obj, const char *name, long long v);
/* An address or id as a string, "0x" and lowercase hex: a JSON number would lose its low bits past 2^53. */
void json_add_hex(cJSON *obj, const char *name, unsigned long long v);
/* A fixed-point number with the given decimals, printed exactly as formatted (an item, for arrays; and a member). */
cJSON *json_fixed(double v, int decimals);
void json_add_fixed(cJSON *obj, const char *name, double v, int decimals);
/* The same, or null when the value is not known. */
void json_add_u64_or_null(cJSON *obj, const char *name, int known, unsigned long long v);
void json_add_fixed_or_null(cJSON *obj, const char *name, int known, double v, int decimals);
/* Bytes of unknown encoding as a valid UTF-8 JSON string (invalid sequences become U+FFFD); NULL becomes null. */
void json_add_bytes(cJSON *obj, const char *name, const char *bytes, size_t len);
void json_add_string_or_null(cJSON *obj, const char *name, const char *s);
/* doc (a JSON object's text) with member name set to value (a JSON text); NULL when either does not parse or
 * memory runs out. For one document that joins what two renderers wrote. */
char *json_merge(const char *doc, const char *name, const char *value);
#endif
