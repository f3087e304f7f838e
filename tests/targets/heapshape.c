/* Test target: a native heap of known shape, for reading glibc's malloc out of a core. The main thread holds 995
 * blocks of 1000 bytes (chunks of 1008; 5 more freed into its tcache), each starting "heapshape block N", and 30
 * of 88 bytes (chunks of 96; 20 more freed: 7 into the tcache, 13 into a fastbin, freed last and stdout unbuffered
 * so that no bigger request consolidates them). A thread ("arena-a") holds 296 of 1800 bytes (chunks of 1808; 4
 * freed, too big for the tcache: one free chunk) in an arena of its own, another ("mmapper") 3 blocks of 300000
 * bytes, each mmapped. Prints "ready" when all is in place, then every thread waits. With "leak": one more thread
 * ("leaker") then allocates 700 bytes (chunks of 720) every 5 ms and never frees them. With "fill MIB": also MIB
 * mebibytes in blocks of 16 to 2048 bytes (a heap for bench/analyze to walk). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static pthread_barrier_t placed;
static void *keep[2000];

static void fill(void **blocks, int n, size_t size, const char *tag)
{
    for (int i = 0; i < n; i++) {
        blocks[i] = malloc(size);
        snprintf(blocks[i], size, "%s block %d", tag, i);
    }
}

static void *arena_a(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "arena-a");
    static void *b[300];
    fill(b, 300, 1800, "arena-a");
    for (int i = 0; i < 4; i++) free(b[i]);
    pthread_barrier_wait(&placed);
    for (;;) pause();
    return NULL;
}

static void *mmapper(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "mmapper");
    static void *b[3];
    fill(b, 3, 300000, "mmapper");
    pthread_barrier_wait(&placed);
    for (;;) pause();
    return NULL;
}

static void *leaker(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "leaker");
    struct timespec t = {0, 5000000};
    for (int i = 0;; i++) {
        char *p = malloc(700);
        snprintf(p, 700, "leaked %d", i);
        nanosleep(&t, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t;
    setvbuf(stdout, NULL, _IONBF, 0);
    pthread_barrier_init(&placed, NULL, 3);
    fill(keep, 1000, 1000, "heapshape");
    fill(keep + 1000, 50, 88, "small");
    pthread_create(&t, NULL, arena_a, NULL);
    pthread_create(&t, NULL, mmapper, NULL);
    if (argc > 1 && strcmp(argv[1], "leak") == 0) pthread_create(&t, NULL, leaker, NULL);
    if (argc > 2 && strcmp(argv[1], "fill") == 0) {
        unsigned long long want = strtoull(argv[2], NULL, 10) << 20, have = 0;
        for (unsigned seed = 1; have < want; have += 16 + seed % 2033) {
            seed = seed * 1103515245u + 12345u;
            memcpy(malloc(16 + seed % 2033), "fill", 5);
        }
    }
    pthread_barrier_wait(&placed);
    for (int i = 0; i < 5; i++) free(keep[i]);
    for (int i = 0; i < 20; i++) free(keep[1000 + i]);
    printf("ready\n");
    for (;;) pause();
}
