/* mem_reader: where a reader of a process's data structures gets its bytes: a live process (process_vm_readv, no
 * stop needed for data that holds still) or a core file (offline/core_memory). The language readers (lang/) and
 * the Go stack walker take one, so that the same code reads a running program and its core. */
#ifndef DIAGTOP_MEM_READER_H
#define DIAGTOP_MEM_READER_H
#include <stddef.h>

struct mem_reader {
    /* Reads exactly len bytes at addr; 0, or -1 when any of them cannot be read. */
    int (*read)(void *ctx, unsigned long long addr, void *buf, size_t len);
    void *ctx;
};

static inline int mem_read(const struct mem_reader *m, unsigned long long addr, void *buf, size_t len)
{
    return m->read(m->ctx, addr, buf, len);
}
#endif
