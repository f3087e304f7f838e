/* history_json: a process's history as one JSON document, in columns (one array a field, null where a sample did
 * not read it), for GET /api/processes/{pid}/history and the explorer's charts. */
#ifndef DIAGTOP_HISTORY_JSON_H
#define DIAGTOP_HISTORY_JSON_H
#include <stddef.h>

#include "collect/history.h"

/* points p[0..n) (monotonic times) with their Unix times, given the two clocks read at one moment. Returns a
 * malloc'ed document or NULL (out of memory). */
char *history_json(int pid, const struct history_point *p, size_t n, double mono_now, double unix_now);
#endif
