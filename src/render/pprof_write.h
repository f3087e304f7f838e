/* pprof_write: a CPU profile (cpu_report) as a gzipped pprof profile (google/pprof profile.proto), the format
 * `go tool pprof`, speedscope and continuous-profiling backends read. Symbolized already, so no reader needs the
 * binaries:
 * - sample types samples/count and cpu/nanoseconds (the default), period_type cpu/nanoseconds, period =
 *   period_ns, duration_nanos from seconds; comments say the target, the method and lost samples;
 * - one Sample per stack (values: samples, CPU time), labelled thread_id (numeric) and thread_name;
 * - one Location per distinct address: the pc of an innermost frame, return address - 1 elsewhere, with one Line
 *   per frame at that pc (inlined calls first, the function they were inlined into last);
 * - one Function per name and file (name = system_name = cpu_top's name: the function, "module+0xoffset" or
 *   "0xpc"), one Mapping per module (filename = module, has_functions; no address range: the report has none).
 * Strings from the target are sanitized as for a terminal (valid UTF-8, no control characters), since readers
 * print them raw. */
#ifndef DIAGTOP_PPROF_WRITE_H
#define DIAGTOP_PPROF_WRITE_H
#include <stddef.h>

#include "actions/profile/cpu_report.h"

/* *out gets the malloc'd gzip bytes, *len their length. Returns 0, or -ENOMEM / -EIO (zlib failed) with a reason
 * in err. */
int pprof_write_cpu(const struct cpu_report *r, unsigned char **out, size_t *len, char *err, size_t errlen);
#endif
