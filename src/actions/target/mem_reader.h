/* mem_reader: where a reader of a process's data structures gets its bytes: a live process (process_vm_readv, no
 * stop needed for data that holds still) or a core file (offline/core_memory). The language readers (lang/) and
 * the Go stack walker take one, so that the same code reads a running program and its core. */
#ifndef DIAGTOP_MEM_READER_H
#define DIAGTOP_MEM_READER_H
#include <stddef.h>

/* One of many ranges read together; ok says it was read whole. */
struct mem_span {
    unsigned long long addr;
    void *buf;
    size_t len;
    int ok;
};

struct mem_reader {
    /* Reads exactly len bytes at addr; 0, or -1 when any of them cannot be read. */
    int (*read)(void *ctx, unsigned long long addr, void *buf, size_t len);
    void *ctx;
    /* Optional: reads spans in as few calls as it can; returns how many of them, from the first, were read whole
     * (the next one failed, or the call's limit was reached). A live process's reader has it: one system call for
     * a thousand goroutines' structures. */
    size_t (*read_spans)(void *ctx, struct mem_span *spans, size_t n);
};

static inline int mem_read(const struct mem_reader *m, unsigned long long addr, void *buf, size_t len)
{
    return m->read(m->ctx, addr, buf, len);
}

/* Reads every span (each one's ok set), together where the reader can. */
static inline void mem_read_spans(const struct mem_reader *m, struct mem_span *spans, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = m->read_spans ? m->read_spans(m->ctx, spans + i, n - i) : 0;
        for (size_t j = 0; j < k; j++) spans[i + j].ok = 1;
        i += k;
        if (i < n) { /* the one that stopped the batch (or every one, without read_spans), alone */
            spans[i].ok = mem_read(m, spans[i].addr, spans[i].buf, spans[i].len) == 0;
            i++;
        }
    }
}
#endif
