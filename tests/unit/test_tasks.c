/* The thread ids of a live, multi-threaded process (this test), and pidfds that name one process. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "util/pidfd.h"
#include "util/tasks.h"
#include "util/text.h"

#define NTHREADS 4

static pthread_barrier_t started, done;
static int tids[NTHREADS];

static void *worker(void *arg)
{
    tids[(long)arg] = gettid();
    pthread_barrier_wait(&started);
    pthread_barrier_wait(&done); /* stays alive until the listing is over */
    return NULL;
}

/* Every id the iterator gives, with a count of how often each expected id was seen. */
static int list(int procfd, int *seen_self, int seen[NTHREADS])
{
    struct tasks it;
    int rc = tasks_open(&it, procfd, getpid()), n = 0, tid;
    CHECK_INT(rc, 0);
    if (rc < 0) return -1;
    while ((tid = tasks_next(&it))) {
        n++;
        if (tid == getpid()) ++*seen_self;
        for (int i = 0; i < NTHREADS; i++)
            if (tid == tids[i]) seen[i]++;
    }
    CHECK_INT(tasks_next(&it), 0); /* stays at the end */
    tasks_close(&it);
    CHECK_INT(tasks_next(&it), 0); /* and after closing */
    tasks_close(&it);              /* twice is harmless */
    return n;
}

static void lists_every_thread_of_a_live_process(void)
{
    pthread_t th[NTHREADS];
    pthread_barrier_init(&started, NULL, NTHREADS + 1);
    pthread_barrier_init(&done, NULL, NTHREADS + 1);
    for (long i = 0; i < NTHREADS; i++) pthread_create(&th[i], NULL, worker, (void *)i);
    pthread_barrier_wait(&started);
    for (int way = 0; way < 2; way++) { /* through "/proc/PID/task", then relative to an open /proc */
        int procfd = way ? open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : AT_FDCWD;
        int self = 0, seen[NTHREADS] = {0};
        int n = list(procfd, &self, seen);
        /* ASan may run threads of its own; ours are there exactly once each */
        CHECK(n >= NTHREADS + 1);
        CHECK_INT(self, 1);
        for (int i = 0; i < NTHREADS; i++) CHECK_INT(seen[i], 1);
        if (procfd >= 0) close(procfd);
    }
    pthread_barrier_wait(&done);
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&started);
    pthread_barrier_destroy(&done);
}

static void a_missing_process_is_an_error(void)
{
    struct tasks it;
    CHECK_INT(tasks_open(&it, AT_FDCWD, TEXT_PID_MAX + 1), -ENOENT); /* no pid is above the ceiling */
    CHECK_INT(errno, ENOENT);
    CHECK_INT(tasks_next(&it), 0);
    tasks_close(&it);
}

static void pidfd_signals_the_process_it_names(void)
{
    pid_t child = fork();
    if (child == 0) {
        for (;;) pause();
    }
    CHECK(child > 0);
    int fd = pidfd_of(child);
    CHECK(fd >= 0);
    CHECK_INT(pidfd_signal(fd, 0), 0); /* alive */
    CHECK_INT(pidfd_signal(fd, SIGKILL), 0);
    struct pollfd pf = {fd, POLLIN, 0};
    CHECK_INT(poll(&pf, 1, 5000), 1); /* readable once it exited */
    int st = 0;
    CHECK_INT(waitpid(child, &st, 0), child);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    CHECK_INT(pidfd_signal(fd, 0), -ESRCH); /* reaped: the pidfd still names it, and it is gone */
    close(fd);
    CHECK_INT(pidfd_signal(-1, 0), -EBADF);
    CHECK_INT(errno, EBADF);
    CHECK_INT(pidfd_of(TEXT_PID_MAX + 1), -ESRCH);
}

int main(void)
{
    check_suite = "tasks";
    RUN(lists_every_thread_of_a_live_process);
    RUN(a_missing_process_is_an_error);
    RUN(pidfd_signals_the_process_it_names);
    CHECK_EXIT();
}
