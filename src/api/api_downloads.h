/* api_downloads: the dump resources: GET /api/dumps, GET /api/dumps/{id} (202 with progress while it is written, then the core with Range), .../status, POST .../analyze (the core read offline), DELETE. */
#ifndef DIAGTOP_API_DOWNLOADS_H
#define DIAGTOP_API_DOWNLOADS_H
#include "api_reply.h"
#include "api_state.h"

/* The routes' handlers (api_route.h). */
void api_downloads_list(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_downloads_file(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_downloads_status(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_downloads_analyze(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_downloads_delete(struct api_state *s, const struct api_request *rq, struct api_reply *out);
#endif
