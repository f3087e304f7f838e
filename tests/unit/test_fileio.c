/* Writing everything (pipes, files, through signals) and creating private files that refuse what exists. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "check.h"
#include "util/fileio.h"

#define BIG (1 << 20) /* 16 times a pipe's buffer: the writer blocks and is interrupted mid-way */

static char dir[256];

static void path_in_dir(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
}

struct drain {
    int fd;
    size_t got;
    unsigned char *buf;
};

static void *drain(void *arg)
{
    struct drain *d = arg;
    usleep(20000); /* let the writer fill the pipe and block */
    for (;;) {
        ssize_t r = read(d->fd, d->buf + d->got, BIG - d->got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        d->got += (size_t)r;
    }
    return NULL;
}

static volatile sig_atomic_t alarms;
static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

static void write_full_gets_everything_through_a_pipe(void)
{
    unsigned char *data = malloc(BIG);
    for (size_t i = 0; i < BIG; i++) data[i] = (unsigned char)(i * 7 + i / 251);
    int p[2];
    CHECK_INT(pipe(p), 0);
    struct drain d = {p[0], 0, malloc(BIG)};
    /* The reader never takes the alarm, so the writer's blocked write() is interrupted (EINTR, or a short count). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_t th;
    pthread_create(&th, NULL, drain, &d);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm; /* no SA_RESTART */
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 2000}, {0, 2000}};
    setitimer(ITIMER_REAL, &it, NULL);
    CHECK_INT(fileio_write_full(p[1], data, BIG), 0);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    close(p[1]);
    pthread_join(th, NULL);
    close(p[0]);
    CHECK_INT(d.got, BIG);
    CHECK(memcmp(d.buf, data, BIG) == 0);
    CHECK(alarms > 0);
    free(d.buf);
    free(data);
}

static void write_full_reports_errors(void)
{
    int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        CHECK_INT(fileio_write_full(fd, "x", 1), -ENOSPC);
        close(fd);
    }
    CHECK_INT(fileio_write_full(-1, "x", 1), -EBADF);
    int p[2];
    CHECK_INT(pipe(p), 0);
    close(p[0]);
    signal(SIGPIPE, SIG_IGN);
    CHECK_INT(fileio_write_full(p[1], "x", 1), -EPIPE);
    close(p[1]);
    CHECK_INT(fileio_write_full(-1, "", 0), 0); /* nothing to write: no call */
}

static void pwrite_full_writes_at_an_offset(void)
{
    char path[512], back[8] = "";
    path_in_dir(path, sizeof path, "pw");
    int fd = fileio_create_private(AT_FDCWD, path, O_RDWR);
    CHECK(fd >= 0);
    CHECK_INT(fileio_pwrite_full(fd, "tail", 4, 4096), 0);
    CHECK_INT(fileio_pwrite_full(fd, "head", 4, 0), 0);
    struct stat st;
    CHECK_INT(fstat(fd, &st), 0);
    CHECK_INT(st.st_size, 4100);
    CHECK_INT(pread(fd, back, 4, 0), 4);
    CHECK_STR(back, "head");
    CHECK_INT(pread(fd, back, 4, 4096), 4);
    CHECK_STR(back, "tail");
    CHECK_INT(pread(fd, back, 1, 100), 1);
    CHECK_INT(back[0], 0); /* the hole reads as zeros */
    close(fd);
}

static void create_private_makes_a_new_0600_file(void)
{
    char path[512];
    path_in_dir(path, sizeof path, "new");
    int fd = fileio_create_private(AT_FDCWD, path, O_WRONLY);
    CHECK(fd >= 0);
    struct stat st;
    CHECK_INT(fstat(fd, &st), 0);
    CHECK_INT(st.st_mode & 07777, 0600);
    CHECK((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
    CHECK_INT(fileio_write_full(fd, "secret", 6), 0);
    close(fd);
    /* relative to a directory descriptor */
    int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    fd = fileio_create_private(dfd, "rel", O_RDWR);
    CHECK(fd >= 0);
    close(fd);
    path_in_dir(path, sizeof path, "rel");
    CHECK_INT(access(path, F_OK), 0);
    close(dfd);
}

static void create_private_refuses_what_exists(void)
{
    char path[512], target[512], link[512], dangling[512], buf[16] = "";
    path_in_dir(path, sizeof path, "new"); /* made by the test above */
    CHECK_INT(fileio_create_private(AT_FDCWD, path, O_WRONLY), -EEXIST);
    CHECK_INT(errno, EEXIST);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    CHECK_INT(read(fd, buf, sizeof buf - 1), 6); /* untouched */
    close(fd);
    /* a symlink to an existing file, and one to a name that does not exist yet: neither is followed */
    path_in_dir(target, sizeof target, "target");
    path_in_dir(link, sizeof link, "link");
    fd = open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    close(fd);
    CHECK_INT(symlink(target, link), 0);
    CHECK_INT(fileio_create_private(AT_FDCWD, link, O_WRONLY), -EEXIST);
    path_in_dir(dangling, sizeof dangling, "dangling");
    path_in_dir(target, sizeof target, "planted");
    CHECK_INT(symlink(target, dangling), 0);
    CHECK_INT(fileio_create_private(AT_FDCWD, dangling, O_WRONLY), -EEXIST);
    CHECK_INT(access(target, F_OK), -1); /* the symlink's target was not created */
    path_in_dir(path, sizeof path, "no/such/dir");
    CHECK_INT(fileio_create_private(AT_FDCWD, path, O_WRONLY), -ENOENT);
}

static void cleanup(void)
{
    const char *names[] = {"pw", "new", "rel", "target", "link", "dangling"};
    char path[512];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        path_in_dir(path, sizeof path, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

int main(void)
{
    check_suite = "fileio";
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/diagtop-fileio-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    umask(022);
    RUN(write_full_gets_everything_through_a_pipe);
    RUN(write_full_reports_errors);
    RUN(pwrite_full_writes_at_an_offset);
    RUN(create_private_makes_a_new_0600_file);
    RUN(create_private_refuses_what_exists);
    cleanup();
    CHECK_EXIT();
}
