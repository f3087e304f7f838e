#include "api_route.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_actions.h"
#include "api_downloads.h"
#include "api_page.h"
#include "api_processes.h"
#include "api_trigger_routes.h"
#include "util/text.h"

/* Matched in order: the first row whose pattern and method fit answers. */
static const struct api_route_def routes[] = {
    {API_GET, API_SCOPE_READ, "/", "", api_page_serve_html},
    {API_GET, API_SCOPE_READ, "/explorer.js", "", api_page_serve_js},
    {API_GET, API_SCOPE_READ, "/explorer.css", "", api_page_serve_css},
    {API_GET, API_SCOPE_READ, "/healthz", "", api_processes_healthz},
    {API_GET, API_SCOPE_READ, "/metrics", "top,sort,filter,user", api_processes_metrics},
    {API_GET, API_SCOPE_READ, "/api/processes", "sort,order,limit,user,filter", api_processes_list},
    {API_GET, API_SCOPE_READ, "/api/processes/{pid}", "section", api_processes_details},
    {API_DELETE, API_SCOPE_ADMIN, "/api/processes/{pid}", "signal,start_time", api_processes_signal},
    {API_GET, API_SCOPE_READ, "/api/processes/{pid}/threads", "", api_processes_threads},
    {API_GET, API_SCOPE_READ, "/api/processes/{pid}/modules", "", api_processes_modules},
    {API_GET, API_SCOPE_READ, "/api/processes/{pid}/fds", "", api_processes_fds},
    {API_GET, API_SCOPE_READ, "/api/processes/{pid}/environment", "show_secrets", api_processes_environment},
    {API_GET, API_SCOPE_READ, "/api/processes/{pid}/history", "seconds", api_processes_history},
    {API_GET, API_SCOPE_READ, "/api/processes/{pid}/stack", "native,no_stop,tid,source,timeout", api_actions_stack},
    {API_GET, API_SCOPE_READ, "/api/processes/{pid}/memstats", "native,timeout", api_actions_memstats},
    {API_GET, API_SCOPE_READ, "/api/processes/{pid}/heap", "diff,live,timeout", api_actions_heap},
    {API_POST, API_SCOPE_ADMIN, "/api/processes/{pid}/gc", "percent,timeout", api_actions_gc},
    {API_POST, API_SCOPE_ADMIN, "/api/processes/{pid}/profile", "seconds,hz,native,format,method,timeout",
     api_actions_profile},
    {API_POST, API_SCOPE_ADMIN, "/api/processes/{pid}/dump", "full,filter,mode", api_actions_dump},
    {API_GET, API_SCOPE_ADMIN, "/api/dumps", "", api_downloads_list},
    {API_GET, API_SCOPE_ADMIN, "/api/dumps/{id}", "", api_downloads_file},
    {API_DELETE, API_SCOPE_ADMIN, "/api/dumps/{id}", "", api_downloads_delete},
    {API_GET, API_SCOPE_ADMIN, "/api/dumps/{id}/status", "", api_downloads_status},
    {API_POST, API_SCOPE_ADMIN, "/api/dumps/{id}/analyze", "heap,source", api_downloads_analyze},
    {API_POST, API_SCOPE_ADMIN, "/api/triggers",
     "pid,name,cgroup,cpu,cpu_below,rss,rss_growth,threads,fds,then,count,every,interval,max_disk",
     api_trigger_routes_arm},
    {API_GET, API_SCOPE_READ, "/api/triggers", "", api_trigger_routes_list},
    {API_GET, API_SCOPE_READ, "/api/triggers/{id}", "", api_trigger_routes_get},
    {API_DELETE, API_SCOPE_ADMIN, "/api/triggers/{id}", "", api_trigger_routes_disarm},
};

const struct api_route_def *api_route_table(size_t *n)
{
    *n = sizeof routes / sizeof routes[0];
    return routes;
}

#define MAX_SEGMENTS 8

struct segments {
    const char *s[MAX_SEGMENTS];
    size_t len[MAX_SEGMENTS];
    int n;
};

/* Splits "/a/b" into its segments; "/" has none. Returns 0 or -1 (too many, or an empty one). */
static int split(const char *path, struct segments *out)
{
    out->n = 0;
    const char *p = path + 1;
    if (!*p) return 0;
    for (;;) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0 || out->n == MAX_SEGMENTS) return -1;
        out->s[out->n] = p;
        out->len[out->n++] = n;
        if (!e) return 0;
        p = e + 1;
    }
}

static int segment_is(const struct segments *sg, int i, const char *text)
{
    return strlen(text) == sg->len[i] && memcmp(sg->s[i], text, sg->len[i]) == 0;
}

/* Does the path have the pattern's shape (same count, same literal segments)? */
static int shape_matches(const struct segments *path, const char *pattern)
{
    struct segments pat;
    if (split(pattern, &pat) < 0 || pat.n != path->n) return 0;
    for (int i = 0; i < pat.n; i++) {
        if (pat.s[i][0] == '{') continue;
        if (pat.len[i] != path->len[i] || memcmp(pat.s[i], path->s[i], pat.len[i])) return 0;
    }
    return 1;
}

static enum api_method method_of(const char *m)
{
    if (!strcmp(m, "GET")) return API_GET;
    if (!strcmp(m, "HEAD")) return API_HEAD;
    if (!strcmp(m, "POST")) return API_POST;
    if (!strcmp(m, "DELETE")) return API_DELETE;
    return 0;
}

static int fail(int status, char *err, size_t errlen, const char *fmt, const char *arg)
{
    snprintf(err, errlen, fmt, arg);
    return status;
}

/* What an unknown {id} of the pattern is not: "no such dump", "no such trigger". */
static const char *no_such(const struct segments *pat)
{
    return pat->n > 1 && segment_is(pat, 1, "triggers") ? "no such trigger" : "no such dump";
}

/* Fills the placeholders of a matching pattern. Returns 0 or 400/404 with a reason. */
static int bind_placeholders(const struct segments *path, const char *pattern, struct api_route *out, char *err,
                             size_t errlen)
{
    struct segments pat;
    split(pattern, &pat);
    for (int i = 0; i < pat.n; i++) {
        char seg[64];
        if (path->len[i] >= sizeof seg) {
            if (segment_is(&pat, i, "{pid}")) return fail(400, err, errlen, "%s", "not a process id");
            if (segment_is(&pat, i, "{id}")) return fail(404, err, errlen, "%s", no_such(&pat));
            continue;
        }
        memcpy(seg, path->s[i], path->len[i]);
        seg[path->len[i]] = '\0';
        if (segment_is(&pat, i, "{pid}")) {
            if (text_parse_pid(seg, &out->pid) < 0) return fail(400, err, errlen, "'%s' is not a process id", seg);
        } else if (segment_is(&pat, i, "{id}")) {
            if (!api_id_valid(seg)) return fail(404, err, errlen, "%s", no_such(&pat));
            memcpy(out->rid, seg, API_ID_LEN + 1);
        }
    }
    return 0;
}

int api_route_parse(const char *method, const char *path, struct api_route *out, char *allow, size_t allowlen,
                    char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (allowlen) allow[0] = '\0';
    if (errlen) err[0] = '\0';
    enum api_method m = method_of(method);
    if (!m) return fail(501, err, errlen, "%s", "method not implemented: the API takes GET, HEAD, POST and DELETE");
    size_t n = strnlen(path, API_PATH_MAX + 1);
    if (n > API_PATH_MAX) return fail(414, err, errlen, "%s", "path too long");
    if (path[0] != '/') return fail(400, err, errlen, "%s", "the path must start with /");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)path[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' || c == '.' ||
              c == '_' || c == '-'))
            return fail(400, err, errlen, "%s", "a byte a path of this API never has");
    }
    struct segments sg;
    if (split(path, &sg) < 0) return fail(404, err, errlen, "%s", "no such route");
    for (int i = 0; i < sg.n; i++)
        if (segment_is(&sg, i, ".") || segment_is(&sg, i, ".."))
            return fail(400, err, errlen, "%s", "'.' and '..' are not path segments of this API");

    unsigned offered = 0;
    const struct api_route_def *hit = NULL;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (!shape_matches(&sg, routes[i].pattern)) continue;
        unsigned ms = routes[i].methods | ((routes[i].methods & API_GET) ? API_HEAD : 0);
        offered |= ms;
        if ((ms & m) && !hit) hit = &routes[i];
    }
    if (!offered) return fail(404, err, errlen, "%s", "no such route");
    if (!hit) {
        static const char *const names[] = {"GET", "HEAD", "POST", "DELETE"};
        size_t used = 0;
        for (int b = 0; b < 4; b++)
            if ((offered & (1u << b)) && used < allowlen)
                used += (size_t)snprintf(allow + used, allowlen - used, "%s%s", used ? ", " : "", names[b]);
        return fail(405, err, errlen, "%s", "method not allowed on this path");
    }
    out->handle = hit->handle;
    out->method = m;
    out->scope = hit->scope;
    out->pattern = hit->pattern;
    out->params = hit->params;
    return bind_placeholders(&sg, hit->pattern, out, err, errlen);
}

int api_route_takes(const struct api_route *r, const char *name)
{
    size_t n = strlen(name);
    if (!n || !r->params) return 0;
    for (const char *p = r->params; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && memcmp(p, name, n) == 0) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

int api_param_long(const char *s, long min, long max, long *out)
{
    if (!s) return -1;
    const char *p = s;
    int neg = 0;
    if (*p == '-' && min < 0) {
        neg = 1;
        p++;
    }
    if (*p < '0' || *p > '9' || (p[0] == '0' && p[1])) return -1;
    long long v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9') return -1;
        v = v * 10 + (*p - '0');
        if (v > 1LL << 40) return -1;
    }
    if (neg) v = -v;
    if (v < min || v > max) return -1;
    *out = (long)v;
    return 0;
}

int api_param_bool(const char *s, int *out)
{
    if (!s) return -1;
    if (!*s || !strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "yes")) {
        *out = 1;
        return 0;
    }
    if (!strcmp(s, "0") || !strcmp(s, "false") || !strcmp(s, "no")) {
        *out = 0;
        return 0;
    }
    return -1;
}

int api_param_seconds(const char *s, double max, double *out)
{
    if (!s || !*s || strlen(s) > 16) return -1;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || *p == '.')) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v <= 0 || v > max) return -1;
    *out = v;
    return 0;
}
