#include "watch_spec.h"

#include <stdio.h>
#include <string.h>

#include "util/text.h"

void watch_spec_defaults(struct watch_config *c)
{
    c->count = 1;
    c->every = 10;
    c->interval = 1;
}

static const struct {
    const char *key;
    enum watch_cond_kind kind;
} cond_keys[] = {
    {"cpu", WATCH_CPU},         {"cpu-below", WATCH_CPU_BELOW}, {"rss", WATCH_RSS}, {"rss-growth", WATCH_RSS_GROWTH},
    {"threads", WATCH_THREADS}, {"fds", WATCH_FDS},             {"signal", WATCH_SIGNAL}, {"exit", WATCH_EXIT},
};

/* The key without its dashes, '_' as '-' (a query's cpu_below is the option's --cpu-below). */
static void key_normal(char *out, size_t n, const char *key)
{
    while (*key == '-') key++;
    size_t i = 0;
    for (; key[i] && i + 1 < n; i++) out[i] = key[i] == '_' ? '-' : key[i];
    out[i] = '\0';
}

static int set_seconds(const char *key, const char *v, double *out, char *err, size_t errlen)
{
    if (text_parse_seconds(v, out) < 0 || *out < 0.1 || *out > 86400) {
        snprintf(err, errlen, "--%s: '%s' is not a number of seconds from 0.1 to 86400", key, v);
        return -1;
    }
    return 0;
}

/* text into buf, to cut up there; -1 with the reason too_long when it does not fit. */
static int copy_in(char *buf, size_t n, const char *text, const char *too_long, char *err, size_t errlen)
{
    if (strlen(text) >= n) {
        snprintf(err, errlen, "%s", too_long);
        return -1;
    }
    memcpy(buf, text, strlen(text) + 1);
    return 0;
}

/* then: each action of a comma list. */
static int set_actions(struct watch_config *c, const char *list, char *err, size_t errlen)
{
    char buf[1100];
    if (copy_in(buf, sizeof buf, list, "--then: too long", err, errlen) < 0) return -1;
    /* exec:COMMAND is the last of a list: its command may hold commas */
    char *p = buf;
    while (p) {
        char *comma = strncmp(p, "exec:", 5) ? strchr(p, ',') : NULL;
        if (comma) *comma = '\0';
        if (c->nactions == WATCH_ACTIONS_MAX) {
            snprintf(err, errlen, "--then: at most %d actions", WATCH_ACTIONS_MAX);
            return -1;
        }
        if (watch_action_parse(p, &c->actions[c->nactions], err, errlen) < 0) return -1;
        c->nactions++;
        p = comma ? comma + 1 : NULL;
    }
    return 0;
}

int watch_spec_set(struct watch_config *c, const char *key, const char *value, char *err, size_t errlen)
{
    char k[32];
    key_normal(k, sizeof k, key);
    const char *v = value ? value : "";
    for (size_t i = 0; i < sizeof cond_keys / sizeof cond_keys[0]; i++) {
        if (strcmp(k, cond_keys[i].key)) continue;
        if (c->nconds == WATCH_CONDS_MAX) {
            snprintf(err, errlen, "at most %d conditions", WATCH_CONDS_MAX);
            return -1;
        }
        if (watch_cond_parse(cond_keys[i].kind, v, &c->conds[c->nconds], err, errlen) < 0) return -1;
        c->nconds++;
        return 0;
    }
    if (!strcmp(k, "then")) return set_actions(c, v, err, errlen);
    if (!strcmp(k, "every")) return set_seconds(k, v, &c->every, err, errlen);
    if (!strcmp(k, "interval")) return set_seconds(k, v, &c->interval, err, errlen);
    if (!strcmp(k, "count")) {
        unsigned long long n;
        if (text_parse_u64(v, &n) < 0 || n == 0 || n > 100000) {
            snprintf(err, errlen, "--count: '%s' is not 1 to 100000", v);
            return -1;
        }
        c->count = (int)n;
        return 0;
    }
    if (!strcmp(k, "max-disk")) {
        if (watch_parse_size(v, &c->max_disk) < 0 || !c->max_disk) {
            snprintf(err, errlen, "--max-disk: '%s' is not a size", v);
            return -1;
        }
        return 0;
    }
    snprintf(err, errlen, "'%s' is not a word of a watch", key);
    return -2;
}

int watch_spec_parse(struct watch_config *c, const char *text, char *err, size_t errlen)
{
    char buf[1100];
    if (copy_in(buf, sizeof buf, text, "too long", err, errlen) < 0) return -1;
    char *save = NULL;
    for (char *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        char *value = strchr(w, '=');
        if (value) *value++ = '\0';
        char k[32];
        key_normal(k, sizeof k, w);
        if (!value && strcmp(k, "exit")) {
            /* exec:COMMAND takes the rest of the line, blanks and all */
            value = strtok_r(NULL, !strcmp(k, "then") && save && !strncmp(save, "exec:", 5) ? "" : " \t", &save);
            if (!value) {
                snprintf(err, errlen, "%s: a value is missing", w);
                return -1;
            }
        }
        if (watch_spec_set(c, w, value, err, errlen) < 0) return -1;
    }
    if (!c->nconds) {
        snprintf(err, errlen, "no condition: cpu, cpu-below, rss, rss-growth, threads or fds");
        return -1;
    }
    return 0;
}
