#include "elfcore.h"

#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/procfs.h>

#include "diagtop_note.h"

#define PAGE 4096ULL

static int put(struct bytes *b, const void *data, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 65536;
        while (cap < b->n + n) cap *= 2;
        unsigned char *d = realloc(b->data, cap);
        if (!d) return -ENOMEM;
        b->data = d;
        b->cap = cap;
    }
    if (data) memcpy(b->data + b->n, data, n);
    else memset(b->data + b->n, 0, n);
    b->n += n;
    return 0;
}

static size_t pad4(size_t n) { return (n + 3) & ~(size_t)3; }

/* One note record: header, name padded to 4, descriptor padded to 4. */
static int note(struct bytes *b, const char *name, unsigned type, const void *desc, size_t len)
{
    Elf64_Nhdr h = {(Elf64_Word)strlen(name) + 1, (Elf64_Word)len, type};
    if (put(b, &h, sizeof h) < 0) return -ENOMEM;
    size_t nl = strlen(name) + 1;
    if (put(b, name, nl) < 0 || put(b, NULL, pad4(nl) - nl) < 0) return -ENOMEM;
    if (put(b, desc, len) < 0 || put(b, NULL, pad4(len) - len) < 0) return -ENOMEM;
    return 0;
}

static int prstatus(struct bytes *b, const struct core_process *p, const struct core_thread *t)
{
    struct elf_prstatus st;
    memset(&st, 0, sizeof st);
    st.pr_info.si_signo = t->signal;
    st.pr_cursig = (short)t->signal;
    st.pr_pid = t->tid;
    st.pr_ppid = p->ppid;
    st.pr_pgrp = p->pgrp;
    st.pr_sid = p->sid;
    memcpy(&st.pr_reg, &t->regs.gp, sizeof st.pr_reg);
    st.pr_fpvalid = t->regs.have_fp;
    return note(b, "CORE", NT_PRSTATUS, &st, sizeof st);
}

static int thread_fp(struct bytes *b, const struct core_thread *t)
{
    if (t->regs.have_fp && note(b, "CORE", NT_FPREGSET, t->regs.fp, sizeof t->regs.fp) < 0) return -ENOMEM;
    if (t->regs.xstate && note(b, "LINUX", ARCH_NT_XSTATE, t->regs.xstate, t->regs.xstate_len) < 0) return -ENOMEM;
    return 0;
}

static int prpsinfo(struct bytes *b, const struct core_process *p)
{
    struct elf_prpsinfo ps;
    memset(&ps, 0, sizeof ps);
    static const char states[] = "RSDTZW";
    const char *where = strchr(states, p->state);
    ps.pr_state = where ? (char)(where - states) : 0;
    ps.pr_sname = p->state;
    ps.pr_zomb = p->state == 'Z';
    ps.pr_nice = (char)p->nice;
    ps.pr_flag = p->flags;
    ps.pr_uid = p->uid;
    ps.pr_gid = p->gid;
    ps.pr_pid = p->pid;
    ps.pr_ppid = p->ppid;
    ps.pr_pgrp = p->pgrp;
    ps.pr_sid = p->sid;
    memcpy(ps.pr_fname, p->fname, sizeof ps.pr_fname);
    memcpy(ps.pr_psargs, p->psargs, sizeof ps.pr_psargs);
    return note(b, "CORE", NT_PRPSINFO, &ps, sizeof ps);
}

static int siginfo(struct bytes *b, int sig, const siginfo_t *given)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (given && given->si_signo == sig) si = *given;
    si.si_signo = sig;
    return note(b, "CORE", NT_SIGINFO, &si, sizeof si);
}

/* NT_FILE: count, page size, {start, end, offset in pages} per file mapping, then the paths. */
static int file_note(struct bytes *b, const struct dump_maps *dm)
{
    struct bytes d = {0};
    unsigned long long count = 0, page = PAGE;
    for (int i = 0; i < dm->n; i++) count += dm->maps[i].path && dm->maps[i].path[0] == '/';
    int rc = put(&d, &count, 8) | put(&d, &page, 8);
    for (int i = 0; i < dm->n && rc == 0; i++) {
        const struct dump_map *m = &dm->maps[i];
        if (!m->path || m->path[0] != '/') continue;
        unsigned long long e[3] = {m->start, m->end, m->offset / PAGE};
        rc = put(&d, e, sizeof e);
    }
    for (int i = 0; i < dm->n && rc == 0; i++) {
        const struct dump_map *m = &dm->maps[i];
        if (!m->path || m->path[0] != '/') continue;
        size_t l = strlen(m->path);
        if (m->deleted) l -= 10; /* without " (deleted)" */
        rc = put(&d, m->path, l) | put(&d, NULL, 1);
    }
    if (rc == 0) rc = note(b, "CORE", NT_FILE, d.data, d.n);
    bytes_free(&d);
    return rc ? -ENOMEM : 0;
}

int elfcore_notes(struct bytes *out, const struct core_process *p, const struct core_thread *threads, int nthreads,
                  const struct dump_maps *dm)
{
    /* The kernel's order: first thread's status, the process notes, its FP state; then every other thread. */
    int sig = nthreads > 0 ? threads[0].signal : SIGSTOP;
    if (nthreads > 0 && prstatus(out, p, &threads[0]) < 0) return -ENOMEM;
    if (prpsinfo(out, p) < 0 || siginfo(out, sig, p->siginfo) < 0) return -ENOMEM;
    if (p->auxv_len && note(out, "CORE", NT_AUXV, p->auxv, p->auxv_len) < 0) return -ENOMEM;
    if (file_note(out, dm) < 0) return -ENOMEM;
    struct diagtop_note_taken taken = {p->taken_monotonic_ns, p->taken_realtime_ns};
    if (p->taken_realtime_ns && note(out, DIAGTOP_NOTE_NAME, DIAGTOP_NT_TAKEN, &taken, sizeof taken) < 0)
        return -ENOMEM;
    if (nthreads > 0 && thread_fp(out, &threads[0]) < 0) return -ENOMEM;
    for (int i = 1; i < nthreads; i++)
        if (prstatus(out, p, &threads[i]) < 0 || thread_fp(out, &threads[i]) < 0) return -ENOMEM;
    return 0;
}

unsigned long long elfcore_filesz(const struct dump_map *m)
{
    return m->amount == DUMP_ALL ? m->end - m->start : m->amount == DUMP_FIRST_PAGE ? PAGE : 0;
}

unsigned long long elfcore_data_offset(const struct dump_maps *dm, size_t notes_size)
{
    unsigned long long phnum = 1 + (unsigned long long)dm->n;
    unsigned long long end = sizeof(Elf64_Ehdr) + phnum * sizeof(Elf64_Phdr) + notes_size;
    return (end + PAGE - 1) & ~(PAGE - 1);
}

static unsigned long long data_end(const struct dump_maps *dm, size_t notes_size)
{
    unsigned long long off = elfcore_data_offset(dm, notes_size);
    for (int i = 0; i < dm->n; i++) off += elfcore_filesz(&dm->maps[i]);
    return off;
}

static int extended_count(const struct dump_maps *dm) { return 1 + (unsigned long long)dm->n >= PN_XNUM; }

int elfcore_headers(struct bytes *out, const struct dump_maps *dm, size_t notes_size)
{
    unsigned long long phnum = 1 + (unsigned long long)dm->n;
    Elf64_Ehdr eh;
    memset(&eh, 0, sizeof eh);
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    eh.e_type = ET_CORE;
    eh.e_machine = ARCH_ELF_MACHINE;
    eh.e_version = EV_CURRENT;
    eh.e_phoff = sizeof eh;
    eh.e_ehsize = sizeof eh;
    eh.e_phentsize = sizeof(Elf64_Phdr);
    eh.e_phnum = (Elf64_Half)phnum;
    if (extended_count(dm)) { /* the kernel's fill_extnum_info */
        eh.e_phnum = PN_XNUM;
        eh.e_shoff = data_end(dm, notes_size);
        eh.e_shentsize = sizeof(Elf64_Shdr);
        eh.e_shnum = 1;
        eh.e_shstrndx = SHN_UNDEF;
    }
    if (put(out, &eh, sizeof eh) < 0) return -ENOMEM;
    Elf64_Phdr ph;
    memset(&ph, 0, sizeof ph);
    ph.p_type = PT_NOTE;
    ph.p_offset = sizeof eh + phnum * sizeof ph;
    ph.p_filesz = notes_size;
    if (put(out, &ph, sizeof ph) < 0) return -ENOMEM;
    unsigned long long off = elfcore_data_offset(dm, notes_size);
    for (int i = 0; i < dm->n; i++) {
        const struct dump_map *m = &dm->maps[i];
        memset(&ph, 0, sizeof ph);
        ph.p_type = PT_LOAD;
        ph.p_offset = off;
        ph.p_vaddr = m->start;
        ph.p_memsz = m->end - m->start;
        ph.p_filesz = elfcore_filesz(m);
        ph.p_flags = (m->perms[0] == 'r' ? PF_R : 0) | (m->perms[1] == 'w' ? PF_W : 0) | (m->perms[2] == 'x' ? PF_X : 0);
        ph.p_align = PAGE;
        off += ph.p_filesz;
        if (put(out, &ph, sizeof ph) < 0) return -ENOMEM;
    }
    return 0;
}

int elfcore_trailer(struct bytes *out, const struct dump_maps *dm, size_t notes_size, unsigned long long *offset)
{
    *offset = data_end(dm, notes_size);
    if (!extended_count(dm)) return 0;
    Elf64_Shdr sh;
    memset(&sh, 0, sizeof sh);
    sh.sh_type = SHT_NULL;
    sh.sh_size = 1;            /* e_shnum, as the kernel puts it */
    sh.sh_link = SHN_UNDEF;    /* e_shstrndx */
    sh.sh_info = (Elf64_Word)(1 + dm->n); /* the real number of program headers */
    return put(out, &sh, sizeof sh);
}

void bytes_free(struct bytes *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}
