/* rt_json: what a runtime answered (results.h) as JSON documents (docs/json.md): exact integers, untrusted strings
 * made valid UTF-8. And the heap document read back, for `diagtop heap --diff OLD.json`. */
#ifndef DIAGTOP_RT_JSON_H
#define DIAGTOP_RT_JSON_H
#include <stddef.h>

#include "actions/runtimes/results.h"
#include "heap_view.h"

/* Each returns a malloc'd document (one line), or NULL when out of memory. */
char *rt_json_stack(const struct rt_stack *s);
char *rt_json_fields(int pid, const struct rt_fields *fs);
char *rt_json_gc(int pid, const struct rt_gc *g);
char *rt_json_heap(const struct heap_view *v);
char *rt_json_profile(int pid, const struct rt_profile *p);
char *rt_json_file(int pid, const struct rt_file *f);
/* {"pid": N, "provider": ..., "error": "..."} for a request that failed. */
char *rt_json_error(int pid, const char *provider, const char *error);

/* Reads a document written by rt_json_heap back into out (rows, totals, time). Returns 0, or -EINVAL with a
 * reason when it is not one. */
int rt_json_read_heap(const char *text, struct rt_heap *out, char *err, size_t errlen);
#endif
