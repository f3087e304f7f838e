/* heap_report: one set of questions (the CLI's options, a pane's choice) answered from an open dump into the
 * report the renderers take, so that every front end asks the same way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap_analysis.h"

int heap_report_build(struct heap_analysis *a, const struct heap_query *q, struct heap_report *r, char *err,
                      size_t errlen)
{
    memset(r, 0, sizeof *r);
    int plain = !q->cls && !q->paths && !q->object && !q->diff && q->share <= 0;
    if ((plain || q->histogram || q->diff) && heap_analysis_histogram(a, &r->histogram, &r->nhistogram) < 0) goto nomem;
    if (plain && heap_analysis_dominators(a, 20, &r->dominators, &r->ndominators) < 0) goto nomem;
    if (q->cls) {
        if (heap_analysis_instances(a, q->cls, q->count ? q->count : 20, &r->instances, &r->ninstances,
                                    &r->instances_total, err, errlen) < 0)
            goto fail;
        r->instances_of = r->ninstances ? r->instances[0].class_name : q->cls;
    }
    if (q->paths) {
        if (heap_analysis_paths(a, q->paths, q->count ? q->count : SIZE_MAX, &r->paths_store, err, errlen) < 0)
            goto fail;
        r->paths = &r->paths_store;
    }
    if (q->share > 0) {
        if (heap_analysis_suspects(a, q->share, &r->suspects, &r->nsuspects) < 0) goto nomem;
        r->suspect_share = q->share;
    }
    if (q->object) {
        if (heap_analysis_fields(a, q->object, q->count ? q->count : 100, &r->fields, &r->nfields, &r->object_store,
                                 err, errlen) < 0)
            goto fail;
        r->object = &r->object_store;
    }
    if (q->diff) {
        struct heap_analysis_opts oo = q->diff_opts ? *q->diff_opts : (struct heap_analysis_opts){0};
        oo.histogram_only = 1;
        size_t nold;
        char e2[600];
        if (heap_analysis_open(&r->older, q->diff, &oo, e2, sizeof e2) < 0) {
            snprintf(err, errlen, "--diff: %s", e2);
            goto fail;
        }
        if (heap_analysis_histogram(r->older, &r->old_histogram, &nold) < 0 ||
            heap_histogram_diff(r->histogram, r->nhistogram, r->old_histogram, nold, &r->diff, &r->ndiff) < 0)
            goto nomem;
        r->diff_path = q->diff;
        if (!plain && !q->histogram) { /* asked for the diff, not the histogram itself */
            free(r->histogram);
            r->histogram = NULL;
            r->nhistogram = 0;
        }
    }
    heap_analysis_summary(a, &r->summary);
    return 0;
nomem:
    snprintf(err, errlen, "out of memory");
fail:
    heap_report_free(r);
    return -1;
}

void heap_report_free(struct heap_report *r)
{
    free(r->histogram);
    free(r->old_histogram);
    free(r->dominators);
    free(r->instances);
    heap_paths_free(&r->paths_store);
    heap_suspects_free(r->suspects, r->nsuspects);
    heap_fields_free(r->fields, r->nfields);
    free(r->diff);
    heap_analysis_close(r->older);
    memset(r, 0, sizeof *r);
}
