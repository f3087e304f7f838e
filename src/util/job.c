#include "job.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"

static void send_byte(struct job *j, char c)
{
    while (write(j->write_fd, &c, 1) < 0 && errno == EINTR) {}
}

static void *job_main(void *p)
{
    struct job *j = p;
    j->run(j);
    send_byte(j, 'd');
    return NULL;
}

int job_fd(const struct job *j) { return j->running ? j->done_fd : -1; }

int job_start(struct job *j, void (*run)(struct job *j), void *arg)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0) return -errno;
    j->done_fd = fds[0];
    j->write_fd = fds[1];
    j->cancel = 0;
    j->finished = 0;
    j->run = run;
    j->arg = arg;
    /* The worker must not take the terminal's signals: they are for the UI thread. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&j->thread, NULL, job_main, j);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        close(fds[0]);
        close(fds[1]);
        return -rc;
    }
    j->running = 1;
    return 0;
}

/* Notifications are coalesced by the reader: a full pipe (the UI not reading) drops further ones, never blocks. */
void job_notify(struct job *j) { send_byte(j, 'n'); }

int job_events(struct job *j)
{
    int events = j->finished ? JOB_DONE : 0;
    char buf[64];
    ssize_t n;
    while ((n = read(j->done_fd, buf, sizeof buf)) > 0)
        for (ssize_t i = 0; i < n; i++) events |= buf[i] == 'd' ? JOB_DONE : JOB_NOTIFIED;
    if (events & JOB_DONE) j->finished = 1;
    return events;
}

void job_finish(struct job *j)
{
    if (!j->running) return;
    pthread_join(j->thread, NULL);
    close(j->done_fd);
    close(j->write_fd);
    j->running = 0;
}

int job_cancel(struct job *j, double seconds)
{
    if (!j->running) return 0;
    j->cancel = 1;
    double deadline = clock_monotonic_seconds() + seconds;
    for (;;) {
        if (job_events(j) & JOB_DONE) {
            job_finish(j);
            return 0;
        }
        double left = deadline - clock_monotonic_seconds();
        if (left <= 0) return -ETIMEDOUT; /* left running: if we exit, the kernel detaches its tracees */
        struct pollfd p = {j->done_fd, POLLIN, 0};
        poll(&p, 1, (int)(left * 1000) + 1);
    }
}
