/* api_range: the Range header of a download (RFC 9110 14.2): one range of bytes, "bytes=START-END",
 * "bytes=START-" or "bytes=-SUFFIX", so a client can resume a large core where it stopped. A header this does not
 * understand (other units, several ranges) is ignored and the whole file is sent, as the RFC allows. Pure. */
#ifndef DIAGTOP_API_RANGE_H
#define DIAGTOP_API_RANGE_H
#include <stdint.h>

enum api_range_kind { API_RANGE_WHOLE, API_RANGE_PART, API_RANGE_UNSATISFIABLE };

/* Of a file of size bytes: *start and *len of what to send. header may be NULL (no Range). */
enum api_range_kind api_range_parse(const char *header, uint64_t size, uint64_t *start, uint64_t *len);
#endif
