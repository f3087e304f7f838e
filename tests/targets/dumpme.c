/* Test and benchmark target for core dumps. Usage: dumpme DIRTY_MIB ZERO_MIB UNTOUCHED_MIB [GAPFILE]
 * Three worker threads parked in named functions, a known string at an address it prints, a 4 MiB MADV_DONTDUMP
 * region full of 0xEE, DIRTY_MIB of written memory, ZERO_MIB written with zeros and UNTOUCHED_MIB never touched.
 * Prints "ready string=0xADDR dontdump=0xADDR" once everything is in place. With GAPFILE, a thread wakes every
 * millisecond and keeps there the largest gap beyond that millisecond, in microseconds (how long the process was
 * stopped, seen from inside); SIGUSR2 resets it. Also with GAPFILE, SIGUSR1 makes the main thread time one fork() of
 * itself (the kernel's floor for a snapshot's pause at this size; the child sleeps until killed) and write it to
 * GAPFILE.fork, in microseconds. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static const char known[] = "DIAGTOP-KNOWN-STRING-4242";

__attribute__((noipa)) static void dump_worker_park(void)
{
    for (;;) pause();
}

__attribute__((noipa)) static void *dump_worker(void *arg)
{
    (void)arg;
    dump_worker_park();
    return NULL;
}

static volatile sig_atomic_t gap_reset, fork_asked;
static void on_usr2(int sig) { (void)sig; gap_reset = 1; }
static void on_usr1(int sig) { (void)sig; fork_asked = 1; }

/* The fork alone, as the parent sees it: from the call to its return (the page tables are copied by then). The
 * child sleeps until killed after the timing, as a snapshot's copy waits: exiting at once could make the parent
 * wait for the child's teardown of those page tables. */
static void time_fork(const char *gapfile)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    pid_t c = fork();
    if (c == 0)
        for (;;) pause();
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (c > 0) kill(c, SIGKILL), waitpid(c, NULL, 0);
    char path[4096], buf[32];
    snprintf(path, sizeof path, "%s.fork", gapfile);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int n = snprintf(buf, sizeof buf, "%.0f\n", c < 0 ? -1.0 : (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3);
    if (fd >= 0 && write(fd, buf, (size_t)n) < 0) n = 0;
    if (fd >= 0) close(fd);
}

static void *gap_meter(void *arg)
{
    int fd = open((const char *)arg, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    struct timespec a, b, ms = {0, 1000000};
    double worst = 0;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (;;) {
        clock_nanosleep(CLOCK_MONOTONIC, 0, &ms, NULL);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double gap = (b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3 - 1000.0;
        a = b;
        if (gap_reset) gap_reset = 0, worst = 0, gap = 0;
        if (gap > worst || worst == 0) {
            if (gap > worst) worst = gap;
            char buf[32];
            int n = snprintf(buf, sizeof buf, "%.0f\n", worst);
            if (pwrite(fd, buf, (size_t)n, 0) < 0 || ftruncate(fd, n) < 0) break;
        }
    }
    return NULL;
}

static void *region(size_t mib)
{
    void *p = mmap(NULL, mib << 20 ? mib << 20 : 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) exit(1);
    return p;
}

int main(int argc, char **argv)
{
    size_t dirty = argc > 1 ? strtoul(argv[1], NULL, 10) : 16;
    size_t zero = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
    size_t untouched = argc > 3 ? strtoul(argv[3], NULL, 10) : 0;
    char *s = malloc(64);
    strcpy(s, known);
    char *d = region(dirty);
    for (size_t i = 0; i < dirty << 20; i += 4096) memset(d + i, (int)(i / 4096 % 200) + 1, 4096); /* never 0xEE */
    char *z = region(zero);
    for (size_t i = 0; i < zero << 20; i += 4096) z[i] = 0; /* touched, but zeros */
    (void)region(untouched);
    char *dd = region(4);
    memset(dd, 0xEE, 4 << 20);
    madvise(dd, 4 << 20, MADV_DONTDUMP);
    for (int i = 0; i < 3; i++) {
        pthread_t t;
        pthread_create(&t, NULL, dump_worker, NULL);
    }
    if (argc > 4) {
        signal(SIGUSR2, on_usr2);
        signal(SIGUSR1, on_usr1);
        pthread_t t;
        pthread_create(&t, NULL, gap_meter, argv[4]);
    }
    usleep(50000);
    printf("ready string=%p dontdump=%p\n", (void *)s, (void *)dd);
    fflush(stdout);
    for (;;) {
        pause();
        if (fork_asked) fork_asked = 0, time_fork(argv[4]);
    }
}
