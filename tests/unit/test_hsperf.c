/* HotSpot's performance data file: string counters found by name, in either byte order, and hostile bytes (the
 * JVM writes the file) refused without reading outside them. The real file is read by tests/e2e/hotspot_refusals. */
#include "check.h"
#include "actions/runtimes/jvm/hsperf.h"

#include <errno.h>
#include <string.h>

struct image {
    unsigned char b[1024];
    size_t n;
    int little;
    unsigned count;
};

static void put32(struct image *im, size_t at, unsigned v)
{
    for (int i = 0; i < 4; i++) im->b[at + (size_t)i] = (unsigned char)(im->little ? v >> (8 * i) : v >> (24 - 8 * i));
}

/* A prologue, then entries of (name, type, value) laid out as HotSpot does: header, name, value. */
static void image_init(struct image *im, int little)
{
    memset(im, 0, sizeof *im);
    im->little = little;
    im->b[0] = 0xca, im->b[1] = 0xfe, im->b[2] = 0xc0, im->b[3] = 0xc0; /* big-endian whatever the order */
    im->b[4] = (unsigned char)little;
    im->b[5] = 2;
    put32(im, 24, 32); /* entries start after the 32-byte prologue */
    im->n = 32;
}

static void image_add(struct image *im, const char *name, char type, const char *value)
{
    size_t at = im->n, nl = strlen(name) + 1, vl = strlen(value) + 1, len = 20 + nl + vl;
    put32(im, at, (unsigned)len);
    put32(im, at + 4, 20);
    put32(im, at + 8, (unsigned)vl);
    im->b[at + 12] = (unsigned char)type;
    put32(im, at + 16, (unsigned)(20 + nl));
    memcpy(im->b + at + 20, name, nl);
    memcpy(im->b + at + 20 + nl, value, vl);
    im->n += len;
    put32(im, 28, ++im->count);
}

static void finds_a_string_counter_in_either_byte_order(void)
{
    for (int little = 0; little <= 1; little++) {
        struct image im;
        image_init(&im, little);
        image_add(&im, "sun.rt.javaCommand", 'B', "Leaky 1000");
        image_add(&im, "java.rt.vmArgs", 'B', "-Xmx64m -XX:+DisableAttachMechanism");
        char out[64];
        CHECK_INT(hsperf_string(im.b, im.n, "java.rt.vmArgs", out, sizeof out), 35);
        CHECK_STR(out, "-Xmx64m -XX:+DisableAttachMechanism");
        CHECK_INT(hsperf_string(im.b, im.n, "java.rt.vm", out, sizeof out), -ENOENT); /* whole names only */
        CHECK_INT(hsperf_string(im.b, im.n, "sun.rt.javaCommand", out, 6), 5);        /* truncated to fit */
        CHECK_STR(out, "Leaky");
    }
}

static void hostile_bytes_are_refused(void)
{
    struct image im;
    char out[64];
    image_init(&im, 1);
    image_add(&im, "java.rt.vmArgs", 'B', "-XX:+DisableAttachMechanism");
    CHECK_INT(hsperf_string(im.b, 31, "java.rt.vmArgs", out, sizeof out), -EINVAL); /* shorter than a prologue */
    struct image bad = im;
    bad.b[0] = 0;
    CHECK_INT(hsperf_string(bad.b, bad.n, "java.rt.vmArgs", out, sizeof out), -EINVAL); /* not the magic */
    bad = im;
    put32(&bad, 32, 0x7fffffff); /* an entry longer than the file */
    CHECK_INT(hsperf_string(bad.b, bad.n, "java.rt.vmArgs", out, sizeof out), -EINVAL);
    bad = im;
    put32(&bad, 32 + 16, 0x7ffffff0); /* its value outside the entry */
    CHECK_INT(hsperf_string(bad.b, bad.n, "java.rt.vmArgs", out, sizeof out), -EINVAL);
    bad = im;
    put32(&bad, 32 + 8, 0xffffffff); /* a negative vector length */
    CHECK_INT(hsperf_string(bad.b, bad.n, "java.rt.vmArgs", out, sizeof out), -EINVAL);
    bad = im;
    bad.b[32 + 12] = 'J'; /* a number where a string was asked */
    CHECK_INT(hsperf_string(bad.b, bad.n, "java.rt.vmArgs", out, sizeof out), -EINVAL);
    bad = im;
    put32(&bad, 28, 1000); /* more entries than there are bytes */
    CHECK_INT(hsperf_string(bad.b, bad.n, "nothing.such", out, sizeof out), -EINVAL);
    bad = im;
    put32(&bad, 24, 4); /* entries inside the prologue */
    CHECK_INT(hsperf_string(bad.b, bad.n, "java.rt.vmArgs", out, sizeof out), -EINVAL);
    bad = im;
    memset(bad.b + 32 + 20 + 15, 'x', 28); /* a value without its NUL: bounded by its vector length */
    bad.b[32 + 20 + 14] = '\0';
    CHECK_INT(hsperf_string(bad.b, bad.n, "java.rt.vmArgs", out, sizeof out), 28);
}

/* A long counter: header, name, 8 bytes in the file's order, vector length 0. */
static void image_add_long(struct image *im, const char *name, unsigned long long v)
{
    size_t at = im->n, nl = strlen(name) + 1, len = 20 + nl + 8;
    put32(im, at, (unsigned)len);
    put32(im, at + 4, 20);
    put32(im, at + 8, 0);
    im->b[at + 12] = 'J';
    put32(im, at + 16, (unsigned)(20 + nl));
    memcpy(im->b + at + 20, name, nl);
    for (int i = 0; i < 8; i++) im->b[at + 20 + nl + (size_t)i] = (unsigned char)(im->little ? v >> (8 * i) : v >> (56 - 8 * i));
    im->n += len;
    put32(im, 28, ++im->count);
}

static void heap_is_the_generations_spaces(void)
{
    for (int little = 0; little <= 1; little++) {
        struct image im;
        image_init(&im, little);
        image_add_long(&im, "sun.gc.generation.0.space.0.used", 3 << 20);      /* eden */
        image_add_long(&im, "sun.gc.generation.0.space.0.capacity", 8 << 20);
        image_add_long(&im, "sun.gc.generation.1.space.0.used", 5ull << 30);   /* old: past 32 bits */
        image_add_long(&im, "sun.gc.generation.1.space.0.capacity", 6ull << 30);
        image_add_long(&im, "sun.gc.generation.2.space.0.used", 1 << 20);      /* JDK 7's perm gen: not heap */
        image_add_long(&im, "sun.gc.metaspace.used", 1 << 20);
        image_add(&im, "sun.gc.generation.0.space.1.used", 'B', "x");           /* not a number: skipped */
        long long used = 0, committed = 0;
        CHECK_INT(hsperf_heap(im.b, im.n, &used, &committed), 0);
        CHECK(used == (3ll << 20) + (5ll << 30));
        CHECK(committed == (8ll << 20) + (6ll << 30));
    }
    struct image im;
    image_init(&im, 1);
    image_add(&im, "java.rt.vmArgs", 'B', "-Xmx64m");
    long long used, committed;
    CHECK_INT(hsperf_heap(im.b, im.n, &used, &committed), -ENOENT);
    CHECK_INT(hsperf_heap(im.b, 20, &used, &committed), -EINVAL);
}

int main(void)
{
    check_suite = "hsperf";
    RUN(finds_a_string_counter_in_either_byte_order);
    RUN(hostile_bytes_are_refused);
    RUN(heap_is_the_generations_spaces);
    CHECK_EXIT();
}
