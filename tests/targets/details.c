/* Test target for process details: touches PRIVATE MiB of anonymous memory and SHARED MiB of a shared mapping,
 * opens FILES extra descriptors, listens on 127.0.0.1 (an ephemeral port), runs a second thread, then prints
 * "ready port=P pid=N" and sleeps. Usage: details PRIVATE SHARED FILES */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

static void *helper(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "helper");
    for (;;) pause();
    return NULL;
}

int main(int argc, char **argv)
{
    size_t priv = (argc > 1 ? strtoul(argv[1], NULL, 10) : 64) << 20;
    size_t shared = (argc > 2 ? strtoul(argv[2], NULL, 10) : 16) << 20;
    int files = argc > 3 ? atoi(argv[3]) : 5;
    char *p = mmap(NULL, priv, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *s = mmap(NULL, shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || s == MAP_FAILED) return 1;
    memset(p, 0x11, priv);
    memset(s, 0x22, shared);
    for (int i = 0; i < files; i++)
        if (open("/dev/null", O_RDONLY) < 0) return 1;
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 4) < 0 ||
        getsockname(l, (struct sockaddr *)&a, &alen) < 0)
        return 1;
    pthread_t t;
    pthread_create(&t, NULL, helper, NULL);
    printf("ready port=%d pid=%d\n", ntohs(a.sin_port), (int)getpid());
    fflush(stdout);
    for (;;) pause();
}
