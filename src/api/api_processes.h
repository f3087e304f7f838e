/* api_processes: GET /api/processes, /metrics, /healthz, a process's details (GET /api/processes/{pid} and its threads, modules, fds, environment and history) and signals (DELETE /api/processes/{pid}). */
#ifndef DIAGTOP_API_PROCESSES_H
#define DIAGTOP_API_PROCESSES_H
#include "api_reply.h"
#include "api_state.h"

/* The routes' handlers (api_route.h). */
void api_processes_healthz(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_processes_metrics(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_processes_list(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_processes_details(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_processes_signal(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_processes_threads(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_processes_modules(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_processes_fds(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_processes_history(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_processes_environment(struct api_state *s, const struct api_request *rq, struct api_reply *out);
#endif
