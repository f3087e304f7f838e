/* job: one long action run in a worker thread, so the screen never freezes. The worker writes a byte to a pipe
 * when done, and may write others on the way (job_notify: "a new partial result is ready"); the UI waits on the
 * pipe's read end in its poll() loop. Cancel is a flag the action checks.
 * ptrace's rule (all requests from the attaching thread) holds because the whole action runs in the worker. */
#ifndef DIAGTOP_JOB_H
#define DIAGTOP_JOB_H
#include <pthread.h>
#include <signal.h>

struct job {
    pthread_t thread;
    int running;  /* started and not yet joined */
    int done_fd;  /* readable when the action finished or notified */
    int write_fd;
    int finished; /* the done byte was seen by job_events */
    volatile sig_atomic_t cancel;
    void (*run)(struct job *j);
    void *arg;     /* the action's input and output */
};

enum job_event { JOB_NOTIFIED = 1, JOB_DONE = 2 };

/* The descriptor to wait on while the job runs, -1 when it does not. */
int job_fd(const struct job *j);
/* Starts run(j) in a thread. Returns 0 or -errno. */
int job_start(struct job *j, void (*run)(struct job *j), void *arg);
/* From the worker: wakes the UI (done_fd becomes readable) with JOB_NOTIFIED. */
void job_notify(struct job *j);
/* After done_fd became readable: what happened since the last call (JOB_NOTIFIED and/or JOB_DONE flags). */
int job_events(struct job *j);
/* After JOB_DONE, or when done_fd became readable for a job that never notifies: joins the thread. */
void job_finish(struct job *j);
/* Asks the action to stop and waits up to seconds for it; returns 0 if it ended (and was joined). */
int job_cancel(struct job *j, double seconds);
#endif
