/* stack_json: a stack capture as JSON (docs/json.md, "diagtop stack --json"). */
#ifndef DIAGTOP_STACK_JSON_H
#define DIAGTOP_STACK_JSON_H
#include "actions/stack/stack.h"

/* Returns a malloc'd JSON document, or NULL. */
char *stack_json(const struct stack_result *r, int source);
/* The error document of a failed capture: {"pid":N,"error":"..."} */
char *stack_json_error(int pid, const char *error);
#endif
