/* clock: monotonic time for deltas and wall time for display. */
#ifndef DIAGTOP_CLOCK_H
#define DIAGTOP_CLOCK_H
#include <stddef.h>
#include <time.h>

double clock_monotonic_seconds(void);
/* Formats t (seconds since the epoch, with fraction dropped) as ISO 8601 UTC: 2026-12-02T15:49:35Z. */
void clock_format_iso8601(char *buf, size_t bufsz, time_t t);
#endif
