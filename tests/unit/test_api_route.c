/* The HTTP API's route table and parsers (api_route, api_range, api_id): every route maps onto its handler, every
 * row of the table has one and is reached, hostile paths are refused with the right status, and a mutation fuzzer
 * (deterministic, a few hundred thousand inputs under ASan/UBSan) checks that whatever the bytes, the parser
 * answers with a known status and a route it accepts is exactly its pattern with a valid pid or id in the
 * placeholders, and a handler. */
#include <stdint.h>

#include "check.h"
#include "api/api_actions.h"
#include "api/api_downloads.h"
#include "api/api_id.h"
#include "api/api_page.h"
#include "api/api_processes.h"
#include "api/api_range.h"
#include "api/api_trigger_routes.h"
#include "api/api_route.h"
#include "util/text.h"

#define ID_TEXT "0123456789abcdef0123456789abcdef"
static const char *ID = ID_TEXT;

static int parse(const char *method, const char *path, struct api_route *r)
{
    char allow[64], err[128];
    return api_route_parse(method, path, r, allow, sizeof allow, err, sizeof err);
}

static void every_route_maps(void)
{
    static const struct {
        const char *method, *path;
        api_handler *handle;
        enum api_scope scope;
        int pid;
    } cases[] = {
        {"GET", "/", api_page_serve_html, API_SCOPE_READ, 0},
        {"GET", "/explorer.js", api_page_serve_js, API_SCOPE_READ, 0},
        {"GET", "/explorer.css", api_page_serve_css, API_SCOPE_READ, 0},
        {"GET", "/healthz", api_processes_healthz, API_SCOPE_READ, 0},
        {"HEAD", "/healthz", api_processes_healthz, API_SCOPE_READ, 0},
        {"GET", "/metrics", api_processes_metrics, API_SCOPE_READ, 0},
        {"GET", "/api/processes", api_processes_list, API_SCOPE_READ, 0},
        {"GET", "/api/processes/1", api_processes_details, API_SCOPE_READ, 1},
        {"HEAD", "/api/processes/1", api_processes_details, API_SCOPE_READ, 1},
        {"DELETE", "/api/processes/42", api_processes_signal, API_SCOPE_ADMIN, 42},
        {"GET", "/api/processes/4194304/threads", api_processes_threads, API_SCOPE_READ, 4194304},
        {"GET", "/api/processes/7/modules", api_processes_modules, API_SCOPE_READ, 7},
        {"GET", "/api/processes/7/fds", api_processes_fds, API_SCOPE_READ, 7},
        {"GET", "/api/processes/7/environment", api_processes_environment, API_SCOPE_READ, 7},
        {"GET", "/api/processes/7/history", api_processes_history, API_SCOPE_READ, 7},
        {"GET", "/api/processes/7/stack", api_actions_stack, API_SCOPE_READ, 7},
        {"GET", "/api/processes/7/memstats", api_actions_memstats, API_SCOPE_READ, 7},
        {"GET", "/api/processes/7/heap", api_actions_heap, API_SCOPE_READ, 7},
        {"POST", "/api/processes/7/gc", api_actions_gc, API_SCOPE_ADMIN, 7},
        {"POST", "/api/processes/7/profile", api_actions_profile, API_SCOPE_ADMIN, 7},
        {"POST", "/api/processes/7/dump", api_actions_dump, API_SCOPE_ADMIN, 7},
        {"GET", "/api/dumps", api_downloads_list, API_SCOPE_ADMIN, 0},
        {"GET", "/api/dumps/" ID_TEXT, api_downloads_file, API_SCOPE_ADMIN, 0},
        {"HEAD", "/api/dumps/" ID_TEXT, api_downloads_file, API_SCOPE_ADMIN, 0},
        {"DELETE", "/api/dumps/" ID_TEXT, api_downloads_delete, API_SCOPE_ADMIN, 0},
        {"GET", "/api/dumps/" ID_TEXT "/status", api_downloads_status, API_SCOPE_ADMIN, 0},
        {"POST", "/api/dumps/" ID_TEXT "/analyze", api_downloads_analyze, API_SCOPE_ADMIN, 0},
        {"POST", "/api/triggers", api_trigger_routes_arm, API_SCOPE_ADMIN, 0},
        {"GET", "/api/triggers", api_trigger_routes_list, API_SCOPE_READ, 0},
        {"GET", "/api/triggers/" ID_TEXT, api_trigger_routes_get, API_SCOPE_READ, 0},
        {"DELETE", "/api/triggers/" ID_TEXT, api_trigger_routes_disarm, API_SCOPE_ADMIN, 0},
    };
    size_t nrows;
    const struct api_route_def *rows = api_route_table(&nrows);
    int reached[64] = {0};
    CHECK(nrows <= sizeof reached / sizeof reached[0]);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct api_route r;
        int st = parse(cases[i].method, cases[i].path, &r);
        if (st || r.handle != cases[i].handle) printf("  %s %s\n", cases[i].method, cases[i].path);
        CHECK_INT(st, 0);
        CHECK(r.handle == cases[i].handle);
        CHECK_INT(r.scope, cases[i].scope);
        CHECK_INT(r.pid, cases[i].pid);
        for (size_t k = 0; k < nrows && k < sizeof reached / sizeof reached[0]; k++)
            if (rows[k].handle == r.handle && rows[k].pattern == r.pattern) reached[k] = 1;
    }
    /* The cases cover the whole table: a new row needs its case here. */
    for (size_t k = 0; k < nrows && k < sizeof reached / sizeof reached[0]; k++) {
        if (!reached[k]) printf("  no case for %s\n", rows[k].pattern);
        CHECK(reached[k]);
    }
    struct api_route r;
    CHECK_INT(parse("GET", "/api/dumps/" ID_TEXT "/status", &r), 0);
    CHECK_STR(r.rid, ID);
}

/* A path that fits the pattern: 7 for {pid}, ID for {id}. */
static void fill_pattern(const char *pattern, char *path, size_t n)
{
    size_t o = 0;
    for (const char *p = pattern; *p && o + API_ID_LEN + 1 < n;) {
        const char *with = !strncmp(p, "{pid}", 5) ? "7" : !strncmp(p, "{id}", 4) ? ID : NULL;
        if (with) {
            o += (size_t)snprintf(path + o, n - o, "%s", with);
            p = strchr(p, '}') + 1;
        } else {
            path[o++] = *p++;
        }
    }
    path[o] = '\0';
}

/* Every row answers with a function, needs a scope, takes a method, and is reached by its own pattern (none is
 * hidden behind an earlier row). */
static void every_row_has_a_handler(void)
{
    size_t n;
    const struct api_route_def *rows = api_route_table(&n);
    CHECK(n > 0);
    for (size_t i = 0; i < n; i++) {
        const struct api_route_def *d = &rows[i];
        if (!d->handle || d->scope == API_SCOPE_NONE || !d->methods || d->pattern[0] != '/' || !d->params)
            printf("  row %zu: %s\n", i, d->pattern);
        CHECK(d->handle != NULL);
        CHECK(d->scope != API_SCOPE_NONE);
        CHECK(d->methods != 0);
        CHECK(d->pattern[0] == '/' && d->params != NULL);
        char path[API_PATH_MAX];
        fill_pattern(d->pattern, path, sizeof path);
        static const char *const names[] = {"GET", "HEAD", "POST", "DELETE"};
        for (int b = 0; b < 4; b++) {
            if (!(d->methods & (1u << b))) continue;
            struct api_route r;
            CHECK_INT(parse(names[b], path, &r), 0);
            CHECK(r.handle == d->handle && r.pattern == d->pattern && r.scope == d->scope);
            CHECK_INT((int)r.method, (int)(1u << b));
        }
    }
}

static void hostile_paths_are_refused(void)
{
    static const struct {
        const char *method, *path;
        int status;
    } cases[] = {
        {"GET", "/api/processes/abc", 400},
        {"GET", "/api/processes/0", 400},
        {"GET", "/api/processes/-1", 400},
        {"GET", "/api/processes/+1", 400},
        {"GET", "/api/processes/01", 400},
        {"GET", "/api/processes/4194305", 400},
        {"GET", "/api/processes/99999999999999999999999", 400},
        {"GET", "/api/processes/1/../../etc/passwd", 400},
        {"GET", "/api/dumps/../../etc/shadow", 400},
        {"GET", "/api/processes/./1", 400},
        {"GET", "/api/processes/1%2f", 400},
        {"GET", "/api/processes/1 ", 400},
        {"GET", "/api/processes/1\n", 400},
        {"GET", "api/processes", 400},
        {"GET", "", 400},
        {"GET", "//api/processes", 404},
        {"GET", "/api//processes", 404},
        {"GET", "/api/processes/", 404},
        {"GET", "/api/processes/1/nothing", 404},
        {"GET", "/etc/passwd", 404},
        {"GET", "/api/dumps/0123", 404},
        {"GET", "/api/dumps/0123456789ABCDEF0123456789ABCDEF", 404},
        {"GET", "/a/b/c/d/e/f/g/h/i/j", 404},
        {"POST", "/api/processes", 405},
        {"GET", "/api/processes/1/dump", 405},
        {"POST", "/api/processes/1/stack", 405},
        {"GET", "/api/processes/1/gc", 405},
        {"PUT", "/api/processes/1", 501},
        {"get", "/healthz", 501},
        {"OPTIONS", "/", 501},
        {"TRACE", "/", 501},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct api_route r;
        int st = parse(cases[i].method, cases[i].path, &r);
        if (st != cases[i].status) printf("  %s %s\n", cases[i].method, cases[i].path);
        CHECK_INT(st, cases[i].status);
    }
    char longpath[1024];
    memset(longpath, 'a', sizeof longpath - 1);
    longpath[0] = '/';
    longpath[sizeof longpath - 1] = '\0';
    struct api_route r;
    CHECK_INT(parse("GET", longpath, &r), 414);
    char allow[64], err[128];
    CHECK_INT(api_route_parse("POST", "/api/processes/5", &r, allow, sizeof allow, err, sizeof err), 405);
    CHECK_STR(allow, "GET, HEAD, DELETE");
    CHECK_INT(api_route_parse("GET", "/api/processes/x1", &r, allow, sizeof allow, err, sizeof err), 400);
    CHECK_STR(err, "'x1' is not a process id");
}

static void parameters_are_per_route_and_strict(void)
{
    struct api_route r;
    CHECK_INT(parse("DELETE", "/api/processes/9", &r), 0);
    CHECK(api_route_takes(&r, "signal"));
    CHECK(!api_route_takes(&r, "sig"));
    CHECK(!api_route_takes(&r, "signa"));
    CHECK(!api_route_takes(&r, ""));
    CHECK_INT(parse("GET", "/api/processes", &r), 0);
    CHECK(api_route_takes(&r, "limit") && api_route_takes(&r, "filter") && !api_route_takes(&r, "signal"));
    long v;
    CHECK(api_param_long("15", 1, 64, &v) == 0 && v == 15);
    CHECK(api_param_long("0", 0, 64, &v) == 0 && v == 0);
    CHECK(api_param_long("-1", -1, 64, &v) == 0 && v == -1);
    CHECK(api_param_long("-1", 0, 64, &v) < 0);
    CHECK(api_param_long("65", 1, 64, &v) < 0);
    CHECK(api_param_long("015", 1, 64, &v) < 0);
    CHECK(api_param_long("1e3", 1, 5000, &v) < 0);
    CHECK(api_param_long(" 1", 1, 5000, &v) < 0);
    CHECK(api_param_long("", 0, 5000, &v) < 0);
    CHECK(api_param_long(NULL, 0, 5000, &v) < 0);
    CHECK(api_param_long("99999999999999999999999999", 0, 5000, &v) < 0);
    int b;
    CHECK(api_param_bool("", &b) == 0 && b == 1);
    CHECK(api_param_bool("true", &b) == 0 && b == 1);
    CHECK(api_param_bool("0", &b) == 0 && b == 0);
    CHECK(api_param_bool("maybe", &b) < 0);
    CHECK(api_param_bool(NULL, &b) < 0);
    double s;
    CHECK(api_param_seconds("2.5", 300, &s) == 0 && s == 2.5);
    CHECK(api_param_seconds("0", 300, &s) < 0);
    CHECK(api_param_seconds("301", 300, &s) < 0);
    CHECK(api_param_seconds("nan", 300, &s) < 0);
    CHECK(api_param_seconds("1e2", 300, &s) < 0);
    CHECK(api_param_seconds("-3", 300, &s) < 0);
}

static void ranges(void)
{
    uint64_t st, len;
    CHECK_INT(api_range_parse(NULL, 100, &st, &len), API_RANGE_WHOLE);
    CHECK(st == 0 && len == 100);
    CHECK_INT(api_range_parse("bytes=10-19", 100, &st, &len), API_RANGE_PART);
    CHECK(st == 10 && len == 10);
    CHECK_INT(api_range_parse("bytes=90-", 100, &st, &len), API_RANGE_PART);
    CHECK(st == 90 && len == 10);
    CHECK_INT(api_range_parse("bytes=90-1000", 100, &st, &len), API_RANGE_PART);
    CHECK(st == 90 && len == 10);
    CHECK_INT(api_range_parse("bytes=-30", 100, &st, &len), API_RANGE_PART);
    CHECK(st == 70 && len == 30);
    CHECK_INT(api_range_parse("bytes=-300", 100, &st, &len), API_RANGE_PART);
    CHECK(st == 0 && len == 100);
    CHECK_INT(api_range_parse("bytes=100-", 100, &st, &len), API_RANGE_UNSATISFIABLE);
    CHECK_INT(api_range_parse("bytes=-0", 100, &st, &len), API_RANGE_UNSATISFIABLE);
    CHECK_INT(api_range_parse("bytes=0-", 0, &st, &len), API_RANGE_UNSATISFIABLE);
    CHECK_INT(api_range_parse("bytes=5-3", 100, &st, &len), API_RANGE_WHOLE);
    CHECK_INT(api_range_parse("bytes=0-1,5-6", 100, &st, &len), API_RANGE_WHOLE);
    CHECK_INT(api_range_parse("items=0-1", 100, &st, &len), API_RANGE_WHOLE);
    CHECK_INT(api_range_parse("bytes=-", 100, &st, &len), API_RANGE_WHOLE);
    /* RFC 9110: positions of any length; past the end is 416 for the first, "to the end" for the last. */
    CHECK_INT(api_range_parse("bytes=99999999999999999999-", 100, &st, &len), API_RANGE_UNSATISFIABLE);
    CHECK_INT(api_range_parse("bytes=18446744073709551615-", 100, &st, &len), API_RANGE_UNSATISFIABLE);
    CHECK_INT(api_range_parse("bytes=0-18446744073709551615", 100, &st, &len), API_RANGE_PART);
    CHECK(st == 0 && len == 100);
    CHECK_INT(api_range_parse("bytes=0-999999999999999999999999", 100, &st, &len), API_RANGE_PART);
    CHECK(st == 0 && len == 100);
    CHECK_INT(api_range_parse("bytes=-99999999999999999999", 100, &st, &len), API_RANGE_PART);
    CHECK(st == 0 && len == 100);
    CHECK_INT(api_range_parse("bytes=1844674407370955161-", 100, &st, &len), API_RANGE_UNSATISFIABLE);
}

static void ids(void)
{
    char a[API_ID_LEN + 1], b[API_ID_LEN + 1];
    CHECK_INT(api_id_new(a), 0);
    CHECK_INT(api_id_new(b), 0);
    CHECK(api_id_valid(a) && api_id_valid(b) && strcmp(a, b) != 0);
    CHECK(!api_id_valid("0123"));
    CHECK(!api_id_valid("0123456789abcdef0123456789abcdefa"));
    CHECK(!api_id_valid("0123456789abcdef0123456789abcdeg"));
}

/* ---- the fuzzer ---- */

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A route's pattern with its placeholders filled from r is the path that was parsed. */
static int route_is_its_pattern(const struct api_route *r, const char *path)
{
    char built[API_PATH_MAX + 64], num[16];
    size_t o = 0;
    for (const char *p = r->pattern; *p && o < sizeof built - 40;) {
        if (!strncmp(p, "{pid}", 5)) {
            if (r->pid < 1 || r->pid > TEXT_PID_MAX) return 0;
            snprintf(num, sizeof num, "%d", r->pid);
            o += (size_t)snprintf(built + o, sizeof built - o, "%s", num);
            p += 5;
        } else if (!strncmp(p, "{id}", 4)) {
            if (!api_id_valid(r->rid)) return 0;
            o += (size_t)snprintf(built + o, sizeof built - o, "%s", r->rid);
            p += 4;
        } else {
            built[o++] = *p++;
        }
    }
    built[o] = '\0';
    return strcmp(built, path) == 0;
}

static void fuzz_route_parser(void)
{
    static const char *const seeds[] = {
        "/", "/healthz", "/metrics", "/explorer.js", "/api/processes", "/api/processes/1", "/api/processes/123/stack",
        "/api/processes/4194304/environment", "/api/processes/77/dump", "/api/dumps",
        "/api/dumps/0123456789abcdef0123456789abcdef", "/api/dumps/fedcba9876543210fedcba9876543210/status",
        "/api/processes/1/../2", "/api/processes/%2e%2e/",
    };
    static const char *const methods[] = {"GET", "HEAD", "POST", "DELETE", "PUT", "", "GETT", "G\xff"};
    static const char alphabet[] = "/.0123456789abcdefxyzAZ_-%\\ \t\r\n\x01\x7f\x80\xc3\xff";
    int accepted = 0, statuses[6] = {0};
    for (long iter = 0; iter < 400000; iter++) {
        char buf[API_PATH_MAX + 80];
        const char *seed = seeds[next() % (sizeof seeds / sizeof seeds[0])];
        size_t n = strlen(seed);
        memcpy(buf, seed, n);
        int mutations = 1 + (int)(next() % 6);
        for (int k = 0; k < mutations; k++) {
            size_t at = n ? next() % (n + 1) : 0;
            switch (next() % 5) {
            case 0: /* insert */
                if (n < sizeof buf - 2) {
                    memmove(buf + at + 1, buf + at, n - at);
                    buf[at] = alphabet[next() % (sizeof alphabet - 1)];
                    n++;
                }
                break;
            case 1: /* replace */
                if (at < n) buf[at] = alphabet[next() % (sizeof alphabet - 1)];
                break;
            case 2: /* delete a run */
                if (at < n) {
                    size_t len = 1 + next() % (n - at);
                    memmove(buf + at, buf + at + len, n - at - len);
                    n -= len;
                }
                break;
            case 3: { /* splice another seed's tail */
                const char *o = seeds[next() % (sizeof seeds / sizeof seeds[0])];
                size_t on = strlen(o), from = next() % (on + 1);
                if (at + on - from < sizeof buf - 1) {
                    memcpy(buf + at, o + from, on - from);
                    n = at + on - from;
                }
                break;
            }
            default: /* repeat a run: long paths, many segments */
                if (at < n) {
                    size_t len = 1 + next() % (n - at);
                    while (n + len < sizeof buf - 1 && next() % 3) {
                        memmove(buf + at + len, buf + at, n - at);
                        n += len;
                    }
                }
            }
        }
        buf[n] = '\0';
        const char *m = methods[next() % (sizeof methods / sizeof methods[0])];
        struct api_route r;
        char allow[64], err[128];
        memset(err, 'X', sizeof err);
        int st = api_route_parse(m, buf, &r, allow, sizeof allow, err, sizeof err);
        int known = st == 0 || st == 400 || st == 404 || st == 405 || st == 414 || st == 501;
        if (!known || (st && (!memchr(err, 0, sizeof err) || !err[0])) ||
            (st == 0 && (!route_is_its_pattern(&r, buf) || r.scope == API_SCOPE_NONE || !r.handle)) ||
            (st == 405 && !allow[0])) {
            printf("  fuzz: %s '%s' -> %d (%s)\n", m, buf, st, st ? err : r.pattern);
            check_failed_in_test = 1;
            return;
        }
        accepted += st == 0;
        statuses[st == 0 ? 0 : st == 400 ? 1 : st == 404 ? 2 : st == 405 ? 3 : st == 414 ? 4 : 5]++;
        /* Ranges, on the same bytes. */
        uint64_t size = next() % 3 ? next() % 100000 : next(), start, len;
        char hdr[API_PATH_MAX + 96];
        snprintf(hdr, sizeof hdr, "bytes=%s", buf + (n ? next() % n : 0));
        enum api_range_kind k = api_range_parse(next() % 2 ? hdr : buf, size, &start, &len);
        if ((k == API_RANGE_WHOLE && (start || len != size)) ||
            (k == API_RANGE_PART && (start >= size || len == 0 || len > size - start))) {
            printf("  fuzz: range '%s' of %llu -> %d %llu+%llu\n", hdr, (unsigned long long)size, k,
                   (unsigned long long)start, (unsigned long long)len);
            check_failed_in_test = 1;
            return;
        }
        long v;
        char back[32];
        if (api_param_long(buf + (n ? next() % n : 0), -5, 1000000, &v) == 0) {
            snprintf(back, sizeof back, "%ld", v);
            if (v < -5 || v > 1000000) check_failed_in_test = 1;
        }
    }
    /* The mutations reached every outcome. */
    CHECK(accepted > 1000);
    for (int i = 0; i < 6; i++) CHECK(statuses[i] > 0);
}

int main(void)
{
    check_suite = "api_route";
    RUN(every_route_maps);
    RUN(every_row_has_a_handler);
    RUN(hostile_paths_are_refused);
    RUN(parameters_are_per_route_and_strict);
    RUN(ranges);
    RUN(ids);
    RUN(fuzz_route_parser);
    CHECK_EXIT();
}
