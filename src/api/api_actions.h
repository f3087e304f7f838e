/* api_actions: what the API does to one process: its stack, memstats, heap, a GC, a CPU profile (pprof download) and starting a dump. */
#ifndef DIAGTOP_API_ACTIONS_H
#define DIAGTOP_API_ACTIONS_H
#include "api_reply.h"
#include "api_state.h"

/* The routes' handlers (api_route.h). Each but the dump holds the process busy while it runs (api_busy: 409 or
 * 503 with Retry-After when it cannot); the dump's worker holds it itself. */
void api_actions_stack(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_actions_memstats(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_actions_heap(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_actions_gc(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_actions_profile(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_actions_dump(struct api_state *s, const struct api_request *rq, struct api_reply *out);
#endif
