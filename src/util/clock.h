/* clock: monotonic time for deltas and wall time for display. */
#ifndef DIAGTOP_CLOCK_H
#define DIAGTOP_CLOCK_H
#include <signal.h>
#include <stddef.h>
#include <time.h>

double clock_monotonic_seconds(void);
/* Sleeps for seconds, through signal interruptions, unless *stop (when not NULL) becomes set. */
void clock_sleep(double seconds, const volatile sig_atomic_t *stop);
/* Formats t (seconds since the epoch, with fraction dropped) as ISO 8601 UTC: 2026-12-02T15:49:35Z. */
void clock_format_iso8601(char *buf, size_t bufsz, time_t t);
#endif
