/* Test target: moves known rates of bytes to and from storage. Usage: diskio DIR WRITE_BPS READ_BPS.
 * Writes WRITE_BPS bytes a second in 64 KiB chunks, evenly paced, each made durable with fdatasync (so the disk
 * sees them now, not at writeback), over and over the same 16 MiB of DIR/diskio.PID.w; reads READ_BPS a second
 * with O_DIRECT (past the page cache, so every byte is a storage read) from a 16 MiB file written first. Prints
 * "ready" once both files exist and the paced loop starts. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (64 * 1024)
#define SPAN (16L * 1024 * 1024)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int open_file(const char *dir, const char *kind, int flags)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/diskio.%d.%s", dir, (int)getpid(), kind);
    int fd = open(path, flags | O_CREAT, 0600);
    if (fd < 0) perror(path);
    return fd;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: diskio DIR WRITE_BPS READ_BPS\n");
        return 2;
    }
    double wbps = atof(argv[2]), rbps = atof(argv[3]);
    void *buf;
    if (posix_memalign(&buf, 4096, CHUNK)) return 1;
    memset(buf, 0x5a, CHUNK);
    int wfd = open_file(argv[1], "w", O_WRONLY);
    int rfd = open_file(argv[1], "r", O_RDWR);
    if (wfd < 0 || rfd < 0) return 1;
    for (long off = 0; off < SPAN; off += CHUNK)
        if (pwrite(rfd, buf, CHUNK, off) != CHUNK) return 1;
    fsync(rfd);
    close(rfd);
    rfd = open_file(argv[1], "r", O_RDONLY | O_DIRECT);
    if (rfd < 0) return 1;
    printf("ready\n");
    fflush(stdout);

    double t0 = now_s();
    long written = 0, read_total = 0, woff = 0, roff = 0;
    for (;;) {
        double t = now_s() - t0;
        /* whichever stream is behind its schedule moves a chunk; otherwise sleep a little */
        if (wbps > 0 && written < (long)(t * wbps)) {
            if (pwrite(wfd, buf, CHUNK, woff) != CHUNK || fdatasync(wfd) < 0) return 1;
            written += CHUNK;
            woff = (woff + CHUNK) % SPAN;
        } else if (rbps > 0 && read_total < (long)(t * rbps)) {
            if (pread(rfd, buf, CHUNK, roff) != CHUNK) return 1;
            read_total += CHUNK;
            roff = (roff + CHUNK) % SPAN;
        } else {
            usleep(2000);
        }
    }
}
