/* watch_spec: a watch's words from an option, a query key or the monitor's form, into one watch_config. */
#include "check.h"
#include "model/watch_spec.h"

static void keys_of_every_spelling(void)
{
    struct watch_config c = {0};
    char err[256];
    watch_spec_defaults(&c);
    CHECK(c.count == 1 && c.every == 10 && c.interval == 1 && !c.nconds && !c.nactions);
    CHECK_INT(watch_spec_set(&c, "--cpu", "90:5", err, sizeof err), 0);
    CHECK_INT(watch_spec_set(&c, "rss_growth", "10M/min", err, sizeof err), 0); /* a query's spelling */
    CHECK_INT(watch_spec_set(&c, "cpu-below", "1", err, sizeof err), 0);
    CHECK_INT(c.nconds, 3);
    CHECK(c.conds[0].kind == WATCH_CPU && c.conds[0].limit == 90 && c.conds[0].seconds == 5);
    CHECK_INT(c.conds[1].kind, WATCH_RSS_GROWTH);
    CHECK_INT(c.conds[2].kind, WATCH_CPU_BELOW);
    CHECK_INT(watch_spec_set(&c, "then", "stack,profile:2", err, sizeof err), 0);
    CHECK(c.nactions == 2 && c.actions[0].kind == WATCH_DO_STACK && c.actions[1].seconds == 2);
    CHECK_INT(watch_spec_set(&c, "count", "3", err, sizeof err), 0);
    CHECK_INT(watch_spec_set(&c, "every", "2.5", err, sizeof err), 0);
    CHECK_INT(watch_spec_set(&c, "max_disk", "1G", err, sizeof err), 0);
    CHECK(c.count == 3 && c.every == 2.5 && c.max_disk == 1ull << 30);
    CHECK_INT(watch_spec_set(&c, "exit", NULL, err, sizeof err), 0);
    CHECK_INT(c.conds[3].kind, WATCH_EXIT);
}

static void reasons_for_bad_values(void)
{
    struct watch_config c = {0};
    char err[256];
    watch_spec_defaults(&c);
    CHECK_INT(watch_spec_set(&c, "count", "0", err, sizeof err), -1);
    CHECK(strstr(err, "--count") != NULL);
    CHECK_INT(watch_spec_set(&c, "interval", "0.01", err, sizeof err), -1);
    CHECK(strstr(err, "--interval") != NULL);
    CHECK_INT(watch_spec_set(&c, "max-disk", "lots", err, sizeof err), -1);
    CHECK_INT(watch_spec_set(&c, "then", "core", err, sizeof err), -1);
    CHECK_INT(watch_spec_set(&c, "pid", "1", err, sizeof err), -2); /* the caller's own key */
    CHECK(strstr(err, "'pid'") != NULL);
    CHECK_INT(watch_spec_set(&c, "then", "dump,dump,dump,dump,dump,dump,dump,dump,dump", err, sizeof err), -1);
    CHECK(strstr(err, "at most") != NULL);
    for (int i = 0; i < WATCH_CONDS_MAX; i++) CHECK_INT(watch_spec_set(&c, "threads", "10", err, sizeof err), 0);
    CHECK_INT(watch_spec_set(&c, "threads", "10", err, sizeof err), -1);
    CHECK(strstr(err, "at most") != NULL);
}

static void the_forms_text(void)
{
    struct watch_config c = {0};
    char err[256];
    watch_spec_defaults(&c);
    CHECK_INT(watch_spec_parse(&c, "cpu 90:5 then dump count 1", err, sizeof err), 0);
    CHECK(c.nconds == 1 && c.conds[0].limit == 90 && c.nactions == 1 && c.actions[0].kind == WATCH_DO_DUMP);
    struct watch_config d = {0};
    watch_spec_defaults(&d);
    CHECK_INT(watch_spec_parse(&d, "  rss=2G\tthreads 500 every=30 then heap,stack  ", err, sizeof err), 0);
    CHECK(d.nconds == 2 && d.conds[0].limit == 2.0 * (1ull << 30) && d.conds[1].limit == 500);
    CHECK(d.every == 30 && d.nactions == 2 && d.actions[0].kind == WATCH_DO_HEAP);
    /* exec takes the rest of the line, blanks and all */
    struct watch_config e = {0};
    watch_spec_defaults(&e);
    CHECK_INT(watch_spec_parse(&e, "exit then exec:echo gone >> /tmp/x, now", err, sizeof err), 0);
    CHECK(e.nconds == 1 && e.conds[0].kind == WATCH_EXIT);
    CHECK(e.nactions == 1 && e.actions[0].kind == WATCH_DO_EXEC);
    CHECK_STR(e.actions[0].cmd, "echo gone >> /tmp/x, now");
}

static void the_forms_mistakes(void)
{
    struct watch_config c = {0};
    char err[256];
    watch_spec_defaults(&c);
    CHECK_INT(watch_spec_parse(&c, "then dump count 2", err, sizeof err), -1);
    CHECK(strstr(err, "no condition") != NULL);
    struct watch_config d = {0};
    CHECK_INT(watch_spec_parse(&d, "cpu", err, sizeof err), -1);
    CHECK_STR(err, "cpu: a value is missing");
    struct watch_config e = {0};
    CHECK_INT(watch_spec_parse(&e, "cpu 90 when 3", err, sizeof err), -1);
    CHECK(strstr(err, "'when'") != NULL);
    struct watch_config f = {0};
    CHECK_INT(watch_spec_parse(&f, "", err, sizeof err), -1);
    char huge[2000];
    memset(huge, 'a', sizeof huge - 1);
    huge[sizeof huge - 1] = '\0';
    CHECK_INT(watch_spec_parse(&f, huge, err, sizeof err), -1);
}

int main(void)
{
    check_suite = "watch_spec";
    RUN(keys_of_every_spelling);
    RUN(reasons_for_bad_values);
    RUN(the_forms_text);
    RUN(the_forms_mistakes);
    CHECK_EXIT();
}
