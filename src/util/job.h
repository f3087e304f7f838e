/* job: one long action run in a worker thread, so the screen never freezes. The worker writes a byte to a pipe
 * when done; the UI waits on that pipe's read end in its poll() loop. Cancel is a flag the action checks.
 * ptrace's rule (all requests from the attaching thread) holds because the whole action runs in the worker. */
#ifndef DIAGTOP_JOB_H
#define DIAGTOP_JOB_H
#include <pthread.h>
#include <signal.h>

struct job {
    pthread_t thread;
    int running;  /* started and not yet joined */
    int done_fd;  /* readable when the action finished */
    int write_fd;
    volatile sig_atomic_t cancel;
    void (*run)(struct job *j);
    void *arg;     /* the action's input and output */
};

/* Starts run(j) in a thread. Returns 0 or -errno. */
int job_start(struct job *j, void (*run)(struct job *j), void *arg);
/* After done_fd became readable: joins the thread. */
void job_finish(struct job *j);
/* Asks the action to stop and waits up to seconds for it; returns 0 if it ended (and was joined). */
int job_cancel(struct job *j, double seconds);
#endif
