/* bytes: fixed-size integers read from untrusted bytes (the caller has checked the length). */
#ifndef DIAGTOP_BYTES_H
#define DIAGTOP_BYTES_H
#include <stddef.h>
#include <stdint.h>

/* The n-byte (at most 8) little-endian unsigned integer at p, whatever p's alignment. */
static inline uint64_t bytes_le(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;) v = v << 8 | p[i];
    return v;
}

/* The n-byte (at most 8) big-endian unsigned integer at p (HPROF's order). */
static inline uint64_t bytes_be(const unsigned char *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v = v << 8 | p[i];
    return v;
}
#endif
