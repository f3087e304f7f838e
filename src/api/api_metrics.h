/* api_metrics: GET /metrics, the Prometheus text exposition format (version 0.0.4) of one sampling: machine totals
 * (CPU, memory, swap, load, tasks, uptime) and, for the rows the caller chose (the top N by a column, or a filter),
 * per-process CPU seconds, CPU%, resident and virtual memory, threads, open descriptors and start time, labelled
 * with pid and comm. Values are the ones `diagtop -b --json` prints (CPU% and seconds with its decimals, bytes
 * exact). Label values are valid UTF-8 without control characters, with \ and " escaped. */
#ifndef DIAGTOP_API_METRICS_H
#define DIAGTOP_API_METRICS_H
#include <stddef.h>

#include "model/monitor.h"

/* The document for the first nrows rows of m->view (m's sample), as a malloc'd text in *out (length *len).
 * Returns 0 or -ENOMEM. */
int api_metrics_render(const struct monitor *m, size_t nrows, char **out, size_t *len);
/* The triggers' families (armed now; firings, captures and failed captures since the server started), appended to
 * the malloc'd document *out of length *len. Returns 0 or -ENOMEM (the document unchanged). */
int api_metrics_append_triggers(int armed, unsigned long long firings, unsigned long long captures,
                                unsigned long long failed, char **out, size_t *len);
/* Writes s as a label value (escaped, sanitized) into buf. Exposed for tests. */
void api_metrics_label(char *buf, size_t bufsz, const char *s, size_t n);
#endif
