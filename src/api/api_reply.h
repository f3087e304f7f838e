/* api_reply: what a route handler sees of a request and gives back, without libmicrohttpd: the route, the query
 * and headers through callbacks, who asked; a status, a body (bytes or an open file's range) and the few headers
 * the API sets. Helpers for JSON and error replies, strict query values (a bad one is a 400 saying which), and the
 * HTTP status an action's -errno means. */
#ifndef DIAGTOP_API_REPLY_H
#define DIAGTOP_API_REPLY_H
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "api_auth.h"
#include "api_route.h"

struct api_request {
    const struct api_route *route;
    /* A query parameter: NULL when absent, "" for a bare ?name. */
    const char *(*arg)(void *cookie, const char *name);
    const char *(*header)(void *cookie, const char *name);
    void *cookie;
    struct api_principal who;
    int read_only; /* the server's --read-only */
};

struct api_reply {
    int status;
    const char *content_type;
    char *body; /* malloc'd (freed by whoever sends it), or NULL */
    size_t len;
    int fd;     /* >= 0: the body is [offset, offset + length) of this file, closed after sending */
    uint64_t offset, length;
    char location[96];
    char disposition[320]; /* Content-Disposition */
    char content_range[96];
    char etag[48];
    char allow[64];        /* Allow, with a 405 */
    int retry_after;       /* seconds, 0: none */
    int accept_ranges;
    int page;              /* the explorer page: its own Content-Security-Policy (its script and style) */
};

void api_reply_init(struct api_reply *r);
void api_reply_clear(struct api_reply *r);
/* Takes doc (malloc'd JSON; NULL means out of memory: a 500). Always returns 0. */
int api_reply_json(struct api_reply *r, int status, char *doc);
/* {"status": N, "error": "msg"}. Returns -1, so a handler can `return api_reply_error(...)`. */
int api_reply_error(struct api_reply *r, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The status an action's -errno stands for: ESRCH 404, EPERM/EACCES 403, EBUSY 409, ETIMEDOUT 504, ECANCELED/EINTR
 * 503, ENOTSUP/EOPNOTSUPP/ENOSYS 501, ECONNREFUSED/ECONNRESET/EPROTO/EBADMSG 502, E2BIG/EFBIG 502, ENOMEM 500,
 * EINVAL 422, others 500. */
int api_status_of_errno(int rc);

/* Query values: each returns 0 with the value (def when absent), or -1 with a 400 in r naming the parameter. */
int api_arg_long(const struct api_request *rq, struct api_reply *r, const char *name, long min, long max, long def,
                 long *out);
int api_arg_bool(const struct api_request *rq, struct api_reply *r, const char *name, int *out);
int api_arg_seconds(const struct api_request *rq, struct api_reply *r, const char *name, double max, double def,
                    double *out);
/* A text value of at most maxlen bytes; NULL when absent. */
int api_arg_text(const struct api_request *rq, struct api_reply *r, const char *name, size_t maxlen,
                 const char **out);
/* 0 when the request may do what needs admin scope, else -1 with a 403 in r saying why (read-only server, or a
 * read-scope credential). */
int api_require_admin(const struct api_request *rq, struct api_reply *r, const char *what);
#endif
