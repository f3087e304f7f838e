#include "unwind.h"

#include <errno.h>
#include <libunwind-ptrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "arch_regs.h"

#define PAGE 4096ULL
#define CACHED_PAGES 64

struct unwinder {
    int pid;
    unw_addr_space_t as;
    /* One libunwind-ptrace state for all threads: it keeps the unwind tables of the mapped ELF files it loaded
     * (threads share the mappings). Its ptrace-based memory and register access is never used for another
     * thread: registers come from arch_regs, memory from the page cache. */
    void *upt;
    unsigned long long maps_hash; /* mappings seen by prepare; a change means reload */
    /* Pages of the stopped process's memory, filled on first access. */
    unsigned long long page_addr[CACHED_PAGES];
    int page_valid[CACHED_PAGES];
    unsigned char *pages; /* CACHED_PAGES * PAGE */
    int next_victim;
};

/* What libunwind hands to every accessor for one thread. libunwind-ptrace's own functions call the accessors back
 * with their own state as the argument, so ours is recognised by a magic number no PID can equal (a UPT state
 * starts with the thread's pid). */
#define THREAD_ARG_MAGIC 0xD1A6D1A6u

struct thread_arg {
    unsigned magic;
    struct unwinder *u;
    void *upt; /* the unwinder's libunwind-ptrace state */
    struct arch_regs regs;
};

static const unsigned char *page_of(struct unwinder *u, unsigned long long addr)
{
    unsigned long long base = addr & ~(PAGE - 1);
    for (int i = 0; i < CACHED_PAGES; i++)
        if (u->page_valid[i] && u->page_addr[i] == base) return u->pages + (size_t)i * PAGE;
    int slot = u->next_victim;
    u->next_victim = (u->next_victim + 1) % CACHED_PAGES;
    struct iovec local = {u->pages + (size_t)slot * PAGE, PAGE}, remote = {(void *)base, PAGE};
    if (process_vm_readv(u->pid, &local, 1, &remote, 1, 0) != (ssize_t)PAGE) {
        u->page_valid[slot] = 0;
        return NULL;
    }
    u->page_addr[slot] = base;
    u->page_valid[slot] = 1;
    return u->pages + (size_t)slot * PAGE;
}

/* The unwinder of the unwinding in progress on this thread, for the accessor calls that libunwind-ptrace makes
 * with its own argument (reading the target's .eh_frame_hdr table, FDEs and CIEs). Without it those reads fall
 * back to one PTRACE_PEEKDATA per word: about a thousand system calls per capture while the target is stopped. */
static __thread struct unwinder *current_unwinder;

static struct thread_arg *ours(void *arg)
{
    struct thread_arg *ta = arg;
    return ta && ta->magic == THREAD_ARG_MAGIC ? ta : NULL;
}

/* The argument libunwind-ptrace expects. */
static void *upt_of(void *arg)
{
    struct thread_arg *ta = ours(arg);
    return ta ? ta->upt : arg;
}

static int acc_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
    struct thread_arg *ta = ours(arg);
    struct unwinder *u = ta ? ta->u : current_unwinder;
    if (u && !write && (addr & (sizeof *val - 1)) == 0) {
        const unsigned char *p = page_of(u, addr);
        if (p) {
            memcpy(val, p + (addr & (PAGE - 1)), sizeof *val);
            return 0;
        }
    }
    return _UPT_access_mem(as, addr, val, write, upt_of(arg)); /* unaligned, unreadable by readv, or a write */
}

static int acc_access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg)
{
    (void)as;
    struct thread_arg *ta = ours(arg);
    unsigned long long v;
    if (ta && !write && arch_regs_get(&ta->regs, reg, &v) == 0) {
        *val = (unw_word_t)v;
        return 0;
    }
    return -UNW_EBADREG; /* the shared ptrace state would read another thread's registers */
}

static int acc_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need, void *arg)
{
    return _UPT_find_proc_info(as, ip, pi, need, upt_of(arg));
}

static void acc_put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
    _UPT_put_unwind_info(as, pi, upt_of(arg));
}

static int acc_get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
    return _UPT_get_dyn_info_list_addr(as, addr, upt_of(arg));
}

static int acc_access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg)
{
    (void)as, (void)reg, (void)val, (void)write, (void)arg;
    return -UNW_EBADREG; /* not needed to find return addresses */
}

static int acc_resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
    (void)as;
    (void)c;
    (void)arg;
    return -UNW_EINVAL; /* never resume the target from the unwinder */
}

static const unw_accessors_t accessors = {
    .find_proc_info = acc_find_proc_info,
    .put_unwind_info = acc_put_unwind_info,
    .get_dyn_info_list_addr = acc_get_dyn_info_list_addr,
    .access_mem = acc_access_mem,
    .access_reg = acc_access_reg,
    .access_fpreg = acc_access_fpreg,
    .resume = acc_resume,
    .get_proc_name = NULL, /* names come from libdw after the target runs again */
};

struct unwinder *unwinder_new(int pid)
{
    struct unwinder *u = calloc(1, sizeof *u);
    if (!u) return NULL;
    u->pid = pid;
    u->pages = malloc(CACHED_PAGES * PAGE);
    u->as = unw_create_addr_space((unw_accessors_t *)&accessors, 0);
    if (!u->pages || !u->as) {
        unwinder_free(u);
        return NULL;
    }
    /* Caching is off by default (90 ms instead of 3 for 100 threads). Only one thread unwinds a given address
     * space, so the per-thread cache serves: it also spares the signal masking the global cache's lock costs. */
    unw_set_caching_policy(u->as, UNW_CACHE_PER_THREAD);
    return u;
}

void unwinder_free(struct unwinder *u)
{
    if (!u) return;
    if (u->upt) _UPT_destroy(u->upt);
    if (u->as) unw_destroy_addr_space(u->as);
    free(u->pages);
    free(u);
}

/* FNV-1a of /proc/PID/maps: cheap enough to run before every stop. */
static unsigned long long maps_hash(int pid)
{
    char path[64], buf[65536];
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    unsigned long long h = 1469598103934665603ULL;
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)buf[i]) * 1099511628211ULL;
    fclose(f);
    return h;
}

int unwinder_prepare(struct unwinder *u)
{
    unsigned long long h = maps_hash(u->pid);
    if (u->upt && h == u->maps_hash) return 0;
    /* New or changed mappings (exec, dlopen, dlclose): forget loaded tables and cached unwind results. */
    if (u->upt) _UPT_destroy(u->upt);
    u->upt = _UPT_create(u->pid);
    u->maps_hash = h;
    unw_flush_cache(u->as, 0, 0);
    return u->upt ? 0 : -ENOMEM;
}

void unwinder_begin(struct unwinder *u) { memset(u->page_valid, 0, sizeof u->page_valid); }

int unwinder_thread(struct unwinder *u, int tid, unsigned long long *pcs, int max, char *why, size_t whylen)
{
    why[0] = '\0';
    struct thread_arg ta = {THREAD_ARG_MAGIC, u, u->upt, {{0}}};
    if (!ta.upt) {
        snprintf(why, whylen, "unwinder not prepared");
        return 0;
    }
    int rc = arch_regs_read(tid, &ta.regs);
    if (rc < 0) {
        snprintf(why, whylen, "cannot read registers: %s", strerror(-rc));
        return 0;
    }
    unw_cursor_t cursor;
    int n = 0;
    current_unwinder = u;
    rc = unw_init_remote(&cursor, u->as, &ta);
    if (rc < 0) snprintf(why, whylen, "cannot start unwinding: %s", unw_strerror(rc));
    while (rc >= 0) {
        unw_word_t ip;
        if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) break;
        pcs[n++] = ip;
        if (n == max) {
            snprintf(why, whylen, "stopped after %d frames", max);
            break;
        }
        rc = unw_step(&cursor);
        if (rc < 0) snprintf(why, whylen, "unwinding stopped: %s (JIT or code without unwind info?)", unw_strerror(rc));
        if (rc <= 0) break;
    }
    current_unwinder = NULL;
    return n;
}
