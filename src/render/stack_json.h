/* stack_json: a stack capture as JSON (docs/json.md, "diagtop stack --json"). */
#ifndef DIAGTOP_STACK_JSON_H
#define DIAGTOP_STACK_JSON_H
#include "actions/stack/stack.h"

#include <cjson/cJSON.h>

/* Returns a malloc'd JSON document, or NULL. */
char *stack_json(const struct stack_result *r, int source);
/* One frame: pc, function, offset or module_offset, inlined, file and line (with source), module. */
cJSON *stack_json_frame(const struct stack_frame *f, int source);
/* An array of n frames. */
cJSON *stack_json_frames(const struct stack_frame *f, int n, int source);
/* The "threads" array alone: tid, name, state, cpu_percent (a core's: tid and mark), frames, error. */
cJSON *stack_json_threads(const struct stack_result *r, int source);
/* The error document of a failed capture: {"pid":N,"error":"..."} */
char *stack_json_error(int pid, const char *error);
#endif
