/* protobuf: the protocol buffers wire format, read field by field without a schema (varints, tags, 64- and
 * 32-bit fixed values, length-delimited fields, packed repeated fields), and the primitives to write it. Reading
 * is bounds-checked at every step: a reader never looks past its end, and malformed bytes (a varint longer than 10
 * bytes, a length beyond the end, field number 0, group wire types) make it fail, never crash. Nothing allocates.
 * Used for pprof profiles (profile.proto); meant for writing them too. */
#ifndef DIAGTOP_PROTOBUF_H
#define DIAGTOP_PROTOBUF_H
#include <stddef.h>
#include <stdint.h>

enum pb_wire { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2, PB_FIXED32 = 5 };

/* A window on the bytes of one message (or of one packed field). */
struct pb_reader {
    const unsigned char *p, *end;
};

/* One field as it came: its number and wire type; u holds varint and fixed values, data/len the bytes of a
 * length-delimited field (pointing into the reader's buffer). */
struct pb_field {
    uint32_t number;
    enum pb_wire wire;
    uint64_t u;
    const unsigned char *data;
    size_t len;
};

void pb_reader_init(struct pb_reader *r, const void *data, size_t len);
/* Whether bytes remain. */
int pb_more(const struct pb_reader *r);
/* Reads one varint. Returns 0, or -EBADMSG when it runs past the end or over 10 bytes (the reader is then
 * left at its end). */
int pb_read_varint(struct pb_reader *r, uint64_t *v);
/* Reads the next field. Returns 1 with *f, 0 at the end of the message, -EBADMSG on malformed bytes. */
int pb_next(struct pb_reader *r, struct pb_field *f);
/* The elements of a repeated scalar field, whether packed (PB_LEN: a run of varints) or not (one PB_VARINT).
 * Calls fn for each; stops at fn's non-zero return and returns it. -EBADMSG on a malformed packed run, -EPROTO
 * on another wire type. */
int pb_each_varint(const struct pb_field *f, int (*fn)(void *arg, uint64_t v), void *arg);

/* sint/zigzag: 0,-1,1,-2 <-> 0,1,2,3 (also Go's binary.PutVarint/ReadVarint). */
uint64_t pb_zigzag_encode(int64_t v);
int64_t pb_zigzag_decode(uint64_t u);

/* Writing: each returns the number of bytes written into buf, which must hold PB_VARINT_MAX bytes (a tag takes
 * at most 5). */
#define PB_VARINT_MAX 10
size_t pb_put_varint(unsigned char *buf, uint64_t v);
size_t pb_put_tag(unsigned char *buf, uint32_t number, enum pb_wire wire);
#endif
