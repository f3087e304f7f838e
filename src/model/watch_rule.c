#include "watch_rule.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/target/signal_trap.h"
#include "util/text.h"

static const char *const cond_names[WATCH_COND_KINDS] = {"cpu", "cpu-below", "rss", "rss-growth", "threads", "fds",
                                                          "signal", "exit"};

int watch_cond_is_trap(const struct watch_cond *c)
{
    return c->kind == WATCH_SIGNAL || c->kind == WATCH_EXIT;
}

const char *watch_cond_name(enum watch_cond_kind kind)
{
    return kind < WATCH_COND_KINDS ? cond_names[kind] : "?";
}

const char *watch_action_name(enum watch_action_kind kind)
{
    static const char *const names[] = {"dump", "stack", "profile", "heap", "exec"};
    return kind <= WATCH_DO_EXEC ? names[kind] : "?";
}

int watch_parse_size(const char *s, unsigned long long *bytes)
{
    char *end;
    if (!s || !*s || !(*s >= '0' && *s <= '9')) return -1;
    double v = strtod(s, &end);
    double mult = 1;
    switch (*end) {
    case 'k': case 'K': mult = 1024.0; end++; break;
    case 'm': case 'M': mult = 1048576.0; end++; break;
    case 'g': case 'G': mult = 1073741824.0; end++; break;
    case 't': case 'T': mult = 1099511627776.0; end++; break;
    default: break;
    }
    if (mult > 1 && *end == 'i') end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end || !isfinite(v) || v * mult >= 1.8e19) return -1;
    *bytes = (unsigned long long)(v * mult + 0.5);
    return 0;
}

/* "LIMIT[:SECONDS]" split at the last ':' (a size has none). */
static int split_seconds(const char *arg, char *limit, size_t n, double *seconds)
{
    const char *colon = strrchr(arg, ':');
    size_t len = colon ? (size_t)(colon - arg) : strlen(arg);
    if (len == 0 || len >= n) return -1;
    memcpy(limit, arg, len);
    limit[len] = 0;
    if (!colon) return 0;
    if (strcmp(colon + 1, "0") == 0) {
        *seconds = 0;
        return 0;
    }
    return text_parse_seconds(colon + 1, seconds) < 0 || *seconds > 86400 ? -1 : 0;
}

static int parse_percent(const char *s, double *pct)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s) return -1;
    if (*end == '%') end++;
    if (*end || !isfinite(v) || v < 0 || v > 100000) return -1;
    *pct = v;
    return 0;
}

static int parse_count(const char *s, double *n)
{
    unsigned long long v;
    if (text_parse_u64(s, &v) < 0 || v == 0 || v > 100000000) return -1;
    *n = (double)v;
    return 0;
}

int watch_cond_parse(enum watch_cond_kind kind, const char *arg, struct watch_cond *out, char *err, size_t errlen)
{
    char limit[64];
    unsigned long long bytes;
    memset(out, 0, sizeof *out);
    out->kind = kind;
    switch (kind) {
    case WATCH_CPU:
    case WATCH_CPU_BELOW:
        if (split_seconds(arg, limit, sizeof limit, &out->seconds) < 0 || parse_percent(limit, &out->limit) < 0) {
            snprintf(err, errlen, "--%s: '%s' is not PERCENT[:SECONDS] (90, 90:10, 250%%:5)", cond_names[kind], arg);
            return -1;
        }
        return 0;
    case WATCH_RSS:
        if (watch_parse_size(arg, &bytes) < 0 || bytes == 0) {
            snprintf(err, errlen, "--rss: '%s' is not a size (4G, 512M, 100K, bytes)", arg);
            return -1;
        }
        out->limit = (double)bytes;
        return 0;
    case WATCH_RSS_GROWTH: {
        out->seconds = 60;
        const char *slash = strchr(arg, '/');
        size_t len = slash ? (size_t)(slash - arg) : 0;
        if (slash && len < sizeof limit) {
            memcpy(limit, arg, len);
            limit[len] = 0;
        }
        double window = 60;
        if (!slash || len >= sizeof limit || watch_parse_size(limit, &bytes) < 0 || bytes == 0 ||
            strncmp(slash, "/min", 4) != 0 || (slash[4] && (slash[4] != ':' || text_parse_seconds(slash + 5,
            &window) < 0 || window < 2 || window > 86400))) {
            snprintf(err, errlen, "--rss-growth: '%s' is not SIZE/min[:SECONDS] (10M/min, 1G/min:600)", arg);
            return -1;
        }
        out->limit = (double)bytes;
        out->seconds = window;
        return 0;
    }
    case WATCH_THREADS:
    case WATCH_FDS:
        if (parse_count(arg, &out->limit) < 0) {
            snprintf(err, errlen, "--%s: '%s' is not a count from 1", cond_names[kind], arg);
            return -1;
        }
        return 0;
    case WATCH_SIGNAL:
        if (signal_trap_parse(arg, &out->signals) < 0) {
            snprintf(err, errlen, "--signal: '%s' is not a list of signals (SEGV,ABRT,BUS or numbers; not KILL, STOP)",
                     arg);
            return -1;
        }
        return 0;
    case WATCH_EXIT: return 0;
    default: snprintf(err, errlen, "unknown condition"); return -1;
    }
}

int watch_action_parse(const char *arg, struct watch_action *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (strcmp(arg, "dump") == 0) {
        out->kind = WATCH_DO_DUMP;
    } else if (strcmp(arg, "stack") == 0) {
        out->kind = WATCH_DO_STACK;
    } else if (strcmp(arg, "heap") == 0) {
        out->kind = WATCH_DO_HEAP;
    } else if (strncmp(arg, "profile", 7) == 0 && (!arg[7] || arg[7] == ':')) {
        out->kind = WATCH_DO_PROFILE;
        out->seconds = 10;
        if (arg[7] && (text_parse_seconds(arg + 8, &out->seconds) < 0 || out->seconds > 3600)) {
            snprintf(err, errlen, "--then: '%s': profile:SECONDS takes up to 3600 seconds", arg);
            return -1;
        }
    } else if (strncmp(arg, "exec:", 5) == 0 && arg[5]) {
        out->kind = WATCH_DO_EXEC;
        if (strlen(arg + 5) >= sizeof out->cmd) {
            snprintf(err, errlen, "--then exec: the command is longer than %zu bytes", sizeof out->cmd - 1);
            return -1;
        }
        strcpy(out->cmd, arg + 5);
    } else {
        snprintf(err, errlen, "--then: '%s' is not dump, stack, profile[:SECONDS], heap or exec:COMMAND", arg);
        return -1;
    }
    return 0;
}

int watch_conds_need_fds(const struct watch_cond *c, int n)
{
    for (int i = 0; i < n; i++)
        if (c[i].kind == WATCH_FDS) return 1;
    return 0;
}

void watch_history_add(struct watch_history *h, double t, unsigned long long rss)
{
    h->t[h->next] = t;
    h->rss[h->next] = (double)rss;
    h->next = (h->next + 1) % WATCH_RING;
    if (h->n < WATCH_RING) h->n++;
}

int watch_history_growth(const struct watch_history *h, double window, double *per_minute)
{
    if (h->n < 2) return -1;
    int newest = (h->next + WATCH_RING - 1) % WATCH_RING;
    double tn = h->t[newest];
    /* The samples inside the window, newest first; the fit needs them to span it (a window longer than the
     * ring at this interval is cut to what the ring holds). */
    double st = 0, sr = 0, stt = 0, str = 0, oldest = tn;
    int k = 0;
    for (int i = 0; i < h->n; i++) {
        int j = (newest + WATCH_RING - i) % WATCH_RING;
        double dt = h->t[j] - tn;
        if (-dt > window + 1e-6) break;
        st += dt;
        sr += h->rss[j];
        stt += dt * dt;
        str += dt * h->rss[j];
        oldest = h->t[j];
        k++;
    }
    int full = h->n == WATCH_RING && k == h->n;
    if (k < 2 || (tn - oldest < window * 0.95 && !full)) return -1;
    double den = k * stt - st * st;
    if (den <= 0) return -1;
    *per_minute = (k * str - st * sr) / den * 60.0;
    return 0;
}

/* Whether a CPU condition's run of samples has lasted long enough: the run starts where the first interval that
 * held began, so "90% for 5 s" fires on the sample that closes the fifth second. */
static int cpu_held(const struct watch_cond *c, struct watch_cond_state *st, const struct watch_sample *s, int holds,
                    double *held)
{
    if (s->cpu_pct < 0 || !holds) {
        st->since = -1;
        return 0;
    }
    if (st->since < 0) st->since = s->interval_start;
    *held = s->t - st->since;
    return *held + 0.05 >= c->seconds;
}

int watch_cond_eval(const struct watch_cond *c, struct watch_cond_state *st, const struct watch_sample *s,
                    const struct watch_history *h, double *value, double *held)
{
    *held = 0;
    switch (c->kind) {
    case WATCH_CPU: *value = s->cpu_pct; return cpu_held(c, st, s, s->cpu_pct >= c->limit, held);
    case WATCH_CPU_BELOW: *value = s->cpu_pct; return cpu_held(c, st, s, s->cpu_pct < c->limit, held);
    case WATCH_RSS: *value = (double)s->rss; return *value >= c->limit;
    case WATCH_RSS_GROWTH:
        if (watch_history_growth(h, c->seconds, value) < 0) return 0;
        *held = c->seconds;
        return *value >= c->limit;
    case WATCH_THREADS: *value = (double)s->threads; return *value >= c->limit;
    case WATCH_FDS: *value = (double)s->fds; return s->fds >= 0 && *value >= c->limit;
    default: return 0; /* a signal or an exit: the trap says when */
    }
}

void watch_cond_format_value(const struct watch_cond *c, double v, char *buf, size_t bufsz)
{
    char b[32];
    switch (c->kind) {
    case WATCH_CPU:
    case WATCH_CPU_BELOW: snprintf(buf, bufsz, "%.1f%%", v); break;
    case WATCH_RSS: text_format_bytes(buf, bufsz, (long long)v); break;
    case WATCH_SIGNAL: snprintf(buf, bufsz, "SIG%s", sigabbrev_np((int)v) ? sigabbrev_np((int)v) : "?"); break;
    case WATCH_EXIT: snprintf(buf, bufsz, "status %.0f", v); break;
    case WATCH_RSS_GROWTH:
        text_format_bytes(b, sizeof b, (long long)fabs(v));
        snprintf(buf, bufsz, "%s%s/min", v < 0 ? "-" : "", b);
        break;
    default: snprintf(buf, bufsz, "%.0f", v); break;
    }
}

void watch_cond_describe(const struct watch_cond *c, char *buf, size_t bufsz)
{
    char v[48];
    watch_cond_format_value(c, c->limit, v, sizeof v);
    switch (c->kind) {
    case WATCH_CPU:
    case WATCH_CPU_BELOW:
        if (c->seconds > 0) snprintf(buf, bufsz, "cpu %s %s for %g s", c->kind == WATCH_CPU ? ">=" : "<", v, c->seconds);
        else snprintf(buf, bufsz, "cpu %s %s", c->kind == WATCH_CPU ? ">=" : "<", v);
        break;
    case WATCH_RSS_GROWTH: snprintf(buf, bufsz, "rss-growth >= %s over %g s", v, c->seconds); break;
    case WATCH_SIGNAL: {
        size_t n = (size_t)snprintf(buf, bufsz, "signal");
        for (int sig = 1; sig <= 64 && n < bufsz; sig++)
            if (c->signals >> (sig - 1) & 1)
                n += (size_t)snprintf(buf + n, bufsz - n, "%s%s", n == 6 ? " " : ",", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
        break;
    }
    case WATCH_EXIT: snprintf(buf, bufsz, "exit"); break;
    default: snprintf(buf, bufsz, "%s >= %s", cond_names[c->kind], v); break;
    }
}
