#include "clock.h"

#include <stdio.h>

double clock_monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void clock_format_iso8601(char *buf, size_t bufsz, time_t t)
{
    struct tm tm;
    if (!gmtime_r(&t, &tm) || strftime(buf, bufsz, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, bufsz, "%lld", (long long)t);
}
