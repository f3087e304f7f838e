/* reply: the text of one reply, in mmap'd memory that grows (mremap) up to a cap. Past the cap the reply is marked
 * truncated and further text dropped, so a reply is always bounded and always well-formed lines. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "agent.h"

int reply_init(struct reply *r, size_t max)
{
    memset(r, 0, sizeof *r);
    r->max = max;
    r->cap = 64 * 1024;
    r->buf = agent_map(r->cap);
    return r->buf ? 0 : -1;
}

static int grow(struct reply *r, size_t need)
{
    if (need > r->max) return -1;
    size_t cap = r->cap;
    while (cap < need) cap *= 2;
    if (cap > r->max) cap = (r->max + 4095) & ~(size_t)4095;
    void *nb = mremap(r->buf, r->cap, cap, MREMAP_MAYMOVE);
    if (nb == MAP_FAILED) return -1;
    r->buf = nb;
    r->cap = cap;
    return 0;
}

int reply_add(struct reply *r, const char *fmt, ...)
{
    if (!r->buf || r->truncated) return -1;
    for (int tries = 0; tries < 2; tries++) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(r->buf + r->len, r->cap - r->len, fmt, ap);
        va_end(ap);
        if (n < 0) return -1;
        if (r->len + (size_t)n < r->cap) {
            r->len += (size_t)n;
            return 0;
        }
        if (grow(r, r->len + (size_t)n + 1) < 0) break;
    }
    r->buf[r->len] = '\0';
    r->truncated = 1;
    return -1;
}

void reply_u64(struct reply *r, const char *key, uint64_t v) { reply_add(r, "%s %llu\n", key, (unsigned long long)v); }
void reply_f64(struct reply *r, const char *key, double v) { reply_add(r, "%s %.3f\n", key, v); }

void reply_pcs(struct reply *r, const uintptr_t *pcs, int n)
{
    char line[AGENT_MAX_FRAMES * 17 + 2];
    size_t off = 0;
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < n && i < AGENT_MAX_FRAMES; i++) {
        char tmp[16];
        int k = 0;
        uintptr_t v = pcs[i];
        do tmp[k++] = hex[v & 15], v >>= 4; while (v);
        line[off++] = ' ';
        while (k) line[off++] = tmp[--k];
    }
    line[off++] = '\n';
    line[off] = '\0';
    reply_add(r, "%s", line);
}

void reply_free(struct reply *r)
{
    agent_unmap(r->buf, r->cap);
    memset(r, 0, sizeof *r);
}
