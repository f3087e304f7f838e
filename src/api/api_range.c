#include "api_range.h"

#include <string.h>

/* Decimal digits at *p into *v; advances *p. A number past 2^64-1 saturates there: RFC 9110 lets a position have
 * any number of digits, and one that large still means "to the end" (last) or "past the end" (first). Returns 0,
 * or -1 when there are none. */
static int digits(const char **p, uint64_t *v)
{
    const char *s = *p;
    uint64_t x = 0;
    while (*s >= '0' && *s <= '9') {
        unsigned d = (unsigned)(*s++ - '0');
        x = x > (UINT64_MAX - d) / 10 ? UINT64_MAX : x * 10 + d;
    }
    if (s == *p) return -1;
    *v = x;
    *p = s;
    return 0;
}

enum api_range_kind api_range_parse(const char *header, uint64_t size, uint64_t *start, uint64_t *len)
{
    *start = 0;
    *len = size;
    if (!header) return API_RANGE_WHOLE;
    const char *p = header;
    while (*p == ' ' || *p == '\t') p++;
    if (strncmp(p, "bytes=", 6)) return API_RANGE_WHOLE;
    p += 6;
    while (*p == ' ' || *p == '\t') p++;
    uint64_t a = 0, b = 0;
    int have_a = 0, have_b = 0;
    if (*p != '-') {
        if (digits(&p, &a) < 0) return API_RANGE_WHOLE;
        have_a = 1;
    }
    if (*p++ != '-') return API_RANGE_WHOLE;
    if (*p >= '0' && *p <= '9') {
        if (digits(&p, &b) < 0) return API_RANGE_WHOLE;
        have_b = 1;
    }
    while (*p == ' ' || *p == '\t') p++;
    if (*p) return API_RANGE_WHOLE; /* several ranges, or garbage: the whole file */
    if (!have_a && !have_b) return API_RANGE_WHOLE;
    if (!have_a) { /* the last b bytes */
        if (b == 0 || size == 0) return API_RANGE_UNSATISFIABLE;
        if (b > size) b = size;
        *start = size - b;
        *len = b;
        return API_RANGE_PART;
    }
    if (have_b && b < a) return API_RANGE_WHOLE; /* invalid: ignored */
    if (a >= size) return API_RANGE_UNSATISFIABLE;
    uint64_t last = have_b && b < size - 1 ? b : size - 1;
    *start = a;
    *len = last - a + 1;
    return API_RANGE_PART;
}
