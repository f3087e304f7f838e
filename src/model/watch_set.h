/* watch_set: watches (model/watch.h) armed inside a program that goes on doing other things: the server's
 * triggers and the monitor's W. Each armed watch runs in a thread of its own until its count is reached, its
 * process is gone, or it is disarmed; the set keeps its last events and counts its firings and captures. The set
 * locks itself; a front end reads it between watch_set_lock and watch_set_unlock.
 * Not armed here: --signal and --exit, which hold a ptrace seize for as long as the watch lasts and wait for
 * SIGCHLD, which the program's other threads would take. */
#ifndef DIAGTOP_WATCH_SET_H
#define DIAGTOP_WATCH_SET_H
#include <pthread.h>
#include <signal.h>
#include <stddef.h>

#include "watch.h"

#define WATCH_SET_MAX 16
#define WATCH_SET_EVENTS 32 /* the last ones of each watch */
#define WATCH_SET_ID 40

/* One event as kept (a watch_event without its pointers). */
struct watch_set_event {
    enum watch_event_kind kind;
    double wall;
    int pid;
    char comm[64];          /* raw, from /proc/PID/stat (sanitize to show) */
    char trigger[32];       /* the condition that fired ("cpu", "rss"...) */
    char trigger_text[96];  /* TRIGGER: the condition as a person reads it (watch_cond_describe) */
    double value;           /* TRIGGER */
    char value_text[32];    /* TRIGGER: the value with its unit (watch_cond_format_value) */
    char action[16];        /* CAPTURE, SKIPPED, FAILED */
    char file[256];         /* CAPTURE: the file's name in the dump directory */
    char path[1024];        /* CAPTURE: the whole path (cut at 1023 bytes) */
    char ref[WATCH_SET_ID]; /* CAPTURE: what the front end's hook named it (a dump resource's id), or "" */
    unsigned long long bytes;
    double pause_ms;
    char msg[256];
};

struct watch_set;

struct watch_set_entry {
    char id[WATCH_SET_ID];
    int seq;                      /* 1, 2, ... in the order armed */
    struct watch_config c;
    char name[256], cgroup[1024]; /* c.name and c.cgroup point here */
    char dir[4096];               /* c.dir points here */
    char spec[1024];              /* what was asked, for listing */
    volatile sig_atomic_t cancel;
    int running;
    int result;                   /* once ended: watch_run's (0 count reached or disarmed, 1 target gone, -1) */
    char error[256];              /* why it could not run */
    int firings, captures, failures;
    struct watch_set_event ev[WATCH_SET_EVENTS];
    unsigned long long nev;       /* events so far; the last WATCH_SET_EVENTS are kept */
    int pids[64], npids;          /* the processes it follows now (from its watching and exited events) */
    double created;               /* wall clock */
    pthread_t thread;
    int joinable;
    struct watch_set *owner;
};

/* Called in the watch's thread for each capture that wrote a file, before the event is kept: may name it in ref
 * (or say in err why it could not). Returns 0 or -1. */
typedef int (*watch_set_capture_hook)(void *arg, const struct watch_event *e, char *ref, size_t reflen, char *err,
                                      size_t errlen);

struct watch_set {
    pthread_mutex_t lock;
    struct watch_set_entry *w[WATCH_SET_MAX];
    int next_seq;
    watch_set_capture_hook on_capture;
    void *hook_arg;
    unsigned long long firings_total, captures_total, failed_total; /* since the set was made */
};

void watch_set_init(struct watch_set *set, watch_set_capture_hook on_capture, void *hook_arg);
/* Disarms every watch, waits for their threads and frees them (the files stay). */
void watch_set_shutdown(struct watch_set *set);
/* Arms a watch of c (its target strings and dir are copied; cancel, on_event and arg are set here) under id (NULL:
 * its sequence number). Returns 0 with the entry's id in id_out (WATCH_SET_ID bytes, may be NULL), -EINVAL for a
 * signal or exit condition, -ENOSPC when WATCH_SET_MAX watches still run, or -errno when no thread starts; err
 * says why. */
int watch_set_arm(struct watch_set *set, const struct watch_config *c, const char *spec, const char *dir,
                  const char *id, char *id_out, char *err, size_t errlen);
/* Stops a watch (a capture in flight is cancelled), waits for it, and forgets it. Returns 0 or -ENOENT. */
int watch_set_disarm(struct watch_set *set, const char *id);

void watch_set_lock(struct watch_set *set);
void watch_set_unlock(struct watch_set *set);
/* Called locked: the entry of id, or NULL. */
struct watch_set_entry *watch_set_find(struct watch_set *set, const char *id);
/* Called locked: the i-th newest-last kept event of e (0 <= i < watch_set_nevents(e)). */
int watch_set_nevents(const struct watch_set_entry *e);
const struct watch_set_event *watch_set_event_at(const struct watch_set_entry *e, int i);

/* Watches running now, and the totals. */
void watch_set_counts(struct watch_set *set, int *armed, unsigned long long *firings, unsigned long long *captures,
                      unsigned long long *failed);
#endif
