#include "api_reply.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render/json_util.h"

void api_reply_init(struct api_reply *r)
{
    memset(r, 0, sizeof *r);
    r->fd = -1;
}

void api_reply_clear(struct api_reply *r)
{
    free(r->body);
    if (r->fd >= 0) close(r->fd);
    api_reply_init(r);
}

int api_reply_json(struct api_reply *r, int status, char *doc)
{
    if (!doc) {
        api_reply_error(r, 500, "out of memory");
        return 0;
    }
    free(r->body);
    r->status = status;
    r->content_type = "application/json";
    r->body = doc;
    r->len = strlen(doc);
    return 0;
}

int api_reply_error(struct api_reply *r, int status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cJSON *o = cJSON_CreateObject();
    json_add_i64(o, "status", status);
    json_add_string_or_null(o, "error", msg);
    char *doc = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    free(r->body);
    r->body = NULL;
    r->status = status;
    r->content_type = "application/json";
    if (doc) {
        r->body = doc;
        r->len = strlen(doc);
    } else {
        r->len = 0;
    }
    return -1;
}

int api_status_of_errno(int rc)
{
    switch (-rc) {
    case ESRCH: case ENOENT: return 404;
    case EPERM: case EACCES: return 403;
    case EBUSY: case EEXIST: return 409;
    case ETIMEDOUT: return 504;
    case ECANCELED: case EINTR: return 503;
    case ENOTSUP: case ENOSYS: return 501;
    case ECONNREFUSED: case ECONNRESET: case EPROTO: case EBADMSG: case E2BIG: case EFBIG: case EPIPE: return 502;
    case EINVAL: return 422;
    default: return 500;
    }
}

int api_arg_long(const struct api_request *rq, struct api_reply *r, const char *name, long min, long max, long def,
                 long *out)
{
    const char *v = rq->arg(rq->cookie, name);
    *out = def;
    if (!v) return 0;
    if (api_param_long(v, min, max, out) < 0)
        return api_reply_error(r, 400, "%s: not an integer from %ld to %ld", name, min, max);
    return 0;
}

int api_arg_bool(const struct api_request *rq, struct api_reply *r, const char *name, int *out)
{
    const char *v = rq->arg(rq->cookie, name);
    *out = 0;
    if (!v) return 0;
    if (api_param_bool(v, out) < 0) return api_reply_error(r, 400, "%s: 1, true, yes, 0, false or no", name);
    return 0;
}

int api_arg_seconds(const struct api_request *rq, struct api_reply *r, const char *name, double max, double def,
                    double *out)
{
    const char *v = rq->arg(rq->cookie, name);
    *out = def;
    if (!v) return 0;
    if (api_param_seconds(v, max, out) < 0)
        return api_reply_error(r, 400, "%s: not a number of seconds up to %g", name, max);
    return 0;
}

int api_arg_text(const struct api_request *rq, struct api_reply *r, const char *name, size_t maxlen,
                 const char **out)
{
    const char *v = rq->arg(rq->cookie, name);
    *out = v;
    if (v && strlen(v) > maxlen) return api_reply_error(r, 400, "%s: longer than %zu bytes", name, maxlen);
    return 0;
}

int api_require_admin(const struct api_request *rq, struct api_reply *r, const char *what)
{
    if (rq->read_only) return api_reply_error(r, 403, "%s: this server is read-only", what);
    if (rq->who.scope < API_SCOPE_ADMIN) return api_reply_error(r, 403, "%s needs the admin scope", what);
    return 0;
}
