#include "protobuf.h"

#include <errno.h>
#include <string.h>

void pb_reader_init(struct pb_reader *r, const void *data, size_t len)
{
    r->p = data;
    r->end = r->p + len;
}

int pb_more(const struct pb_reader *r) { return r->p < r->end; }

int pb_read_varint(struct pb_reader *r, uint64_t *v)
{
    uint64_t x = 0;
    for (int i = 0; i < PB_VARINT_MAX && r->p < r->end; i++) {
        unsigned char b = *r->p++;
        /* The 10th byte holds bit 63 only: anything more is not a 64-bit varint. */
        if (i == 9 && b > 1) break;
        x |= (uint64_t)(b & 0x7F) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    r->p = r->end;
    return -EBADMSG;
}

int pb_next(struct pb_reader *r, struct pb_field *f)
{
    if (r->p >= r->end) return 0;
    uint64_t tag;
    if (pb_read_varint(r, &tag) < 0) return -EBADMSG;
    memset(f, 0, sizeof *f);
    /* Field numbers are 1 .. 2^29-1. */
    if ((tag >> 3) == 0 || (tag >> 3) > 0x1FFFFFFF) goto bad;
    f->number = (uint32_t)(tag >> 3);
    f->wire = (enum pb_wire)(tag & 7);
    size_t left = (size_t)(r->end - r->p);
    switch (f->wire) {
    case PB_VARINT:
        return pb_read_varint(r, &f->u) < 0 ? -EBADMSG : 1;
    case PB_FIXED64:
    case PB_FIXED32: {
        size_t n = f->wire == PB_FIXED64 ? 8 : 4;
        if (left < n) goto bad;
        for (size_t i = 0; i < n; i++) f->u |= (uint64_t)r->p[i] << (8 * i);
        r->p += n;
        return 1;
    }
    case PB_LEN: {
        uint64_t len;
        if (pb_read_varint(r, &len) < 0) return -EBADMSG;
        if (len > (uint64_t)(r->end - r->p)) goto bad;
        f->data = r->p;
        f->len = (size_t)len;
        r->p += len;
        return 1;
    }
    default: /* groups (3, 4) are long deprecated; 6 and 7 do not exist */
        goto bad;
    }
bad:
    r->p = r->end;
    return -EBADMSG;
}

int pb_each_varint(const struct pb_field *f, int (*fn)(void *arg, uint64_t v), void *arg)
{
    if (f->wire == PB_VARINT) return fn(arg, f->u);
    if (f->wire != PB_LEN) return -EPROTO;
    struct pb_reader r;
    pb_reader_init(&r, f->data, f->len);
    while (pb_more(&r)) {
        uint64_t v;
        if (pb_read_varint(&r, &v) < 0) return -EBADMSG;
        int rc = fn(arg, v);
        if (rc) return rc;
    }
    return 0;
}

uint64_t pb_zigzag_encode(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

int64_t pb_zigzag_decode(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }

size_t pb_put_varint(unsigned char *buf, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        buf[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    buf[n++] = (unsigned char)v;
    return n;
}

size_t pb_put_tag(unsigned char *buf, uint32_t number, enum pb_wire wire)
{
    return pb_put_varint(buf, ((uint64_t)number << 3) | (uint64_t)wire);
}
