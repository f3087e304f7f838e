/* api_state: what the server's request handlers share: the one sampling of the process table, the dumps, the
 * heap snapshots, the armed triggers, the processes being acted on, the settings, and the flag that cancels every action when the
 * server stops. Each part locks itself. */
#ifndef DIAGTOP_API_STATE_H
#define DIAGTOP_API_STATE_H
#include <signal.h>

#include "api_busy.h"
#include "api_dumps.h"
#include "api_monitor.h"
#include "api_reply.h"
#include "api_store.h"
#include "api_triggers.h"

struct api_state {
    struct api_monitor mon;
    struct api_busy busy;
    struct api_dumps dumps;
    struct api_store heaps;
    struct api_triggers triggers;
    char dump_dir[4096];
    double agent_timeout;
    char drop_frames[512];
    int read_only;
    volatile sig_atomic_t cancel; /* set when the server stops: actions give up cleanly */
};

#endif
