#include "core_notes.h"

#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/procfs.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actions/dump/diagtop_note.h"
#include "util/grow.h"

#define MAX_PHDRS (1u << 22)        /* more segments than any real process maps (the kernel caps at 65530 + a few) */
#define MAX_NOTES_BYTES (256u << 20) /* NT_FILE of 70,000 mappings is ~10 MB */
#define X86_64_RIP 16               /* indexes into pr_reg (user_regs_struct) */
#define X86_64_RSP 19

/* Reads exactly n bytes at off; -1 when the file is shorter. */
static int read_at(int fd, void *buf, size_t n, unsigned long long off)
{
    for (size_t done = 0; done < n;) {
        ssize_t r = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        done += (size_t)r;
    }
    return 0;
}

static const char *machine_name(int m)
{
    switch (m) {
    case EM_386: return "i386";
    case EM_ARM: return "arm";
    case EM_AARCH64: return "aarch64";
    case EM_PPC64: return "ppc64";
    case EM_S390: return "s390x";
    case EM_RISCV: return "riscv";
    case EM_MIPS: return "mips";
    case EM_LOONGARCH: return "loongarch";
    default: return "an unknown machine";
    }
}

/* The ELF header, checked to be a little-endian x86-64 core. */
static int check_header(const Elf64_Ehdr *h, char *err, size_t errlen)
{
    if (memcmp(h->e_ident, ELFMAG, SELFMAG) != 0) {
        snprintf(err, errlen, "not an ELF file");
        return -1;
    }
    if (h->e_ident[EI_CLASS] != ELFCLASS64 || h->e_ident[EI_DATA] != ELFDATA2LSB) {
        snprintf(err, errlen, "a %s ELF file: diagtop reads 64-bit little-endian (x86-64) cores",
                 h->e_ident[EI_CLASS] == ELFCLASS32 ? "32-bit" : "big-endian or unknown-class");
        return -1;
    }
    if (h->e_type != ET_CORE) {
        snprintf(err, errlen, "an ELF %s, not a core",
                 h->e_type == ET_EXEC ? "executable" : h->e_type == ET_DYN ? "shared object or PIE executable"
                                                                           : "object of another type");
        return -1;
    }
    if (h->e_machine != EM_X86_64) {
        snprintf(err, errlen, "a core of %s (ELF machine %d): diagtop reads x86-64 cores", machine_name(h->e_machine),
                 h->e_machine);
        return -1;
    }
    if (h->e_phentsize != sizeof(Elf64_Phdr)) {
        snprintf(err, errlen, "program header entries of %u bytes, not %zu: not a core diagtop can read",
                 h->e_phentsize, sizeof(Elf64_Phdr));
        return -1;
    }
    return 0;
}

/* The number of program headers: e_phnum, or, when that says PN_XNUM (65535 segments or more), section header
 * 0's sh_info. */
static int phdr_count(int fd, const Elf64_Ehdr *h, unsigned long long size, size_t *n, char *err, size_t errlen)
{
    *n = h->e_phnum;
    if (h->e_phnum != PN_XNUM) return 0;
    Elf64_Shdr sh0;
    if (h->e_shentsize != sizeof sh0 || h->e_shoff == 0 || h->e_shoff > size - sizeof sh0 ||
        read_at(fd, &sh0, sizeof sh0, h->e_shoff) < 0) {
        snprintf(err, errlen, "PN_XNUM program headers, but no section header 0 to count them");
        return -1;
    }
    *n = sh0.sh_info;
    return 0;
}

/* ---- the notes ---- */

struct note_walk {
    struct core_notes *out;
    size_t thread_cap, load_cap;
};

static int on_prstatus(struct note_walk *w, const unsigned char *desc, size_t len)
{
    struct elf_prstatus st;
    if (len < sizeof st) return 0; /* a short note is not a thread we can name */
    memcpy(&st, desc, sizeof st);
    struct core_notes *n = w->out;
    if (GROW(n->threads, w->thread_cap, n->nthreads, 16) < 0) return -1;
    n->threads[n->nthreads++] = (struct core_thread_note){
        .tid = st.pr_pid, .cursig = st.pr_cursig, .pc = st.pr_reg[X86_64_RIP], .sp = st.pr_reg[X86_64_RSP]};
    return 0;
}

/* The psinfo strings are fixed arrays, NUL-padded or not: copied as bounded C strings. */
static void on_prpsinfo(struct core_notes *n, const unsigned char *desc, size_t len)
{
    struct elf_prpsinfo ps;
    if (len < sizeof ps) return;
    memcpy(&ps, desc, sizeof ps);
    n->state = ps.pr_sname ? ps.pr_sname : '?';
    n->pid = ps.pr_pid;
    n->ppid = ps.pr_ppid;
    n->uid = (int)ps.pr_uid;
    n->gid = (int)ps.pr_gid;
    memcpy(n->fname, ps.pr_fname, sizeof ps.pr_fname);
    n->fname[sizeof ps.pr_fname] = '\0';
    memcpy(n->args, ps.pr_psargs, sizeof ps.pr_psargs);
    n->args[sizeof ps.pr_psargs] = '\0';
    for (char *c = n->args + strlen(n->args); c > n->args && c[-1] == ' '; c--) c[-1] = '\0';
}

static void on_siginfo(struct core_notes *n, const unsigned char *desc, size_t len)
{
    siginfo_t si;
    if (len < sizeof si) return;
    memcpy(&si, desc, sizeof si);
    /* A live dump (gcore's, diagtop's) records no signal, or the SIGSTOP that held the process: never fatal. */
    if (si.si_signo <= 0 || si.si_signo == SIGSTOP) return;
    n->signal = (struct core_signal){.present = 1, .signo = si.si_signo, .code = si.si_code, .errnum = si.si_errno};
    if (core_notes_signal_has_addr(&n->signal)) n->signal.addr = (unsigned long long)(uintptr_t)si.si_addr;
    if (core_notes_signal_sent(&n->signal)) {
        n->signal.sender_pid = si.si_pid;
        n->signal.sender_uid = (int)si.si_uid;
    }
}

static void on_auxv(struct core_notes *n, const unsigned char *desc, size_t len)
{
    if (n->auxv) return; /* one NT_AUXV per core: a second one is ignored */
    size_t max = len / 16 < CORE_AUXV_MAX ? len / 16 : CORE_AUXV_MAX;
    n->auxv = max ? calloc(max, sizeof *n->auxv) : NULL;
    for (size_t off = 0; off + 16 <= len; off += 16) {
        unsigned long long kv[2];
        memcpy(kv, desc + off, sizeof kv);
        if (kv[0] == AT_NULL) break;
        if (n->auxv && (size_t)n->nauxv < max) n->auxv[n->nauxv++] = (struct core_auxv_entry){kv[0], kv[1]};
        if (kv[0] == AT_ENTRY) n->auxv_entry = kv[1];
        else if (kv[0] == AT_EXECFN) n->auxv_execfn = kv[1];
        else if (kv[0] == AT_PHDR) n->auxv_phdr = kv[1];
    }
}

/* NT_FILE: count and page size, count triples {start, end, offset in pages}, then count NUL-terminated paths. */
static int on_file(struct core_notes *n, const unsigned char *desc, size_t len)
{
    unsigned long long head[2];
    if (len < sizeof head || n->files) return 0; /* one NT_FILE per core: a second is not believed */
    memcpy(head, desc, sizeof head);
    size_t most = (len - sizeof head) / 24;
    if (head[0] > most) return 0;
    size_t count = (size_t)head[0];
    const char *names = (const char *)desc + sizeof head + count * 24, *end = (const char *)desc + len;
    n->files = calloc(count ? count : 1, sizeof *n->files);
    if (!n->files) return -1;
    for (size_t i = 0; i < count; i++) {
        const char *nul = names < end ? memchr(names, '\0', (size_t)(end - names)) : NULL;
        if (!nul) break; /* the paths ran out: the entries that have one are kept */
        unsigned long long t[3];
        memcpy(t, desc + sizeof head + i * 24, sizeof t);
        char *path = strdup(names);
        if (!path) return -1;
        n->files[n->nfiles++] = (struct core_file_note){.start = t[0], .end = t[1], .page_offset = t[2], .path = path};
        names = nul + 1;
    }
    return 0;
}

/* diagtop's own note: when it stopped the process (a time before 1970 or an empty clock is not believed). */
static void on_taken(struct core_notes *n, const unsigned char *desc, size_t len)
{
    struct diagtop_note_taken t;
    if (len < sizeof t) return;
    memcpy(&t, desc, sizeof t);
    if (t.monotonic_ns <= 0 || t.realtime_ns <= 0) return;
    n->taken_monotonic_ns = t.monotonic_ns;
    n->taken_realtime_ns = t.realtime_ns;
}

static int on_note(struct note_walk *w, const char *name, size_t namesz, unsigned type, const unsigned char *desc,
                   size_t len)
{
    if (namesz == sizeof DIAGTOP_NOTE_NAME && memcmp(name, DIAGTOP_NOTE_NAME, namesz) == 0) {
        if (type == DIAGTOP_NT_TAKEN) on_taken(w->out, desc, len);
        return 0;
    }
    if (namesz != 5 || memcmp(name, "CORE", 5) != 0) return 0; /* LINUX (xstate) and others: registers we skip */
    switch (type) {
    case NT_PRSTATUS: return on_prstatus(w, desc, len);
    case NT_PRPSINFO: on_prpsinfo(w->out, desc, len); return 0;
    case NT_SIGINFO: on_siginfo(w->out, desc, len); return 0;
    case NT_AUXV: on_auxv(w->out, desc, len); return 0;
    case NT_FILE: return on_file(w->out, desc, len);
    default: return 0;
    }
}

/* One PT_NOTE segment's notes: {namesz, descsz, type}, name and desc each padded to 4 bytes. A note that runs past
 * the segment ends the walk. */
static int walk_notes(struct note_walk *w, const unsigned char *buf, size_t len)
{
    size_t off = 0;
    while (len - off >= 12) {
        uint32_t hdr[3];
        memcpy(hdr, buf + off, sizeof hdr);
        size_t name_room = ((size_t)hdr[0] + 3) & ~(size_t)3, desc_room = ((size_t)hdr[1] + 3) & ~(size_t)3;
        size_t left = len - off - 12;
        if (name_room > left || desc_room > left - name_room || hdr[1] > desc_room) break;
        const unsigned char *name = buf + off + 12, *desc = name + name_room;
        if (on_note(w, (const char *)name, hdr[0], hdr[2], desc, hdr[1]) < 0) return -1;
        off += 12 + name_room + desc_room;
    }
    return 0;
}

/* ---- the program headers ---- */

static int by_vaddr(const void *a, const void *b)
{
    const struct core_load *x = a, *y = b;
    return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static int read_segments(int fd, const Elf64_Ehdr *h, struct core_notes *out, char *err, size_t errlen)
{
    size_t n;
    unsigned long long size = out->file_size;
    if (phdr_count(fd, h, size, &n, err, errlen) < 0) return -1;
    if (n == 0 || n > MAX_PHDRS || h->e_phoff > size || n * sizeof(Elf64_Phdr) > size - h->e_phoff) {
        snprintf(err, errlen, n == 0 ? "no program headers" : "program headers beyond the end of the file "
                                                             "(%zu of them at offset %llu): truncated or not a core",
                 n, (unsigned long long)h->e_phoff);
        return -1;
    }
    Elf64_Phdr *ph = malloc(n * sizeof *ph);
    if (!ph || read_at(fd, ph, n * sizeof *ph, h->e_phoff) < 0) {
        free(ph);
        snprintf(err, errlen, "cannot read the program headers");
        return -1;
    }
    struct note_walk w = {.out = out};
    int rc = 0, notes = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (ph[i].p_offset > UINT64_MAX - ph[i].p_filesz) {
            snprintf(err, errlen, "segment %zu: offset and size overflow", i);
            rc = -1;
            break;
        }
        unsigned long long end = ph[i].p_offset + ph[i].p_filesz;
        if (ph[i].p_type == PT_LOAD) {
            if (end > out->needed_size) out->needed_size = end;
            if (GROW(out->loads, w.load_cap, out->nloads, 64) < 0) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
                break;
            }
            out->loads[out->nloads++] = (struct core_load){ph[i].p_vaddr, ph[i].p_memsz, ph[i].p_offset, ph[i].p_filesz};
            continue;
        }
        if (ph[i].p_type != PT_NOTE) continue;
        notes++;
        if (end > size || ph[i].p_filesz > MAX_NOTES_BYTES) {
            snprintf(err, errlen, "%s",
                     end > size ? "the notes run past the end of the file: the core is truncated before its threads"
                                : "notes larger than 256 MiB: not a core diagtop can read");
            rc = -1;
            break;
        }
        if (end > out->needed_size) out->needed_size = end;
        unsigned char *buf = malloc(ph[i].p_filesz ? ph[i].p_filesz : 1);
        if (!buf || read_at(fd, buf, ph[i].p_filesz, ph[i].p_offset) < 0 || walk_notes(&w, buf, ph[i].p_filesz) < 0) {
            snprintf(err, errlen, "cannot read the notes: %s", buf ? "out of memory or a read error" : "out of memory");
            rc = -1;
        }
        free(buf);
    }
    free(ph);
    if (rc == 0 && out->nloads) qsort(out->loads, (size_t)out->nloads, sizeof *out->loads, by_vaddr);
    if (rc == 0 && (!notes || out->nthreads == 0)) {
        snprintf(err, errlen, "%s", notes ? "no thread (NT_PRSTATUS) in the notes" : "no notes (PT_NOTE) in the core");
        rc = -1;
    }
    return rc;
}

int core_notes_read(int fd, struct core_notes *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    Elf64_Ehdr h;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "not a regular file");
        return -1;
    }
    out->file_size = (unsigned long long)st.st_size;
    if (read_at(fd, &h, sizeof h, 0) < 0) {
        snprintf(err, errlen, out->file_size < SELFMAG ? "not an ELF file" : "shorter than an ELF header");
        if (out->file_size >= SELFMAG) {
            unsigned char m[SELFMAG];
            if (read_at(fd, m, SELFMAG, 0) == 0 && memcmp(m, ELFMAG, SELFMAG) != 0)
                snprintf(err, errlen, "not an ELF file");
        }
        return -1;
    }
    if (check_header(&h, err, errlen) < 0 || read_segments(fd, &h, out, err, errlen) < 0) {
        core_notes_free(out);
        return -1;
    }
    return 0;
}

void core_notes_free(struct core_notes *n)
{
    for (int i = 0; i < n->nfiles; i++) free(n->files[i].path);
    free(n->files);
    free(n->threads);
    free(n->loads);
    free(n->auxv);
    memset(n, 0, sizeof *n);
}

/* ---- signals ---- */

const char *core_notes_signal_name(int signo, char *buf, size_t bufsz)
{
    const char *abbrev = signo > 0 && signo < 32 ? sigabbrev_np(signo) : NULL;
    if (abbrev) snprintf(buf, bufsz, "SIG%s", abbrev);
    else if (signo >= SIGRTMIN && signo <= SIGRTMAX) snprintf(buf, bufsz, "SIGRTMIN+%d", signo - SIGRTMIN);
    else snprintf(buf, bufsz, "signal %d", signo);
    return buf;
}

struct code_text {
    int signo, code;
    const char *text;
};

static const struct code_text codes[] = {
    {SIGSEGV, SEGV_MAPERR, "address not mapped"},
    {SIGSEGV, SEGV_ACCERR, "invalid permissions for the mapping"},
    {SIGSEGV, SEGV_BNDERR, "failed address bound checks"},
    {SIGSEGV, SEGV_PKUERR, "denied by a memory protection key"},
    {SIGSEGV, SI_KERNEL, "general protection fault (a non-canonical address: not known)"},
    {SIGBUS, BUS_ADRALN, "invalid address alignment"},
    {SIGBUS, BUS_ADRERR, "nonexistent physical address"},
    {SIGBUS, BUS_OBJERR, "object-specific hardware error (a mapped file shrank?)"},
    {SIGBUS, BUS_MCEERR_AR, "hardware memory error"},
    {SIGILL, ILL_ILLOPC, "illegal opcode"},
    {SIGILL, ILL_ILLOPN, "illegal operand"},
    {SIGILL, ILL_PRVOPC, "privileged opcode"},
    {SIGFPE, FPE_INTDIV, "integer divide by zero"},
    {SIGFPE, FPE_INTOVF, "integer overflow"},
    {SIGFPE, FPE_FLTDIV, "floating-point divide by zero"},
    {SIGFPE, FPE_FLTINV, "invalid floating-point operation"},
    {SIGTRAP, TRAP_BRKPT, "breakpoint"},
    {SIGTRAP, TRAP_TRACE, "trace trap"},
    {0, SI_USER, "sent by kill"},
    {0, SI_KERNEL, "sent by the kernel"},
    {0, SI_QUEUE, "sent by sigqueue"},
    {0, SI_TIMER, "a timer expired"},
    {0, SI_TKILL, "sent by tkill or tgkill"},
};

const char *core_notes_signal_code(int signo, int code)
{
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (codes[i].signo == signo && codes[i].code == code) return codes[i].text;
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (codes[i].signo == 0 && codes[i].code == code) return codes[i].text;
    return "";
}

int core_notes_signal_has_addr(const struct core_signal *s)
{
    int fault = s->signo == SIGSEGV || s->signo == SIGBUS || s->signo == SIGILL || s->signo == SIGFPE ||
                s->signo == SIGTRAP;
    return fault && s->code > 0 && s->code != SI_KERNEL;
}

int core_notes_signal_sent(const struct core_signal *s)
{
    return s->code == SI_USER || s->code == SI_QUEUE || s->code == SI_TKILL;
}

const char *core_notes_signal_describe(const struct core_signal *s, char *buf, size_t bufsz)
{
    char name[32];
    const char *code = core_notes_signal_code(s->signo, s->code);
    int n = snprintf(buf, bufsz, "%s%s%s%s", core_notes_signal_name(s->signo, name, sizeof name), code[0] ? " (" : "",
                     code, code[0] ? ")" : "");
    if (n < 0 || (size_t)n >= bufsz) return buf;
    if (core_notes_signal_has_addr(s))
        snprintf(buf + n, bufsz - (size_t)n, " at 0x%llx%s", s->addr,
                 s->signo == SIGSEGV && s->addr < 4096 ? " (a NULL pointer, or a small offset from one)" : "");
    else if (core_notes_signal_sent(s))
        snprintf(buf + n, bufsz - (size_t)n, " from pid %d, uid %d", s->sender_pid, s->sender_uid);
    return buf;
}
