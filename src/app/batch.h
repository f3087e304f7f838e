/* batch: the non-interactive monitor (like top -b): text or newline-delimited JSON snapshots on stdout. */
#ifndef DIAGTOP_BATCH_H
#define DIAGTOP_BATCH_H
#include "options.h"
#include "model/settings.h"

/* Runs until the iteration count or a SIGINT/SIGTERM/SIGPIPE-like write error. Returns the exit status. */
int batch_run(const struct options *o, const struct settings *s, const struct procview_opts *vo);
#endif
