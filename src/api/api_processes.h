/* api_processes: GET /api/processes, /metrics, /healthz, a process's details (GET /api/processes/{pid} and its threads, modules, fds and environment) and signals (DELETE /api/processes/{pid}). */
#ifndef DIAGTOP_API_PROCESSES_H
#define DIAGTOP_API_PROCESSES_H
#include "api_reply.h"
#include "api_state.h"

/* Answers rq (one of this module's routes) into out. */
void api_processes_handle(struct api_state *s, const struct api_request *rq, struct api_reply *out);
#endif
