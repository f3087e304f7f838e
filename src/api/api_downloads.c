#include "api_downloads.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "actions/offline/core_report.h"
#include "api_range.h"
#include "render/core_json.h"

/* GET /api/dumps/{id}: while the dump is written, 202 with its progress (and Retry-After); once done the core,
 * whole or the one range asked for (206; 416 beyond its end), sent from the descriptor; failed or cancelled: 410
 * with the reason. */
void api_downloads_file(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    int fd = -1;
    unsigned long long size = 0;
    char name[256];
    enum api_dump_state state = API_DUMP_FAILED;
    int st = api_dumps_open(&s->dumps, rq->route->rid, &fd, &size, name, sizeof name, &state);
    if (st == 404) {
        api_reply_error(out, 404, "no such dump");
        return;
    }
    char *status = st ? api_dumps_status(&s->dumps, rq->route->rid, &state) : NULL;
    if (st && !status) { /* deleted meanwhile */
        api_reply_error(out, 404, "no such dump");
        return;
    }
    if (st) {
        api_reply_json(out, state == API_DUMP_RUNNING ? 202 : 410, status);
        if (state == API_DUMP_RUNNING) out->retry_after = 1;
        return;
    }
    out->content_type = "application/octet-stream";
    out->accept_ranges = 1;
    snprintf(out->disposition, sizeof out->disposition, "attachment; filename=\"%s\"", name);
    snprintf(out->etag, sizeof out->etag, "\"%.32s\"", rq->route->rid);
    const char *range = rq->header(rq->cookie, "Range");
    const char *if_range = rq->header(rq->cookie, "If-Range");
    if (range && if_range && strcmp(if_range, out->etag)) range = NULL; /* another version: the whole file */
    uint64_t start, len;
    switch (api_range_parse(range, size, &start, &len)) {
    case API_RANGE_UNSATISFIABLE:
        close(fd);
        api_reply_error(out, 416, "the range is beyond the end of the %llu-byte file", size);
        snprintf(out->content_range, sizeof out->content_range, "bytes */%llu", size);
        return;
    case API_RANGE_PART:
        out->status = 206;
        snprintf(out->content_range, sizeof out->content_range, "bytes %" PRIu64 "-%" PRIu64 "/%llu", start,
                 start + len - 1, size);
        break;
    default: out->status = 200;
    }
    out->fd = fd;
    out->offset = start;
    out->length = len;
}

/* POST /api/dumps/{id}/analyze[?heap=0&source=0]: the finished core read offline, as `diagtop analyze CORE
 * --json` gives it (404: no such dump; 409 with its status while it is written or when it failed; 422: a file
 * that is not a core diagtop reads). */
void api_downloads_analyze(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    int heap = 1, source = 1, fd = -1;
    if ((rq->arg(rq->cookie, "heap") && api_arg_bool(rq, out, "heap", &heap) < 0) ||
        (rq->arg(rq->cookie, "source") && api_arg_bool(rq, out, "source", &source) < 0))
        return;
    unsigned long long size;
    char name[256], err[1024];
    enum api_dump_state state;
    int st = api_dumps_open(&s->dumps, rq->route->rid, &fd, &size, name, sizeof name, &state);
    if (st) {
        char *status = st == 404 ? NULL : api_dumps_status(&s->dumps, rq->route->rid, &state);
        if (status) api_reply_json(out, 409, status);
        else api_reply_error(out, 404, "no such dump");
        return;
    }
    struct core_options o = {.heap = heap, .source = source};
    struct core_report r;
    int rc = core_report_read_fd(fd, name, &o, &r, err, sizeof err);
    close(fd);
    if (rc < 0) {
        api_reply_error(out, 422, "%s", err);
        return;
    }
    char *doc = core_json(&r, name, o.source);
    core_report_free(&r);
    if (doc) api_reply_json(out, 200, doc);
    else api_reply_error(out, 500, "out of memory");
}

/* GET /api/dumps: every dump's status. */
void api_downloads_list(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    (void)rq;
    api_reply_json(out, 200, api_dumps_list(&s->dumps));
}

/* GET /api/dumps/{id}/status. */
void api_downloads_status(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    enum api_dump_state state;
    char *doc = api_dumps_status(&s->dumps, rq->route->rid, &state);
    if (doc) api_reply_json(out, 200, doc);
    else api_reply_error(out, 404, "no such dump");
}

/* DELETE /api/dumps/{id}: cancels it if it runs, removes the file: 204. */
void api_downloads_delete(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    if (api_dumps_delete(&s->dumps, rq->route->rid)) api_reply_error(out, 404, "no such dump");
    else out->status = 204;
}
