/* api_route: the HTTP API's routes as a table (method, path pattern, the scope it needs, the query parameters it
 * takes, the function that answers it), and the strict parser that maps a request line onto one. A new route is a
 * row of the table and its handler. The parser is pure: no I/O, no allocation, so it can be fuzzed. Paths never name files: a {pid} is a decimal process id, an {id} a random resource id (api_id.h), and
 * any other segment must equal the table's text; ".", "..", empty segments and bytes outside [A-Za-z0-9._-] are
 * refused before matching. */
#ifndef DIAGTOP_API_ROUTE_H
#define DIAGTOP_API_ROUTE_H
#include <stddef.h>

#include "api_id.h"

#define API_PATH_MAX 512

enum api_method { API_GET = 1, API_HEAD = 2, API_POST = 4, API_DELETE = 8 };

/* read: looking (GET); admin: anything that changes a process, dumps, secrets. */
enum api_scope { API_SCOPE_NONE, API_SCOPE_READ, API_SCOPE_ADMIN };

struct api_state;
struct api_request;
struct api_reply;
/* Answers rq into out (api_reply.h); a reply without a status becomes a 500. */
typedef void api_handler(struct api_state *s, const struct api_request *rq, struct api_reply *out);

/* A row of the table. */
struct api_route_def {
    unsigned methods; /* enum api_method bits; GET implies HEAD */
    enum api_scope scope;
    const char *pattern;
    const char *params;
    api_handler *handle;
};

/* The table, n rows (for tests: every row has a handler). */
const struct api_route_def *api_route_table(size_t *n);

/* A request's route, as parsed. */
struct api_route {
    api_handler *handle;
    enum api_method method;
    enum api_scope scope;
    const char *pattern; /* "/api/processes/{pid}/stack" */
    const char *params;  /* the query parameters it takes: "seconds,hz,native,format" */
    int pid;             /* {pid}, 0 when the route has none */
    char rid[API_ID_LEN + 1]; /* {id}, "" when the route has none */
};

/* Maps method and path (percent-decoded, without the query) onto a route. Returns 0, or the HTTP status to answer
 * with a reason in err: 400 (a malformed path or pid), 404 (no such route), 405 (the path exists: allow gets the
 * methods it takes, "GET, HEAD"), 414 (longer than API_PATH_MAX), 501 (a method the API never takes). */
int api_route_parse(const char *method, const char *path, struct api_route *out, char *allow, size_t allowlen,
                    char *err, size_t errlen);
/* Whether the route takes this query parameter. */
int api_route_takes(const struct api_route *r, const char *name);

/* Strict query values. Each returns 0, or -1 when s is not one (the caller answers 400). */
/* Decimal integer in [min, max], no sign unless min < 0, no spaces or leading zeros beyond "0". */
int api_param_long(const char *s, long min, long max, long *out);
/* "1", "true", "yes", "" (a bare ?flag) -> 1; "0", "false", "no" -> 0. */
int api_param_bool(const char *s, int *out);
/* Decimal seconds in (0, max]. */
int api_param_seconds(const char *s, double max, double *out);
#endif
