/* pprof_read: a pprof profile (google/pprof profile.proto; gzipped as Go writes it, or raw) into result rows: a CPU
 * profile as functions by flat and cumulative value, a heap profile as allocation sites (one row per distinct
 * stack, with the whole stack). The bytes come from an agent and are untrusted: the gunzipped size, the numbers
 * of strings, functions, locations, samples and the depth of a stack are capped (a profile beyond a cap is
 * refused, a stack beyond its cap is cut at the root end); a reference to a string, function or location that
 * does not exist is skipped, never followed; a location left without a usable line is named by its address. */
#ifndef DIAGTOP_PPROF_READ_H
#define DIAGTOP_PPROF_READ_H
#include <stddef.h>

#include "actions/runtimes/results.h"

#define PPROF_MAX_BYTES (128u << 20) /* gunzipped */

/* Gunzips data into a malloc'd *out of at most max bytes. Returns 0, or -errno with a reason (-EBADMSG: not
 * gzip or corrupt; -EFBIG: more than max; -ENOMEM). */
int pprof_gunzip(const void *data, size_t len, size_t max, unsigned char **out, size_t *outlen, char *err,
                 size_t errlen);

/* A CPU profile: fills out's unit (of the sample type "cpu", else the default sample type, else the last one),
 * seconds (duration_nanos; 0 when the profile does not say), rows (flat: the value of samples whose innermost
 * frame is the function; cum: of samples that have the function anywhere on their stack, once per sample; by
 * flat, largest first, then cum, then name) and total. Leaves provider, format and saved_path alone. Returns 0 or
 * -errno with a reason. */
int pprof_read_profile(const void *data, size_t len, struct rt_profile *out, char *err, size_t errlen);

/* A heap profile (sample types inuse_space, and where present inuse_objects, alloc_objects, alloc_space, found by
 * name): one row per distinct stack: name = the innermost function, stack innermost first, count/bytes in use,
 * alloc_count/alloc_bytes allocated since start (-1 when the profile lacks them); sites whose values are all
 * zero (Go lists allocations made since the last GC that way) are left out, as pprof does; rt_heap_finish'ed. Leaves
 * provider, kind, pid, taken_at and saved_path alone. Returns 0 or -errno with a reason. */
int pprof_read_heap(const void *data, size_t len, struct rt_heap *out, char *err, size_t errlen);
#endif
