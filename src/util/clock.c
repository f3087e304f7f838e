#include "clock.h"

#include <errno.h>
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

void clock_sleep(double seconds, const volatile sig_atomic_t *stop)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (!(stop && *stop) && nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
}
