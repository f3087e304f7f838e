/* api_sampler: with `diagtop serve --sample-every S`, a thread (util/ticker) that takes a process-table sample
 * every S seconds whether or not requests come, so every process's history (/api/processes/{pid}/history) and the
 * CPU% of the next answer have no gaps while nobody polls. Off by default: a monitor must not load an idle box on
 * its own (one sample is one refresh: about 20 ms of CPU at 2,000 processes). */
#ifndef DIAGTOP_API_SAMPLER_H
#define DIAGTOP_API_SAMPLER_H
#include "api_monitor.h"
#include "util/ticker.h"

struct api_sampler {
    struct api_monitor *mon;
    struct ticker ticker;
};

/* Starts sampling mon every `every` seconds, as a request would (the same lock, a younger sample reused). Returns
 * 0 or -errno. */
int api_sampler_start(struct api_sampler *s, struct api_monitor *mon, double every);
/* Stops the thread (waits for a sample in progress); harmless if never started. */
void api_sampler_stop(struct api_sampler *s);
#endif
