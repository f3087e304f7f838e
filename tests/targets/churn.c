/* Test target: threads are born and die all the time (a new one every ~200 us, each living ~1 ms), so a capture
 * meets threads that appear and exit while it stops the process. Prints "ready" at once. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *short_life(void *arg)
{
    (void)arg;
    usleep(1000);
    return NULL;
}

int main(void)
{
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        pthread_t t;
        if (pthread_create(&t, NULL, short_life, NULL) == 0) pthread_detach(t);
        usleep(200);
    }
}
