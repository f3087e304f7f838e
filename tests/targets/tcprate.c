/* Test target: a TCP stream at a known rate over loopback. "tcprate recv" listens on 127.0.0.1 (a port of the
 * kernel's choice), prints "ready PORT", accepts a connection and reads it to the end, then the next, and so on;
 * "tcprate send PORT RATE [SECONDS]" connects, prints "ready" and sends RATE bytes a second in 16 KiB writes,
 * evenly paced; with SECONDS it closes the connection that often and makes a new one (same descriptor number,
 * same count: a connection pool's reconnect). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (16 * 1024)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int receive(void)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, 1) < 0 ||
        getsockname(ls, (struct sockaddr *)&a, &len) < 0)
        return 1;
    printf("ready %d\n", ntohs(a.sin_port));
    fflush(stdout);
    static char buf[CHUNK];
    for (;;) {
        int c = accept(ls, NULL, NULL);
        if (c < 0) return 1;
        while (read(c, buf, sizeof buf) > 0) {}
        close(c);
    }
}

static int connect_to(int port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0) return s;
    if (s >= 0) close(s);
    return -1;
}

static int send_at(int port, double rate, double reconnect)
{
    int s = connect_to(port);
    if (s < 0) return 1;
    printf("ready\n");
    fflush(stdout);
    static char buf[CHUNK];
    memset(buf, 'x', sizeof buf);
    double t0 = now_s(), connected = t0;
    for (long sent = 0;;) {
        if (reconnect > 0 && now_s() - connected >= reconnect) {
            close(s);
            if ((s = connect_to(port)) < 0) return 1;
            connected = now_s();
        }
        if (sent < (long)((now_s() - t0) * rate)) {
            if (write(s, buf, sizeof buf) != (ssize_t)sizeof buf) return 1;
            sent += CHUNK;
        } else {
            usleep(2000);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "recv") == 0) return receive();
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "send") == 0)
        return send_at(atoi(argv[2]), atof(argv[3]), argc == 5 ? atof(argv[4]) : 0);
    fprintf(stderr, "usage: tcprate recv | tcprate send PORT RATE [SECONDS]\n");
    return 2;
}
