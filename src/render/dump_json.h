/* dump_json: a core dump's result as JSON, the fields of `diagtop dump --json` (docs/json.md), shared by the CLI
 * and the HTTP API's dump status. */
#ifndef DIAGTOP_DUMP_JSON_H
#define DIAGTOP_DUMP_JSON_H
#include <cjson/cJSON.h>

#include "actions/dump/dump.h"

/* Adds path, sizes, counts, the filter, durations, the mode and its reason, the pauses and the regions a fork
 * does not copy faithfully to o. */
void dump_json_add(cJSON *o, const struct dump_result *r);
#endif
