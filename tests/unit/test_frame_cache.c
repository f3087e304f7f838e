/* frame_cache: frames put in one run are read in the next; two writers' records both survive; a torn, corrupt or
 * foreign file is never trusted beyond its last good record, and the next close writes it anew. */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actions/stack/frame_cache.h"
#include "check.h"

#define ID "00112233445566778899aabbccddeeff00112233"

static char dir[256], file[400];

static void put_two(unsigned long long off, const char *fn)
{
    struct frame_cache *fc = frame_cache_open(ID);
    CHECK(fc != NULL);
    struct stack_frame f[2] = {{.inlined = 1, .function = (char *)"inner", .file = (char *)"/src/a.c", .line = 7},
                               {.function = (char *)fn, .offset = 0x42, .file = NULL, .line = 0}};
    frame_cache_put(fc, off, 1, 1, f, 2);
    frame_cache_close(fc);
}

/* Whether off reads back as put_two wrote it, with fn outermost. */
static int reads_back(unsigned long long off, const char *fn)
{
    struct frame_cache *fc = frame_cache_open(ID);
    struct stack_frame out[8];
    int n = frame_cache_get(fc, off, 1, 1, out, 8);
    int ok = n == 2 && out[0].inlined && strcmp(out[0].function, "inner") == 0 &&
             strcmp(out[0].file, "/src/a.c") == 0 && out[0].line == 7 && !out[1].inlined &&
             strcmp(out[1].function, fn) == 0 && out[1].offset == 0x42 && out[1].file == NULL;
    for (int i = 0; i < n; i++) stack_frame_clear(&out[i]);
    frame_cache_close(fc);
    return ok;
}

static int misses(unsigned long long off, int return_address, int want_source)
{
    struct frame_cache *fc = frame_cache_open(ID);
    struct stack_frame out[8];
    int n = frame_cache_get(fc, off, return_address, want_source, out, 8);
    for (int i = 0; i < n; i++) stack_frame_clear(&out[i]);
    frame_cache_close(fc);
    return n == 0;
}

static void test_round_trip(void)
{
    put_two(0x1000, "outer");
    CHECK(reads_back(0x1000, "outer"));
    CHECK(misses(0x1001, 1, 1));
    CHECK(misses(0x1000, 0, 1)); /* the same offset as an exact PC is another question */
    CHECK(misses(0x1000, 1, 0));
    struct stat st;
    CHECK(stat(file, &st) == 0 && (st.st_mode & 0777) == 0600);
}

static void test_two_writers(void)
{
    /* Both open before either closes, as two diagtops at once: each appends its own records. */
    struct frame_cache *a = frame_cache_open(ID), *b = frame_cache_open(ID);
    struct stack_frame fa = {.function = (char *)"from_a", .offset = 0x42}, fb = {.function = (char *)"from_b"};
    frame_cache_put(a, 0x2000, 1, 1, &fa, 1);
    frame_cache_put(b, 0x3000, 1, 1, &fb, 1);
    frame_cache_close(a);
    frame_cache_close(b);
    struct frame_cache *fc = frame_cache_open(ID);
    struct stack_frame out[4];
    CHECK_INT(frame_cache_get(fc, 0x2000, 1, 1, out, 4), 1);
    CHECK_STR(out[0].function, "from_a");
    stack_frame_clear(&out[0]);
    CHECK_INT(frame_cache_get(fc, 0x3000, 1, 1, out, 4), 1);
    CHECK_STR(out[0].function, "from_b");
    stack_frame_clear(&out[0]);
    frame_cache_close(fc);
    CHECK(reads_back(0x1000, "outer"));
}

static void test_torn_and_foreign_files(void)
{
    struct stat st;
    CHECK(stat(file, &st) == 0);
    CHECK(truncate(file, st.st_size - 3) == 0); /* the last record torn, as by a crash mid-write */
    CHECK(reads_back(0x1000, "outer"));          /* earlier records still serve */
    CHECK(misses(0x3000, 1, 1));                 /* the torn one does not */
    put_two(0x4000, "after_tear");               /* a close after a bad record rewrites the file */
    CHECK(reads_back(0x4000, "after_tear"));
    CHECK(reads_back(0x1000, "outer"));
    int fd = open(file, O_WRONLY | O_APPEND);
    CHECK(fd >= 0 && write(fd, "garbage that is not a record", 28) == 28);
    close(fd);
    CHECK(reads_back(0x4000, "after_tear"));
    /* A record whose checksum is right but whose frames lie about their lengths: refused, no overread (ASan). */
    unsigned char rec[12 + 8 + 1 + 13 + 2] = {0};
    unsigned key_magic = 0x31524d46u, len = 8 + 1 + 13 + 2;
    unsigned long long key = 0x5000ULL << 2 | 3 | 1ULL << 63;
    memcpy(rec, &key_magic, 4);
    memcpy(rec + 4, &len, 4);
    memcpy(rec + 12, &key, 8);
    rec[20] = 1;                 /* one frame */
    rec[34] = 0xf0, rec[35] = 0; /* a function name of 240 bytes, of which none follow */
    unsigned h = 2166136261u;
    for (size_t i = 12; i < sizeof rec; i++) h = (h ^ rec[i]) * 16777619u;
    memcpy(rec + 8, &h, 4);
    CHECK(truncate(file, 0) == 0);
    fd = open(file, O_WRONLY | O_APPEND);
    CHECK(fd >= 0 && write(fd, rec, sizeof rec) == (ssize_t)sizeof rec);
    close(fd);
    CHECK(misses(0x5000, 1, 1));
}

static void test_off_without_a_directory(void)
{
    setenv("DIAGTOP_NO_DEBUG_CACHE", "1", 1);
    CHECK(frame_cache_open(ID) == NULL);
    unsetenv("DIAGTOP_NO_DEBUG_CACHE");
    /* NULL is a cache that keeps nothing: every call is safe on it. */
    struct stack_frame out[2], f = {.function = (char *)"x"};
    CHECK_INT(frame_cache_get(NULL, 1, 1, 1, out, 2), 0);
    frame_cache_put(NULL, 1, 1, 1, &f, 1);
    frame_cache_close(NULL);
}

int main(void)
{
    check_suite = "frame_cache";
    snprintf(dir, sizeof dir, "/tmp/diagtop-test-frames.XXXXXX");
    if (!mkdtemp(dir)) return 1;
    setenv("XDG_CACHE_HOME", dir, 1);
    snprintf(file, sizeof file, "%s/diagtop/debug/" ID ".v1.frames", dir);
    RUN(test_round_trip);
    RUN(test_two_writers);
    RUN(test_torn_and_foreign_files);
    RUN(test_off_without_a_directory);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) return 1;
    CHECK_EXIT();
}
