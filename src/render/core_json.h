/* core_json: a core's report as JSON (docs/json.md, "diagtop analyze CORE --json"). */
#ifndef DIAGTOP_CORE_JSON_H
#define DIAGTOP_CORE_JSON_H
#include "actions/offline/core_diff.h"
#include "actions/offline/core_report.h"

/* Returns a malloc'd JSON document, or NULL. */
char *core_json(const struct core_report *r, const char *path, int source);
/* Two cores' difference ("diagtop analyze OLD NEW --json"). */
char *core_json_diff(const struct core_diff *d, const char *old_path, const char *new_path, int source);
#endif
