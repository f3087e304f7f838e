#include "header_text.h"

#include <time.h>

void header_format_uptime(char *buf, size_t bufsz, double seconds)
{
    long s = (long)seconds;
    long days = s / 86400, h = (s / 3600) % 24, m = (s / 60) % 60, sec = s % 60;
    if (days > 0) snprintf(buf, bufsz, "%ld day%s, %02ld:%02ld:%02ld", days, days == 1 ? "" : "s", h, m, sec);
    else snprintf(buf, bufsz, "%02ld:%02ld:%02ld", h, m, sec);
}

size_t header_format_pressure(char *buf, size_t bufsz, const struct systotals *st)
{
    const struct pressure *c = &st->pressure[PRESSURE_CPU], *io = &st->pressure[PRESSURE_IO],
                          *mem = &st->pressure[PRESSURE_MEMORY];
    if (bufsz) buf[0] = '\0';
    if (!c->known && !io->known && !mem->known) return 0;
    /* system-wide "full" CPU pressure carries no meaning (some task always runs): cpu shows "some" alone */
    int n = snprintf(buf, bufsz, "cpu %.1f io %.1f/%.1f mem %.1f/%.1f", c->some[0], io->some[0], io->full[0],
                     mem->some[0], mem->full[0]);
    return n < 0 ? 0 : (size_t)n;
}

static double mib(unsigned long long bytes) { return (double)bytes / (1024.0 * 1024.0); }

void header_text_write(FILE *out, const struct systotals *st, const struct task_counts *tc)
{
    char up[64], now[16];
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(now, sizeof now, "%H:%M:%S", &tm);
    header_format_uptime(up, sizeof up, st->uptime_seconds);
    fprintf(out, "diagtop - %s up %s, load average: %.2f, %.2f, %.2f\n", now, up, st->load[0], st->load[1],
            st->load[2]);
    fprintf(out, "Tasks: %d total, %d running, %d sleeping, %d stopped, %d zombie\n", tc->total, tc->running,
            tc->sleeping, tc->stopped, tc->zombie);
    const struct cpu_usage *u = &st->total;
    fprintf(out, "%%Cpu(s): %5.1f us, %5.1f sy, %5.1f wa, %5.1f st, %5.1f id\n", u->user, u->system, u->iowait,
            u->steal, u->idle);
    const struct mem_totals *m = &st->mem;
    fprintf(out, "MiB Mem : %9.1f total, %9.1f free, %9.1f used, %9.1f buff/cache, %9.1f avail\n", mib(m->total),
            mib(m->free), mib(m->used), mib(m->buffers + m->cached), mib(m->available));
    fprintf(out, "MiB Swap: %9.1f total, %9.1f free, %9.1f used\n", mib(m->swap_total), mib(m->swap_free),
            mib(m->swap_used));
    char psi[128];
    if (header_format_pressure(psi, sizeof psi, st)) fprintf(out, "Pressure: %s (avg10 %%, some/full)\n", psi);
}
