/* Test target: threads blocked on known things, for the stack view's "what it waits on".
 *   sockreader  read() on a TCP socket connected to this process's own listener (the accepted end never writes)
 *   pipereader  read() on a pipe whose only write end a child process holds
 *   futex-K     three threads in FUTEX_WAIT on one word
 *   napper      nanosleep() for an hour
 *   evpoller    poll() on an eventfd
 *   locker      flock() on a file the child process holds locked (with the argument "lock PATH")
 *   main        accept() on the listener
 * With the argument "vfork", a child process instead vforks a grandchild that sleeps: the vforking thread waits
 * uninterruptibly (D) in the kernel until the grandchild exits or the test kills them by PID.
 * Prints one line per fact, then "ready":
 *   tid NAME TID / port LOCAL PEER / pipe WRITER_PID / futex ADDRESS_HEX / dstate PID GRANDCHILD_PID */
#include <arpa/inet.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_barrier_t started;
static int sock_fd, pipe_fd, event_fd, lock_fd = -1;
static volatile int futex_word;

static void announce(const char *name)
{
    prctl(PR_SET_NAME, name);
    printf("tid %s %ld\n", name, (long)syscall(SYS_gettid));
    fflush(stdout);
}

__attribute__((noipa)) static void *sockreader(void *arg)
{
    (void)arg;
    char b[64];
    announce("sockreader");
    pthread_barrier_wait(&started);
    for (;;) if (read(sock_fd, b, sizeof b) <= 0) pause();
    return NULL;
}

__attribute__((noipa)) static void *pipereader(void *arg)
{
    (void)arg;
    char b[64];
    announce("pipereader");
    pthread_barrier_wait(&started);
    for (;;) if (read(pipe_fd, b, sizeof b) <= 0) pause();
    return NULL;
}

__attribute__((noipa)) static void *futexwaiter(void *arg)
{
    char name[16];
    snprintf(name, sizeof name, "futex-%ld", (long)arg);
    announce(name);
    pthread_barrier_wait(&started);
    for (;;) syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    return NULL;
}

__attribute__((noipa)) static void *napper(void *arg)
{
    (void)arg;
    announce("napper");
    pthread_barrier_wait(&started);
    for (;;) {
        struct timespec ts = {3600, 0};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

__attribute__((noipa)) static void *evpoller(void *arg)
{
    (void)arg;
    announce("evpoller");
    pthread_barrier_wait(&started);
    for (;;) {
        struct pollfd p = {.fd = event_fd, .events = POLLIN};
        poll(&p, 1, -1);
    }
    return NULL;
}

__attribute__((noipa)) static void *locker(void *arg)
{
    (void)arg;
    announce("locker");
    pthread_barrier_wait(&started);
    for (;;) if (lock_fd < 0 || flock(lock_fd, LOCK_EX) == 0) pause();
    return NULL;
}

/* A child that vforks: it sits in D until the grandchild exits. The grandchild dies with it (PDEATHSIG). */
static void vforker(void)
{
    int report[2];
    if (pipe(report) < 0) exit(1);
    pid_t child = fork();
    if (child < 0) exit(1);
    if (child == 0) {
        close(report[0]);
        pid_t g = vfork();
        if (g == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            char line[64];
            int n = snprintf(line, sizeof line, "dstate %d %d\n", (int)getppid(), (int)getpid());
            if (write(report[1], line, (size_t)n) < 0) _exit(1);
            for (;;) syscall(SYS_pause);
        }
        _exit(0);
    }
    close(report[1]);
    char line[64];
    ssize_t n = read(report[0], line, sizeof line - 1);
    if (n <= 0) exit(1);
    line[n] = '\0';
    fputs(line, stdout);
    puts("ready");
    fflush(stdout);
    for (;;) pause();
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (argc > 1 && strcmp(argv[1], "vfork") == 0) vforker();

    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    if (listener < 0 || bind(listener, (struct sockaddr *)&a, sizeof a) < 0 || listen(listener, 8) < 0 ||
        getsockname(listener, (struct sockaddr *)&a, &alen) < 0)
        return 1;
    sock_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (sock_fd < 0 || connect(sock_fd, (struct sockaddr *)&a, sizeof a) < 0) return 1;
    int served = accept(listener, NULL, NULL);
    struct sockaddr_in local, peer;
    socklen_t llen = sizeof local, plen = sizeof peer;
    getsockname(sock_fd, (struct sockaddr *)&local, &llen);
    getpeername(sock_fd, (struct sockaddr *)&peer, &plen);
    printf("port %d %d\n", ntohs(local.sin_port), ntohs(peer.sin_port));

    int p[2], locked[2];
    if (served < 0 || pipe(p) < 0 || pipe(locked) < 0) return 1;
    const char *lock_path = argc > 2 && strcmp(argv[1], "lock") == 0 ? argv[2] : NULL;
    pid_t writer = fork();
    if (writer == 0) { /* holds the write end and the lock, writes nothing, dies with us */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(p[0]);
        int fd = lock_path ? open(lock_path, O_RDWR | O_CREAT, 0600) : -1;
        if (fd >= 0) flock(fd, LOCK_EX);
        if (write(locked[1], "k", 1) < 0) _exit(1);
        for (;;) pause();
    }
    char k;
    if (read(locked[0], &k, 1) != 1) return 1;
    if (lock_path) lock_fd = open(lock_path, O_RDWR);
    close(p[1]);
    pipe_fd = p[0];
    printf("pipe %d\nfutex %lx\n", (int)writer, (unsigned long)&futex_word);
    event_fd = eventfd(0, 0);

    pthread_barrier_init(&started, NULL, 9);
    pthread_t t;
    pthread_create(&t, NULL, sockreader, NULL);
    pthread_create(&t, NULL, pipereader, NULL);
    for (long k = 1; k <= 3; k++) pthread_create(&t, NULL, futexwaiter, (void *)k);
    pthread_create(&t, NULL, napper, NULL);
    pthread_create(&t, NULL, evpoller, NULL);
    pthread_create(&t, NULL, locker, NULL);
    pthread_barrier_wait(&started);
    usleep(200 * 1000); /* every thread inside its call */
    puts("ready");
    fflush(stdout);
    for (;;) accept(listener, NULL, NULL);
}
