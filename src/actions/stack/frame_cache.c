#include "frame_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fileio.h"
#include "debuginfo_cache.h"

/* Bump when symbolize names, files or lines differently: older files are then simply not read. */
#define FORMAT "v1"
#define MAGIC 0x31524d46u        /* "FMR1" little-endian: the start of each record */
#define MAX_FILE (16u << 20)    /* beyond this, nothing more is appended */
#define MAX_FRAMES 32
#define NO_STRING 0xffffu

struct slot {
    uint64_t key;      /* off << 2 | return_address << 1 | want_source; 0: empty */
    uint32_t payload;  /* offset of the record's frames in buf */
    uint32_t len;
};

struct frame_cache {
    char path[4200];
    unsigned char *buf; /* the file as read */
    size_t size;
    struct slot *slots;
    size_t nslots, used;
    unsigned char *pending; /* records to append */
    size_t npending, cap_pending;
    int rewrite;            /* the file holds a bad record: write it anew */
};

static uint64_t key_of(unsigned long long off, int return_address, int want_source)
{
    return (uint64_t)off << 2 | (uint64_t)(return_address != 0) << 1 | (uint64_t)(want_source != 0) | 1ULL << 63;
}

static uint32_t fnv32(const unsigned char *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

static struct slot *slot_for(struct frame_cache *fc, uint64_t key)
{
    size_t i = (size_t)(key * 0x9e3779b97f4a7c15ULL >> 32) & (fc->nslots - 1);
    while (fc->slots[i].key && fc->slots[i].key != key) i = (i + 1) & (fc->nslots - 1);
    return &fc->slots[i];
}

static int grow_slots(struct frame_cache *fc)
{
    if ((fc->used + 1) * 2 <= fc->nslots) return 0;
    struct frame_cache bigger = *fc;
    bigger.nslots = fc->nslots ? fc->nslots * 2 : 256;
    if (!(bigger.slots = calloc(bigger.nslots, sizeof *bigger.slots))) return -1;
    for (size_t i = 0; i < fc->nslots; i++)
        if (fc->slots[i].key) *slot_for(&bigger, fc->slots[i].key) = fc->slots[i];
    free(fc->slots);
    fc->slots = bigger.slots;
    fc->nslots = bigger.nslots;
    return 0;
}

/* A record: magic, payload length, payload checksum (u32 each), then the payload: u64 key, then frames. */
static void index_file(struct frame_cache *fc)
{
    size_t pos = 0;
    while (pos + 12 <= fc->size) {
        uint32_t magic, len, sum;
        memcpy(&magic, fc->buf + pos, 4);
        memcpy(&len, fc->buf + pos + 4, 4);
        memcpy(&sum, fc->buf + pos + 8, 4);
        if (magic != MAGIC || len < 9 || len > fc->size - pos - 12 || fnv32(fc->buf + pos + 12, len) != sum) {
            fc->rewrite = 1; /* torn by a crash, or not ours: what follows cannot be trusted */
            fc->size = pos;
            return;
        }
        uint64_t key;
        memcpy(&key, fc->buf + pos + 12, 8);
        if (grow_slots(fc) < 0) return;
        struct slot *s = slot_for(fc, key);
        if (!s->key) {
            *s = (struct slot){key, (uint32_t)(pos + 20), len - 8};
            fc->used++;
        }
        pos += 12 + len;
    }
    if (pos != fc->size) {
        fc->rewrite = 1;
        fc->size = pos;
    }
}

struct frame_cache *frame_cache_open(const char *name)
{
    char dir[4096];
    if (getenv("DIAGTOP_NO_DEBUG_CACHE") || debuginfo_cache_dir(dir, sizeof dir) < 0) return NULL;
    struct frame_cache *fc = calloc(1, sizeof *fc);
    if (!fc) return NULL;
    if (snprintf(fc->path, sizeof fc->path, "%s/%.150s." FORMAT ".frames", dir, name) >= (int)sizeof fc->path) {
        free(fc);
        return NULL;
    }
    ssize_t len = 0;
    fc->buf = (unsigned char *)fileio_read_file(AT_FDCWD, fc->path, MAX_FILE, &len);
    fc->size = fc->buf && len > 0 ? (size_t)len : 0;
    if (fc->size) index_file(fc);
    return fc;
}

/* Reads a u16-prefixed string at *pos (NO_STRING: NULL). Returns -1 past the end. */
static int take_string(const unsigned char *p, size_t len, size_t *pos, char **out)
{
    uint16_t n;
    if (*pos + 2 > len) return -1;
    memcpy(&n, p + *pos, 2);
    *pos += 2;
    *out = NULL;
    if (n == NO_STRING) return 0;
    if (n > len - *pos || !(*out = strndup((const char *)p + *pos, n))) return -1;
    *pos += n;
    return 0;
}

int frame_cache_get(struct frame_cache *fc, unsigned long long off, int return_address, int want_source,
                    struct stack_frame *out, int max)
{
    if (!fc || !fc->nslots) return 0;
    struct slot *s = slot_for(fc, key_of(off, return_address, want_source));
    if (!s->key) return 0;
    const unsigned char *p = fc->buf + s->payload;
    size_t len = s->len, pos = 1;
    int n = len ? p[0] : 0;
    if (n == 0 || n > max) return 0;
    for (int i = 0; i < n; i++) {
        struct stack_frame *f = &out[i];
        memset(f, 0, sizeof *f);
        int32_t line;
        uint64_t offset;
        if (pos + 13 > len) goto bad;
        f->inlined = p[pos];
        memcpy(&line, p + pos + 1, 4);
        memcpy(&offset, p + pos + 5, 8);
        pos += 13;
        f->line = line;
        f->offset = offset;
        if (take_string(p, len, &pos, &f->function) < 0 || take_string(p, len, &pos, &f->file) < 0) {
            n = i + 1;
            goto bad;
        }
    }
    return n;
bad: /* a record that checksums but does not parse: not ours to trust */
    for (int i = 0; i < n; i++) stack_frame_clear(&out[i]);
    return 0;
}

static int pending_add(struct frame_cache *fc, const void *p, size_t n)
{
    if (fc->npending + n > fc->cap_pending) {
        size_t c = fc->cap_pending ? fc->cap_pending * 2 : 4096;
        while (c < fc->npending + n) c *= 2;
        unsigned char *b = realloc(fc->pending, c);
        if (!b) return -1;
        fc->pending = b;
        fc->cap_pending = c;
    }
    memcpy(fc->pending + fc->npending, p, n);
    fc->npending += n;
    return 0;
}

static int put_string(struct frame_cache *fc, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    uint16_t len = s ? (uint16_t)(n < NO_STRING ? n : NO_STRING - 1) : NO_STRING;
    return pending_add(fc, &len, 2) < 0 || (s && pending_add(fc, s, len) < 0) ? -1 : 0;
}

void frame_cache_put(struct frame_cache *fc, unsigned long long off, int return_address, int want_source,
                     const struct stack_frame *frames, int n)
{
    if (!fc || n <= 0 || n > MAX_FRAMES || fc->size + fc->npending > MAX_FILE) return;
    size_t start = fc->npending;
    uint32_t header[3] = {MAGIC, 0, 0};
    uint64_t key = key_of(off, return_address, want_source);
    unsigned char count = (unsigned char)n;
    int rc = pending_add(fc, header, sizeof header) | pending_add(fc, &key, 8) | pending_add(fc, &count, 1);
    for (int i = 0; rc == 0 && i < n; i++) {
        unsigned char inlined = frames[i].inlined != 0;
        int32_t line = frames[i].line;
        uint64_t offset = frames[i].offset;
        rc = pending_add(fc, &inlined, 1) | pending_add(fc, &line, 4) | pending_add(fc, &offset, 8) |
             put_string(fc, frames[i].function) | put_string(fc, frames[i].file);
    }
    if (rc != 0) {
        fc->npending = start;
        return;
    }
    uint32_t len = (uint32_t)(fc->npending - start - 12), sum = fnv32(fc->pending + start + 12, len);
    memcpy(fc->pending + start + 4, &len, 4);
    memcpy(fc->pending + start + 8, &sum, 4);
}

/* The records that read well and the new ones, in a new file renamed over the old. */
static void rewrite_file(struct frame_cache *fc)
{
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", fc->path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return;
    int ok = fileio_write_full(fd, fc->buf, fc->size) == 0 && fileio_write_full(fd, fc->pending, fc->npending) == 0;
    close(fd);
    if (!ok || rename(tmp, fc->path) < 0) unlink(tmp);
}

void frame_cache_close(struct frame_cache *fc)
{
    if (!fc) return;
    char dir[4096];
    if (fc->npending && debuginfo_cache_dir(dir, sizeof dir) == 0 && fileio_mkdirs(dir, 0700) == 0) {
        if (fc->rewrite) {
            rewrite_file(fc);
        } else {
            /* One write of whole records: appends of two diagtops at once interleave by record, never inside one. */
            int fd = open(fc->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
            if (fd >= 0) {
                if (write(fd, fc->pending, fc->npending) < 0) {} /* a full disk: the next run computes again */
                close(fd);
            }
        }
    }
    free(fc->buf);
    free(fc->slots);
    free(fc->pending);
    free(fc);
}
