/* Test target for snapshot dumps of processes that a clone could hurt. Usage: snapseccomp MODE
 *   filter  installs a seccomp filter that kills the process on clone and clone3 (after starting its thread);
 *   fork    the same, then forks: dies of SIGSYS at once (the filter works);
 *   none    no filter (for a process limit that refuses the clone: thread creation may fail, which is fine).
 * A worker thread sleeps; a known string sits at the address it prints: "ready string=0xADDR". */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *worker(void *arg)
{
    (void)arg;
    for (;;) pause();
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "filter";
    static char known[] = "DIAGTOP-SECCOMP-KNOWN";
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    if (strcmp(mode, "none") != 0) {
        struct sock_filter f[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 2, 0),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 1, 0),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        };
        struct sock_fprog prog = {sizeof f / sizeof *f, f};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
            perror("seccomp");
            return 1;
        }
    }
    if (strcmp(mode, "fork") == 0) fork();
    printf("ready string=%p\n", (void *)known);
    fflush(stdout);
    for (;;) pause();
}
