/* monitor: one sampling of the machine for a front end: system totals, the process table and the ordered view,
 * with the costly per-row fields filled only for the rows a front end shows. */
#ifndef DIAGTOP_MONITOR_H
#define DIAGTOP_MONITOR_H
#include <stddef.h>

#include "collect/proctable.h"
#include "collect/systotals.h"
#include "collect/users.h"
#include "render/columns.h"
#include "render/procview.h"

struct monitor {
    struct proctable *table;
    struct systotals *sys;
    struct users *users;
    struct column_ctx ctx;
    struct procview view;
    struct task_counts counts;
};

int monitor_init(struct monitor *m, char *err, size_t errlen);
void monitor_destroy(struct monitor *m);
/* Samples everything and rebuilds the view for o. Returns 0 or -errno with a reason. */
int monitor_refresh(struct monitor *m, const struct procview_opts *o, char *err, size_t errlen);
/* Rebuilds the view from the last sample (after a sort or filter change, without re-reading /proc). */
int monitor_rebuild(struct monitor *m, const struct procview_opts *o);
/* Fills what the given columns need for view rows [first, first+count). */
void monitor_fill_rows(struct monitor *m, size_t first, size_t count, unsigned needs);
/* The PROC_NEED_* flags of a set of columns. */
unsigned monitor_needs_of(const enum column_id *cols, int ncols);
#endif
