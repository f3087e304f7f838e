/* A program linked with -ldiagtop-agent that starts the agent with one call (include/diagtop-agent.h), then
 * allocates from keep_block() 1 MiB in 256 blocks and prints "ready SOCKET" (the socket's path), and waits for
 * SIGTERM. With "nostart", it never calls diagtop_agent_start (and so has no socket). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diagtop-agent.h"

static void *blocks[256];

__attribute__((noinline)) static void *keep_block(size_t n)
{
    void *p = malloc(n);
    memset(p, 3, n);
    return p;
}

int main(int argc, char **argv)
{
    int start = !(argc > 1 && !strcmp(argv[1], "nostart"));
    int rc = start ? diagtop_agent_start() : 0;
    for (int i = 0; i < 256; i++) blocks[i] = keep_block(4096);
    char path[256] = "none";
    if (start && rc == 0 && diagtop_agent_socket_path(path, sizeof path) != 0) snprintf(path, sizeof path, "?");
    printf("ready %s %d\n", path, rc);
    fflush(stdout);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sig;
    sigwait(&set, &sig);
    diagtop_agent_stop();
    for (int i = 0; i < 256; i++) free(blocks[i]);
    return 0;
}
