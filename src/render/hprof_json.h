/* hprof_json: a heap dump's analysis as one JSON document (docs/json.md, "diagtop analyze"): exact integers,
 * names from the file made valid UTF-8. */
#ifndef DIAGTOP_HPROF_JSON_H
#define DIAGTOP_HPROF_JSON_H
#include "actions/offline/heap_analysis.h"

/* A malloc'd document (one line), or NULL when out of memory. */
char *hprof_json_report(const struct heap_report *r);
#endif
