/* watch_spec: a watch's words, the same whoever gives them: the command line's options (--cpu 90:5), a request's
 * query (cpu=90:5), the monitor's form ("cpu 90:5 then dump count 1"). One key and its value at a time into a
 * watch_config, with the reasons the command line gives. */
#ifndef DIAGTOP_WATCH_SPEC_H
#define DIAGTOP_WATCH_SPEC_H
#include <stddef.h>

#include "watch.h"

/* Count 1, every 10 s, an interval of 1 s; no target, condition or action. */
void watch_spec_defaults(struct watch_config *c);
/* Sets key (leading dashes ignored, '_' read as '-') to value: a condition (cpu, cpu-below, rss, rss-growth,
 * threads, fds, signal, exit without a value), then (a comma list of actions), count, every, interval, max-disk.
 * Returns 0; -1 with a reason; -2 when key is none of these (the caller's own, or unknown). */
int watch_spec_set(struct watch_config *c, const char *key, const char *value, char *err, size_t errlen);
/* The form's text: words "KEY VALUE" (or KEY=VALUE) one after the other, "exit" alone. Returns 0, or -1 with a
 * reason (an unknown word, a missing value, no condition). */
int watch_spec_parse(struct watch_config *c, const char *text, char *err, size_t errlen);
#endif
