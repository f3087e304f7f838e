/* Test target for watch --signal and --exit: prints "ready", then after DELAY seconds (argv[2], default 1) does
 * what argv[1] says from a worker thread named "crasher-worker": "abort" calls abort(), "segv" writes through a
 * NULL pointer, "exit" calls exit(7), "join" returns (the thread ends alone) and main then returns 3. Meanwhile its main thread uses SIGCHLD (a child that exits) and stops and
 * continues itself (SIGSTOP from a child, then SIGCONT), printing "chld" and "cont" when it saw them: the job
 * control a watch must not disturb. argv[3], when given, is mebibytes to allocate and touch first (a big target
 * for bench/watch). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *what = "abort";
static double delay = 1;
static volatile sig_atomic_t got_chld, got_cont;

static void on_chld(int sig) { (void)sig; got_chld = 1; }
static void on_cont(int sig) { (void)sig; got_cont = 1; }

__attribute__((noinline)) static void crash_now(void)
{
    if (strcmp(what, "segv") == 0) *(volatile int *)0 = 1;
    if (strcmp(what, "exit") == 0) exit(7);
    if (strcmp(what, "join") == 0) return;
    abort();
}

static void *worker(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "crasher-worker");
    usleep((useconds_t)(delay * 1e6));
    crash_now();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) what = argv[1];
    if (argc > 2) delay = atof(argv[2]);
    if (argc > 3) {
        size_t len = strtoul(argv[3], NULL, 10) << 20;
        void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return 1;
        memset(p, 0xA5, len); /* every page resident and non-zero */
    }
    signal(SIGCHLD, on_chld);
    signal(SIGCONT, on_cont);
    printf("ready\n");
    fflush(stdout);
    usleep(300000); /* the watch attaches */
    pid_t child = fork();
    if (child == 0) { /* stops its parent, continues it, and exits: SIGSTOP, SIGCONT and SIGCHLD for the parent */
        kill(getppid(), SIGSTOP);
        usleep(100000);
        kill(getppid(), SIGCONT);
        _exit(0);
    }
    while (!got_chld || !got_cont) pause();
    waitpid(child, NULL, 0);
    printf("chld\ncont\n");
    fflush(stdout);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    printf("joined\n");
    fflush(stdout);
    return 3;
}
