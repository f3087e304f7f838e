/* api_downloads: the dump resources: GET /api/dumps, GET /api/dumps/{id} (202 with progress while it is written, then the core with Range), .../status, DELETE. */
#ifndef DIAGTOP_API_DOWNLOADS_H
#define DIAGTOP_API_DOWNLOADS_H
#include "api_reply.h"
#include "api_state.h"

/* Answers rq (one of this module's routes) into out. */
void api_downloads_handle(struct api_state *s, const struct api_request *rq, struct api_reply *out);
#endif
