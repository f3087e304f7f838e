/* Test target for the restart semantics of snapshot dumps, which make the main thread run system calls.
 * Usage: snaprestart MODE DATA_FIFO CONTROL_FIFO HOLD_FIFO [MIB]
 * MODE says what the main thread does, the one diagtop makes clone the copy:
 *   sleep  loops clock_nanosleep(CLOCK_MONOTONIC, 0, 3 s relative), printing "slept MS rc=RC" after each (an
 *          interrupted sleep restarted from scratch would last longer than 3 s by the time already slept);
 *          a second thread blocks in read() on DATA_FIFO;
 *   read   blocks in read() on DATA_FIFO, printing "read N rc=RC [text]"; a second thread does the sleeps;
 *   wait   has a child (which dies with it) and loops waitpid(-1, &status, 0), printing "waited PID errno=E" for
 *          anything it gets; a second thread polls waitpid(-1, WNOHANG) every millisecond, printing "polled PID"
 *          for anything but 0.
 * A third thread reads CONTROL_FIFO: on "c" it closes its write end of HOLD_FIFO (whose reader must see EOF at
 * once). MIB of dirty heap make the copy live a little. Prints "ready" once everything is open. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int data_fd, control_fd, hold_fd;
static pid_t child;

static void say(const char *fmt, long a, long b)
{
    char line[128];
    int n = snprintf(line, sizeof line, fmt, a, b);
    if (write(STDOUT_FILENO, line, (size_t)n) < 0) exit(2);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void *sleeps(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec d = {3, 0};
        double t0 = now();
        int rc = clock_nanosleep(CLOCK_MONOTONIC, 0, &d, NULL);
        say("slept %ld rc=%ld\n", (long)((now() - t0) * 1000), rc);
    }
    return NULL;
}

static void *reads(void *arg)
{
    (void)arg;
    for (;;) {
        char buf[64] = "";
        ssize_t n = read(data_fd, buf, sizeof buf - 1);
        say("read %ld rc=%ld\n", (long)n, n < 0 ? errno : 0);
        if (n == 0) pause(); /* the writer went away: nothing more to read */
    }
    return NULL;
}

static void *polls(void *arg)
{
    (void)arg;
    for (;;) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p != 0) say("polled %ld errno=%ld\n", p, p < 0 ? errno : 0);
        if (p < 0) sleep(1);
        usleep(1000);
    }
    return NULL;
}

static void waits(void)
{
    for (;;) {
        int st;
        pid_t p = waitpid(-1, &st, 0);
        say("waited %ld errno=%ld\n", p, p < 0 ? errno : 0);
        if (p < 0) sleep(1);
    }
}

static void *control(void *arg)
{
    (void)arg;
    char c;
    while (read(control_fd, &c, 1) == 1)
        if (c == 'c' && hold_fd >= 0) {
            close(hold_fd);
            hold_fd = -1;
            say("closed\n", 0, 0);
        }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 5) return 1;
    const char *mode = argv[1];
    size_t mib = argc > 5 ? strtoul(argv[5], NULL, 10) : 0;
    if (mib) {
        char *p = mmap(NULL, mib << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return 1;
        memset(p, 1, mib << 20);
    }
    /* O_RDWR keeps the FIFOs open without a writer; the hold FIFO is written only. */
    data_fd = open(argv[2], O_RDWR);
    control_fd = open(argv[3], O_RDWR);
    hold_fd = open(argv[4], O_WRONLY);
    if (data_fd < 0 || control_fd < 0 || hold_fd < 0) return 1;
    pthread_t t;
    pthread_create(&t, NULL, control, NULL);
    if (strcmp(mode, "wait") == 0) {
        child = fork();
        if (child == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            for (;;) pause();
        }
        pthread_create(&t, NULL, polls, NULL);
    } else {
        pthread_create(&t, NULL, strcmp(mode, "sleep") == 0 ? reads : sleeps, NULL);
    }
    usleep(100000);
    say("ready child=%ld\n", child, 0);
    if (strcmp(mode, "sleep") == 0) sleeps(NULL);
    else if (strcmp(mode, "read") == 0) reads(NULL);
    else waits();
    return 0;
}
