/* agent_pprof: the native agent's profiles as gzipped pprof (google/pprof profile.proto), saved next to the
 * runtimes' own so that `go tool pprof` reads them, `-base OLD NEW` included. The agent sends raw program counters
 * and diagtop names them; the file carries the names (Function, Line), one Location per distinct address (return
 * address - 1 for callers, as pprof wants), one Mapping per module (has_functions), so no reader needs the
 * binaries. Strings from the target are sanitized as for a terminal. */
#ifndef DIAGTOP_AGENT_PPROF_H
#define DIAGTOP_AGENT_PPROF_H
#include <stddef.h>

struct stack_frame;

struct agent_pprof;

/* Sample types are name/unit pairs, e.g. {"inuse_space", "bytes"}. NULL when out of memory. */
struct agent_pprof *agent_pprof_new(const char *const (*types)[2], int ntypes, const char *period_type,
                                    const char *period_unit, long long period, long long duration_ns);
/* The location of one unwound pc: its frames as the symbolizer named them (inlined calls first; n >= 0). Returns a
 * location id, or 0 when out of memory. */
unsigned long long agent_pprof_location(struct agent_pprof *p, unsigned long long pc, int return_address,
                                        const struct stack_frame *frames, int n);
/* A sample: locations innermost first, one value per sample type, an optional numeric label (key NULL: none).
 * Returns 0 or -ENOMEM. */
int agent_pprof_sample(struct agent_pprof *p, const unsigned long long *locs, int nlocs, const long long *values,
                       const char *label, long long label_num);
/* A comment line (the target, what was lost). */
int agent_pprof_comment(struct agent_pprof *p, const char *text);
/* The gzipped profile in a malloc'd *out. Returns 0, or -ENOMEM / -EIO with a reason. Frees p either way. */
int agent_pprof_finish(struct agent_pprof *p, unsigned char **out, size_t *len, char *err, size_t errlen);
void agent_pprof_free(struct agent_pprof *p);
#endif
