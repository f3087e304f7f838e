/* snapshot_json: one monitor iteration as a JSON document (the schema is in docs/json.md). */
#ifndef DIAGTOP_SNAPSHOT_JSON_H
#define DIAGTOP_SNAPSHOT_JSON_H
#include "collect/proctable.h"
#include "collect/systotals.h"
#include "procview.h"

/* Returns a malloc'd, single-line JSON document, or NULL on allocation failure. interval: the seconds CPU% was
 * measured over. */
char *snapshot_json(const struct systotals *st, const struct task_counts *tc, const struct procview *v,
                    const struct column_ctx *ctx, double interval);
#endif
