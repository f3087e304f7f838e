#include "history_json.h"

#include <math.h>

#include "json_util.h"

/* A number with fixed decimals (cJSON's doubles print 17 digits), or null for an unknown one. */
static cJSON *fixed_or_null(double v, int decimals) { return isnan(v) ? cJSON_CreateNull() : json_fixed(v, decimals); }

char *history_json(int pid, const struct history_point *p, size_t n, double mono_now, double unix_now)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "pid", pid);
    cJSON_AddNumberToObject(o, "samples", (double)n);
    cJSON_AddNumberToObject(o, "kept_at_most", HISTORY_SLOTS);
    json_add_fixed_or_null(o, "interval_seconds", n > 1, n > 1 ? (p[n - 1].t - p[0].t) / (double)(n - 1) : 0, 2);
    cJSON *times = cJSON_AddArrayToObject(o, "time"); /* Unix seconds */
    for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(times, fixed_or_null(unix_now - (mono_now - p[i].t), 1));
    cJSON *fields = cJSON_AddObjectToObject(o, "fields");
    for (int f = 0; f < HIST_FIELDS; f++) {
        cJSON *a = cJSON_AddArrayToObject(fields, history_field_key((enum history_field)f));
        int decimals = f == HIST_CPU || f == HIST_WAIT ? 1 : 0;
        for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(a, fixed_or_null(p[i].v[f], decimals));
    }
    char *doc = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return doc;
}
