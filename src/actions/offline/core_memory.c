#include "core_memory.h"

#include <gelf.h>
#include <string.h>
#include <unistd.h>

/* The load holding addr, or NULL (loads are sorted by address and do not overlap). */
static const struct core_load *load_of(const struct core_notes *n, unsigned long long addr)
{
    int lo = 0, hi = n->nloads;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (n->loads[mid].vaddr + n->loads[mid].memsz <= addr) lo = mid + 1;
        else hi = mid;
    }
    return lo < n->nloads && n->loads[lo].vaddr <= addr ? &n->loads[lo] : NULL;
}

static int from_core(const struct core_memory *cm, const struct core_load *l, unsigned long long addr, void *buf,
                     size_t len)
{
    unsigned long long at = addr - l->vaddr;
    if (at > l->filesz || len > l->filesz - at) return -1;
    ssize_t got = pread(cm->fd, buf, len, (off_t)(l->offset + at));
    return got == (ssize_t)len ? 0 : -1;
}

/* The bytes at addr in the file a module was loaded from: its PT_LOAD holding them, in the file. */
static int from_file(const struct core_memory *cm, unsigned long long addr, void *buf, size_t len)
{
    Dwfl_Module *mod = cm->dwfl ? dwfl_addrmodule(cm->dwfl, addr) : NULL;
    Dwarf_Addr bias;
    Elf *elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
    size_t n;
    if (!elf || elf_getphdrnum(elf, &n) != 0) return -1;
    unsigned long long at = addr - bias;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || at < ph.p_vaddr || at - ph.p_vaddr >= ph.p_filesz ||
            len > ph.p_filesz - (at - ph.p_vaddr))
            continue;
        Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)(ph.p_offset + (at - ph.p_vaddr)), len, ELF_T_BYTE);
        if (!d || d->d_size != len) return -1;
        memcpy(buf, d->d_buf, len);
        return 0;
    }
    return -1;
}

static int read_core(void *ctx, unsigned long long addr, void *buf, size_t len)
{
    const struct core_memory *cm = ctx;
    const struct core_load *l = load_of(cm->notes, addr);
    if (l && from_core(cm, l, addr, buf, len) == 0) return 0;
    return from_file(cm, addr, buf, len);
}

struct mem_reader core_memory_reader(struct core_memory *cm) { return (struct mem_reader){read_core, cm, NULL}; }
