/* api_actions: what the API does to one process: its stack, memstats, heap, a GC, a CPU profile (pprof download) and starting a dump. */
#ifndef DIAGTOP_API_ACTIONS_H
#define DIAGTOP_API_ACTIONS_H
#include "api_reply.h"
#include "api_state.h"

/* Answers rq (one of this module's routes) into out. */
void api_actions_handle(struct api_state *s, const struct api_request *rq, struct api_reply *out);
#endif
