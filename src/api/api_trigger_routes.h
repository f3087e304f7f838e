/* api_trigger_routes: the trigger resources: POST /api/triggers arms a watch (its target, conditions and actions
 * as query parameters in the CLI's forms), GET /api/triggers lists them with their events, GET and DELETE
 * /api/triggers/{id} show one and disarm it. */
#ifndef DIAGTOP_API_TRIGGER_ROUTES_H
#define DIAGTOP_API_TRIGGER_ROUTES_H
#include "api_reply.h"
#include "api_state.h"

/* The routes' handlers (api_route.h). */
void api_trigger_routes_arm(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_trigger_routes_list(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_trigger_routes_get(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_trigger_routes_disarm(struct api_state *s, const struct api_request *rq, struct api_reply *out);
#endif
