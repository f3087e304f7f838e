/* libFuzzer over the readers of a process's own structures in its memory (tests/e2e/fuzz_heap.sh runs it): the
 * glibc heap walker and the Go goroutine reader, each given a memory image at BASE (the input past its first 64
 * bytes) and a layout: glibc 2.36's, and a Go layout whose offsets the input's first bytes choose (what a hostile
 * binary's DWARF could say, passed through go_layout_check as the real reader does). Hostile links, sizes and
 * counts must end in an answer or an error: never a crash, a hang, a leak or a read out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "actions/lang/go_runtime.h"
#include "actions/offline/glibc_heap.h"

#define BASE 0x10000000ULL
#define HEAD 64

struct image {
    const uint8_t *bytes;
    size_t size;
};

static int read_image(void *ctx, unsigned long long addr, void *buf, size_t len)
{
    const struct image *im = ctx;
    if (addr < BASE || addr - BASE > im->size || len > im->size - (addr - BASE)) return -1;
    memcpy(buf, im->bytes + (addr - BASE), len);
    return 0;
}

/* glibc 2.36 (Debian 12) on x86-64: main_arena at BASE, mp_ at BASE + 0x900, as its DWARF lays them out. */
static const struct glibc_layout glibc = {
    .main_arena = BASE, .mp = BASE + 0x900, .ms_flags = 4, .ms_fastbins = 16, .ms_top = 96, .ms_next = 2160,
    .ms_system_mem = 2184, .ms_size = 2200, .nfastbins = 10, .mp_sbrk_base = 96, .mp_n_mmaps = 60,
    .mp_mmapped_mem = 80, .mp_hp_pagesize = 48, .hi_ar_ptr = 0, .hi_prev = 8, .hi_size = 16, .hi_sizeof = 48};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < HEAD) return 0;
    struct image im = {data + HEAD, size - HEAD};
    struct mem_reader mem = {read_image, &im};
    struct core_load load = {BASE, im.size, 0, im.size};
    struct glibc_heap h;
    char err[256];
    if (glibc_heap_walk(&glibc, &mem, &load, 1, &h, err, sizeof err) == 0) glibc_heap_free(&h);

    uint16_t off[16];
    memcpy(off, data, sizeof off);
    struct go_layout g = {
        .allgs = BASE + (off[0] & 0xfff8), .allglen = BASE + (off[1] & 0xfff8), .wait_reasons = BASE + (off[2] & 0xfff8),
        .init_time = BASE + (off[3] & 0xfff8), .nwait_reasons = off[4] & 63, .g_size = off[5] & 0x7ff,
        .goid = off[6] & 0x7ff, .status = off[7] & 0x7ff, .wait_reason = off[8] & 0x7ff, .wait_since = off[9] & 0x7ff,
        .gopc = off[10] & 0x7ff, .startpc = off[11] & 0x7ff, .m = off[12] & 0x7ff, .sched_sp = off[13] & 0x7ff,
        .sched_pc = off[14] & 0x7ff, .sched_bp = off[15] & 0x7ff, .syscall_sp = 8, .syscall_pc = 16, .m_procid = 72};
    struct go_goroutine *gs;
    int n;
    if (go_goroutines_read(&g, &mem, NULL, &gs, &n, err, sizeof err) == 0) free(gs);
    return 0;
}
