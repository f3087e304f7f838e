/* A minimal unit-test harness: each test function prints "ok NAME" or "FAIL NAME: file:line: expression". */
#ifndef DIAGTOP_CHECK_H
#define DIAGTOP_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failed_in_test, check_failed_tests;
static const char *check_suite = "unit";

#define CHECK(cond)                                                                                              \
    do {                                                                                                         \
        if (!(cond)) {                                                                                           \
            printf("  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);                                  \
            check_failed_in_test = 1;                                                                            \
        }                                                                                                        \
    } while (0)
#define CHECK_INT(a, b)                                                                                          \
    do {                                                                                                         \
        long long va_ = (long long)(a), vb_ = (long long)(b);                                                    \
        if (va_ != vb_) {                                                                                        \
            printf("  %s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, va_, vb_);                   \
            check_failed_in_test = 1;                                                                            \
        }                                                                                                        \
    } while (0)
#define CHECK_STR(a, b)                                                                                          \
    do {                                                                                                         \
        const char *sa_ = (a), *sb_ = (b);                                                                       \
        if (!sa_ || strcmp(sa_, sb_) != 0) {                                                                     \
            printf("  %s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, sa_ ? sa_ : "(null)", sb_); \
            check_failed_in_test = 1;                                                                            \
        }                                                                                                        \
    } while (0)

#define RUN(fn)                                                                                                  \
    do {                                                                                                         \
        check_failed_in_test = 0;                                                                                \
        fn();                                                                                                    \
        printf("%s %s: %s\n", check_failed_in_test ? "FAIL" : "ok", check_suite, #fn);                          \
        check_failed_tests += check_failed_in_test;                                                              \
    } while (0)

/* Reads a fixture file (tests/fixtures/NAME) into a malloc'd NUL-terminated buffer; *len gets its size. */
static inline char *fixture(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", FIXTURES_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("  cannot open fixture %s\n", path);
        exit(2);
    }
    char *buf = malloc(1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

#define CHECK_EXIT() return check_failed_tests ? 1 : 0
#endif
