/* watch_rule: the conditions and actions of `diagtop watch` parsed, and evaluated on made-up samples. */
#include "check.h"
#include "model/watch_rule.h"

static void sizes_parse(void)
{
    unsigned long long b;
    CHECK_INT(watch_parse_size("512M", &b), 0);
    CHECK_INT(b, 512ull << 20);
    CHECK_INT(watch_parse_size("1.5GiB", &b), 0);
    CHECK_INT(b, 3ull << 29);
    CHECK_INT(watch_parse_size("100k", &b), 0);
    CHECK_INT(b, 102400);
    CHECK_INT(watch_parse_size("4096", &b), 0);
    CHECK_INT(b, 4096);
    CHECK_INT(watch_parse_size("", &b), -1);
    CHECK_INT(watch_parse_size("-1M", &b), -1);
    CHECK_INT(watch_parse_size("1X", &b), -1);
    CHECK_INT(watch_parse_size("1MM", &b), -1);
    CHECK_INT(watch_parse_size("99999999999T", &b), -1);
}

static void conditions_parse(void)
{
    struct watch_cond c;
    char err[256];
    CHECK_INT(watch_cond_parse(WATCH_CPU, "90:5", &c, err, sizeof err), 0);
    CHECK(c.limit == 90 && c.seconds == 5);
    CHECK_INT(watch_cond_parse(WATCH_CPU, "250%", &c, err, sizeof err), 0);
    CHECK(c.limit == 250 && c.seconds == 0);
    CHECK_INT(watch_cond_parse(WATCH_CPU_BELOW, "1:30", &c, err, sizeof err), 0);
    CHECK_INT(watch_cond_parse(WATCH_CPU, "%", &c, err, sizeof err), -1);
    CHECK_INT(watch_cond_parse(WATCH_CPU, "90:", &c, err, sizeof err), -1);
    CHECK_INT(watch_cond_parse(WATCH_CPU, "abc", &c, err, sizeof err), -1);
    CHECK(strstr(err, "--cpu") != NULL);
    CHECK_INT(watch_cond_parse(WATCH_RSS, "4G", &c, err, sizeof err), 0);
    CHECK(c.limit == 4294967296.0);
    CHECK_INT(watch_cond_parse(WATCH_RSS, "0", &c, err, sizeof err), -1);
    CHECK_INT(watch_cond_parse(WATCH_RSS_GROWTH, "10M/min", &c, err, sizeof err), 0);
    CHECK(c.limit == 10485760.0 && c.seconds == 60);
    CHECK_INT(watch_cond_parse(WATCH_RSS_GROWTH, "1G/min:600", &c, err, sizeof err), 0);
    CHECK(c.seconds == 600);
    CHECK_INT(watch_cond_parse(WATCH_RSS_GROWTH, "10M", &c, err, sizeof err), -1);
    CHECK_INT(watch_cond_parse(WATCH_RSS_GROWTH, "10M/s", &c, err, sizeof err), -1);
    CHECK_INT(watch_cond_parse(WATCH_RSS_GROWTH, "10M/min:1", &c, err, sizeof err), -1);
    CHECK_INT(watch_cond_parse(WATCH_THREADS, "100", &c, err, sizeof err), 0);
    CHECK_INT(watch_cond_parse(WATCH_FDS, "0", &c, err, sizeof err), -1);
    CHECK_INT(watch_cond_parse(WATCH_FDS, "1e3", &c, err, sizeof err), -1);
}

static void actions_parse(void)
{
    struct watch_action a;
    char err[256];
    CHECK_INT(watch_action_parse("dump", &a, err, sizeof err), 0);
    CHECK_INT(a.kind, WATCH_DO_DUMP);
    CHECK_INT(watch_action_parse("profile", &a, err, sizeof err), 0);
    CHECK(a.kind == WATCH_DO_PROFILE && a.seconds == 10);
    CHECK_INT(watch_action_parse("profile:2.5", &a, err, sizeof err), 0);
    CHECK(a.seconds == 2.5);
    CHECK_INT(watch_action_parse("profile:", &a, err, sizeof err), -1);
    CHECK_INT(watch_action_parse("profiles", &a, err, sizeof err), -1);
    CHECK_INT(watch_action_parse("exec:echo a,b; true", &a, err, sizeof err), 0);
    CHECK_STR(a.cmd, "echo a,b; true");
    CHECK_INT(watch_action_parse("exec:", &a, err, sizeof err), -1);
    CHECK_INT(watch_action_parse("heap", &a, err, sizeof err), 0);
    CHECK(a.kind == WATCH_DO_HEAP && !strcmp(watch_action_name(a.kind), "heap"));
    CHECK_STR(watch_action_name(WATCH_DO_EXEC), "exec");
    CHECK_INT(watch_action_parse("core", &a, err, sizeof err), -1);
    CHECK(strstr(err, "heap") != NULL);
}

static struct watch_sample cpu_sample(double t0, double t1, double pct)
{
    struct watch_sample s = {.t = t1, .interval_start = t0, .cpu_pct = pct, .fds = -1};
    return s;
}

/* "90% for 3 s" at a 1 s interval: the run starts where the first busy interval began, so it fires on the third
 * busy sample, not the fourth; an idle sample restarts the count. */
static void cpu_must_hold_its_seconds(void)
{
    struct watch_cond c = {.kind = WATCH_CPU, .limit = 90, .seconds = 3};
    struct watch_cond_state st = {-1};
    double v, held;
    struct watch_sample s = {.t = 0, .cpu_pct = -1};
    CHECK_INT(watch_cond_eval(&c, &st, &s, NULL, &v, &held), 0); /* the first sample has no interval */
    s = cpu_sample(0, 1, 95);
    CHECK_INT(watch_cond_eval(&c, &st, &s, NULL, &v, &held), 0);
    s = cpu_sample(1, 2, 99);
    CHECK_INT(watch_cond_eval(&c, &st, &s, NULL, &v, &held), 0);
    s = cpu_sample(2, 3, 50); /* a dip: starts over */
    CHECK_INT(watch_cond_eval(&c, &st, &s, NULL, &v, &held), 0);
    for (int i = 3; i < 5; i++) {
        s = cpu_sample(i, i + 1, 100);
        CHECK_INT(watch_cond_eval(&c, &st, &s, NULL, &v, &held), 0);
    }
    s = cpu_sample(5, 6, 100);
    CHECK_INT(watch_cond_eval(&c, &st, &s, NULL, &v, &held), 1);
    CHECK(held == 3 && v == 100);
    struct watch_cond below = {.kind = WATCH_CPU_BELOW, .limit = 5, .seconds = 0};
    struct watch_cond_state bst = {-1};
    s = cpu_sample(6, 7, 4.9);
    CHECK_INT(watch_cond_eval(&below, &bst, &s, NULL, &v, &held), 1);
    s = cpu_sample(7, 8, 5);
    CHECK_INT(watch_cond_eval(&below, &bst, &s, NULL, &v, &held), 0);
}

/* Growth is the least-squares slope over the window, and says nothing until the samples span it. */
static void growth_is_fitted_over_the_window(void)
{
    static struct watch_history h;
    double per_min;
    for (int i = 0; i <= 10; i++)
        watch_history_add(&h, 100.0 + i, (100ull << 20) + (unsigned long long)i * (1ull << 20) + (i % 2) * 4096);
    CHECK_INT(watch_history_growth(&h, 30, &per_min), -1); /* 10 s of a 30 s window */
    CHECK_INT(watch_history_growth(&h, 10, &per_min), 0);
    CHECK(per_min > 59.5 * 1048576 && per_min < 60.5 * 1048576);
    struct watch_cond c = {.kind = WATCH_RSS_GROWTH, .limit = 50.0 * 1048576, .seconds = 10};
    struct watch_cond_state st = {-1};
    struct watch_sample s = {.t = 110, .rss = 110ull << 20, .fds = -1};
    double v, held;
    CHECK_INT(watch_cond_eval(&c, &st, &s, &h, &v, &held), 1);
    c.limit = 70.0 * 1048576;
    CHECK_INT(watch_cond_eval(&c, &st, &s, &h, &v, &held), 0);
    /* A ring filled at a short interval: the window is cut to what it holds. */
    static struct watch_history full;
    for (int i = 0; i < WATCH_RING + 10; i++) watch_history_add(&full, i * 0.01, (unsigned long long)i * 1000);
    CHECK_INT(watch_history_growth(&full, 60, &per_min), 0);
    CHECK(per_min > 5.99e6 && per_min < 6.01e6);
}

static void counts_and_text(void)
{
    struct watch_cond c = {.kind = WATCH_FDS, .limit = 10, .seconds = 0};
    struct watch_cond_state st = {-1};
    struct watch_sample s = {.t = 1, .fds = -1, .threads = 50};
    double v, held;
    CHECK_INT(watch_cond_eval(&c, &st, &s, NULL, &v, &held), 0); /* unreadable: never holds */
    s.fds = 10;
    CHECK_INT(watch_cond_eval(&c, &st, &s, NULL, &v, &held), 1);
    struct watch_cond t = {.kind = WATCH_THREADS, .limit = 51, .seconds = 0};
    CHECK_INT(watch_cond_eval(&t, &st, &s, NULL, &v, &held), 0);
    CHECK_INT(watch_conds_need_fds(&t, 1), 0);
    CHECK_INT(watch_conds_need_fds(&c, 1), 1);
    char buf[96];
    struct watch_cond cpu = {.kind = WATCH_CPU, .limit = 90, .seconds = 5};
    watch_cond_describe(&cpu, buf, sizeof buf);
    CHECK_STR(buf, "cpu >= 90.0% for 5 s");
    struct watch_cond g = {.kind = WATCH_RSS_GROWTH, .limit = 10485760, .seconds = 60};
    watch_cond_describe(&g, buf, sizeof buf);
    CHECK_STR(buf, "rss-growth >= 10.0 MiB/min over 60 s");
}

int main(void)
{
    check_suite = "watch_rule";
    RUN(sizes_parse);
    RUN(conditions_parse);
    RUN(actions_parse);
    RUN(cpu_must_hold_its_seconds);
    RUN(growth_is_fitted_over_the_window);
    RUN(counts_and_text);
    CHECK_EXIT();
}
