#include "job.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "../util/clock.h"

static void *job_main(void *p)
{
    struct job *j = p;
    j->run(j);
    char done = 1;
    while (write(j->write_fd, &done, 1) < 0 && errno == EINTR) {}
    return NULL;
}

int job_start(struct job *j, void (*run)(struct job *j), void *arg)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) return -errno;
    j->done_fd = fds[0];
    j->write_fd = fds[1];
    j->cancel = 0;
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
        double left = deadline - clock_monotonic_seconds();
        struct pollfd p = {j->done_fd, POLLIN, 0};
        if (poll(&p, 1, left > 0 ? (int)(left * 1000) + 1 : 0) > 0) {
            job_finish(j);
            return 0;
        }
        if (left <= 0) return -ETIMEDOUT; /* left running: if we exit, the kernel detaches its tracees */
    }
}
