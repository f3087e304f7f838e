/* Test and benchmark target: forks N idle children (argv[1]). On SIGTERM it kills each child by PID and reaps it
 * before exiting, so the caller only has to stop and reap this one process. Prints "ready N" when all exist. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static void on_term(int sig) { (void)sig; stop = 1; }

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100;
    pid_t *kids = calloc((size_t)n, sizeof *kids);
    struct sigaction sa = {0};
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    pid_t parent = getpid();
    int made = 0;
    for (; made < n && !stop; made++) {
        pid_t pid = fork();
        if (pid < 0) break;
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the parent, even if it is killed hard */
            if (getppid() != parent) _exit(0);
            for (;;) pause();
        }
        kids[made] = pid;
    }
    printf("ready %d\n", made);
    fflush(stdout);
    while (!stop) pause();
    for (int i = 0; i < made; i++) kill(kids[i], SIGKILL);
    for (int i = 0; i < made; i++) waitpid(kids[i], NULL, 0);
    return 0;
}
