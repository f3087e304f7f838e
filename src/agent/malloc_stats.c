/* malloc_stats: the allocator's own view (glibc's mallinfo2 and malloc_info), the agent's counters and rates, and
 * returning memory to the OS (malloc_trim). Run in the listener thread only. */
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

/* Whether the allocator we forward to is glibc's: mallinfo2 describes only that one. */
static int glibc_allocator(char *name, size_t n)
{
    Dl_info info;
    if (!dladdr((void *)agent_g.real.malloc, &info) || !info.dli_fname) {
        snprintf(name, n, "unknown");
        return 0;
    }
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    if (!strncmp(base, "libc.so", 7)) {
        snprintf(name, n, "glibc-%s", gnu_get_libc_version());
        return 1;
    }
    snprintf(name, n, "%s", base);
    for (char *p = name; *p; p++)
        if (*p == ' ' || *p == '\n') *p = '_';
    return 0;
}

static uint64_t rss_bytes(void)
{
    char buf[256];
    unsigned long long size = 0, resident = 0;
    if (agent_read_file("/proc/self/statm", buf, sizeof buf) <= 0 || sscanf(buf, "%llu %llu", &size, &resident) != 2)
        return 0;
    return resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* The number after `attr="` in s, or 0. */
static uint64_t attr(const char *s, const char *name)
{
    const char *p = strstr(s, name);
    if (!p) return 0;
    p += strlen(name);
    unsigned long long v = 0;
    return sscanf(p, "%llu", &v) == 1 ? v : 0;
}

/* malloc_info's XML: the number of arenas and the totals that follow the last one. */
static void malloc_info_reply(struct reply *r)
{
    size_t cap = 1 << 20;
    char *buf = agent_map(cap);
    if (!buf) return;
    FILE *f = fmemopen(buf, cap - 1, "w");
    if (f) {
        malloc_info(0, f);
        fclose(f);
        buf[cap - 1] = '\0';
        uint64_t arenas = 0;
        const char *last = buf;
        for (const char *p = strstr(buf, "<heap nr="); p; p = strstr(p + 1, "<heap nr=")) arenas++;
        for (const char *p = strstr(buf, "</heap>"); p; p = strstr(p + 1, "</heap>")) last = p;
        const char *sys_max = strstr(last, "<system type=\"max\"");
        const char *aspace = strstr(last, "<aspace type=\"total\"");
        const char *mmap_total = strstr(last, "<total type=\"mmap\"");
        reply_u64(r, "arenas", arenas);
        if (sys_max) reply_u64(r, "system_max", attr(sys_max, "size=\""));
        if (aspace) reply_u64(r, "aspace", attr(aspace, "size=\""));
        if (mmap_total) reply_u64(r, "mmapped_chunks", attr(mmap_total, "count=\""));
    }
    agent_unmap(buf, cap);
}

void malloc_stats_reply(struct reply *r)
{
    char name[128];
    int glibc = glibc_allocator(name, sizeof name);
    reply_add(r, "allocator %s\n", name);
    if (glibc) {
        struct mallinfo2 mi = mallinfo2();
        reply_u64(r, "heap_system", mi.arena);
        reply_u64(r, "in_use", mi.uordblks + mi.hblkhd);
        reply_u64(r, "free", mi.fordblks);
        reply_u64(r, "free_chunks", mi.ordblks);
        reply_u64(r, "fastbin_free", mi.fsmblks);
        reply_u64(r, "fastbin_chunks", mi.smblks);
        reply_u64(r, "mmapped", mi.hblkhd);
        reply_u64(r, "mmapped_blocks", mi.hblks);
        reply_u64(r, "releasable_top", mi.keepcost);
        malloc_info_reply(r);
    }
    reply_u64(r, "rss", rss_bytes());

    agent_flush(&agent_tls);
    uint64_t m = __atomic_load_n(&agent_g.mallocs, __ATOMIC_RELAXED);
    uint64_t f = __atomic_load_n(&agent_g.frees, __ATOMIC_RELAXED);
    uint64_t b = __atomic_load_n(&agent_g.bytes, __ATOMIC_RELAXED);
    int64_t now = agent_now_ns(CLOCK_MONOTONIC);
    reply_u64(r, "mallocs", m);
    reply_u64(r, "frees", f);
    reply_u64(r, "allocated_bytes", b);
    reply_u64(r, "uptime_ns", (uint64_t)(now - agent_g.start_ns));
    double secs = (double)(now - agent_g.prev_ns) / 1e9;
    if (secs > 0.001) {
        reply_f64(r, "rate_seconds", secs);
        reply_f64(r, "mallocs_per_second", (double)(m - agent_g.prev_mallocs) / secs);
        reply_f64(r, "frees_per_second", (double)(f - agent_g.prev_frees) / secs);
        reply_f64(r, "bytes_per_second", (double)(b - agent_g.prev_bytes) / secs);
    }
    agent_g.prev_ns = now;
    agent_g.prev_mallocs = m;
    agent_g.prev_frees = f;
    agent_g.prev_bytes = b;

    uint64_t live;
    size_t table;
    heapprof_totals(&live, &table);
    reply_u64(r, "heap_profile", (uint64_t)agent_g.heap_on);
    reply_u64(r, "interval", agent_g.interval);
    reply_u64(r, "samples_live", live);
    reply_u64(r, "samples_dropped", __atomic_load_n(&agent_g.samples_dropped, __ATOMIC_RELAXED));
    reply_u64(r, "stacks_dropped", __atomic_load_n(&agent_g.stacks_dropped, __ATOMIC_RELAXED));
    reply_u64(r, "table_bytes", table);
    reply_u64(r, "table_cap", agent_g.max_bytes);
}

void malloc_trim_reply(struct reply *r)
{
    char name[128];
    if (!glibc_allocator(name, sizeof name)) {
        reply_add(r, "allocator %s\n", name);
        return;
    }
    struct mallinfo2 before = mallinfo2();
    uint64_t rss0 = rss_bytes();
    int64_t t0 = agent_now_ns(CLOCK_MONOTONIC);
    int released = malloc_trim(0);
    int64_t t1 = agent_now_ns(CLOCK_MONOTONIC);
    uint64_t rss1 = rss_bytes();
    struct mallinfo2 after = mallinfo2();
    reply_add(r, "allocator %s\n", name);
    reply_u64(r, "released", (uint64_t)released);
    reply_u64(r, "rss_before", rss0);
    reply_u64(r, "rss_after", rss1);
    reply_u64(r, "free_before", before.fordblks);
    reply_u64(r, "free_after", after.fordblks);
    reply_u64(r, "in_use_before", before.uordblks + before.hblkhd);
    reply_u64(r, "in_use_after", after.uordblks + after.hblkhd);
    reply_u64(r, "trim_ns", (uint64_t)(t1 - t0));
}
