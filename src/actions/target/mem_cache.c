#include "mem_cache.h"

#include <stdlib.h>
#include <string.h>

/* One page into its slot; NULL when it cannot be read whole (its end unmapped: the caller reads exactly). */
static const unsigned char *page_at(struct mem_cache *c, unsigned long long page)
{
    size_t slot = (size_t)(page / MEM_CACHE_PAGE) % MEM_CACHE_SLOTS;
    if (c->tag[slot] == page + 1) return c->pages[slot];
    if (mem_read(c->under, page, c->pages[slot], MEM_CACHE_PAGE) < 0) {
        c->tag[slot] = 0;
        return NULL;
    }
    c->tag[slot] = page + 1;
    return c->pages[slot];
}

static int cached_read(void *ctx, unsigned long long addr, void *buf, size_t len)
{
    struct mem_cache *c = ctx;
    unsigned char *out = buf;
    while (len) {
        unsigned long long page = addr & ~(unsigned long long)(MEM_CACHE_PAGE - 1);
        size_t off = (size_t)(addr - page), n = MEM_CACHE_PAGE - off < len ? MEM_CACHE_PAGE - off : len;
        const unsigned char *p = page_at(c, page);
        if (p) memcpy(out, p + off, n);
        else if (mem_read(c->under, addr, out, n) < 0) return -1;
        out += n, addr += n, len -= n;
    }
    return 0;
}

static size_t forward_spans(void *ctx, struct mem_span *spans, size_t n)
{
    const struct mem_reader *under = ((struct mem_cache *)ctx)->under;
    return under->read_spans(under->ctx, spans, n);
}

int mem_cache_init(struct mem_cache *c, const struct mem_reader *under, struct mem_reader *out)
{
    memset(c, 0, sizeof *c);
    c->under = under;
    c->pages = malloc((size_t)MEM_CACHE_SLOTS * MEM_CACHE_PAGE);
    /* spans go straight through: they are large, read once, and batched below already */
    *out = c->pages ? (struct mem_reader){cached_read, c, under->read_spans ? forward_spans : NULL} : *under;
    return c->pages ? 0 : -1;
}

void mem_cache_free(struct mem_cache *c)
{
    free(c->pages);
    c->pages = NULL;
}
