/* watch: `diagtop watch`'s engine. Polls the processes a target names (one PID, every process of a name as they
 * come and go, or every process of a cgroup) at an interval, evaluates the conditions on each, and when one
 * holds takes the captures asked (a core from a snapshot, the stacks, a CPU profile, a command run), each into
 * a file named <comm>_<pid>_<trigger>_<UTC time>.<ext> (0600, never replacing one) in the dump directory. Tells
 * the front end every step through one callback. Reads only the stat fields the conditions need (and the
 * descriptor count when one asks for it); a command line only for a new process of a name. */
#ifndef DIAGTOP_WATCH_H
#define DIAGTOP_WATCH_H
#include <signal.h>
#include <stddef.h>

#include "watch_rule.h"

struct watch_event;

#define WATCH_CONDS_MAX 16
#define WATCH_ACTIONS_MAX 8

struct watch_config {
    int pid;            /* the target: one process, */
    const char *name;   /* or every process whose name (comm, or argv[0]'s last part) is this, */
    const char *cgroup; /* or every process of this cgroup (below /sys/fs/cgroup, or a full path) */
    struct watch_cond conds[WATCH_CONDS_MAX];
    int nconds;
    struct watch_action actions[WATCH_ACTIONS_MAX]; /* none: a dump */
    int nactions;
    int count;                    /* captures in all before the watch ends (default 1) */
    double every;                 /* seconds between two firings (default 10) */
    double interval;              /* seconds between samples (default 1) */
    const char *dir;              /* where files go (absolute) */
    unsigned long long max_disk;  /* bytes the watch may write in all; 0: no limit but the free space */
    const volatile sig_atomic_t *cancel;
    void (*on_event)(void *arg, const struct watch_event *e);
    void *arg;
};

enum watch_event_kind {
    WATCH_EV_WATCHING, /* a process is watched (the PID, or a new one of the name or cgroup) */
    WATCH_EV_WAITING,  /* no process of the name or cgroup yet */
    WATCH_EV_TRIGGER,  /* a condition holds: the captures follow */
    WATCH_EV_CAPTURE,  /* a capture is done: file, size, pause */
    WATCH_EV_SKIPPED,  /* a capture not taken: disk guard */
    WATCH_EV_FAILED,   /* a capture that failed */
    WATCH_EV_EXITED,   /* a watched process is gone */
    WATCH_EV_DONE,     /* the count is reached, or the target gone, or cancelled: the watch ends */
};

struct watch_event {
    enum watch_event_kind kind;
    double wall; /* seconds since the epoch */
    int pid;
    char comm[64];               /* raw, from /proc/PID/stat (sanitize to show) */
    const struct watch_cond *cond; /* TRIGGER, and the captures it caused */
    double value, held;          /* TRIGGER: the value compared, how long it has held */
    const struct watch_action *action; /* CAPTURE, SKIPPED, FAILED */
    char file[4096];             /* CAPTURE: what was written ("" for exec) */
    unsigned long long bytes;    /* CAPTURE: its size on disk */
    double pause_ms;             /* CAPTURE of a dump: the longest pause the process saw; else -1 */
    double took_ms;              /* CAPTURE: how long the capture took */
    int captures;                /* DONE: how many were taken */
    char msg[768];               /* SKIPPED, FAILED, EXITED, DONE: why; CAPTURE: a detail (a dump's mode, exec's status) */
};

/* Runs until the count is reached (returns 0), the only target is gone (1), the watch is cancelled (0), or it
 * cannot start (-1 with a reason). */
int watch_run(const struct watch_config *c, char *err, size_t errlen);
/* The event kind's name in the JSON log ("watching", "trigger", "capture", ...). */
const char *watch_event_name(enum watch_event_kind kind);
#endif
