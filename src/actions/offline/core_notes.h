/* core_notes: the process as an ELF core recorded it, read from the file's header, program headers and notes with
 * every offset and size checked (a core is untrusted input, maybe from someone else's box): who it was
 * (NT_PRPSINFO), each thread and the signal it was taking (NT_PRSTATUS), why it was dumped (NT_SIGINFO), the
 * auxiliary vector (NT_AUXV), the mapped files (NT_FILE), and when diagtop took it (its DIAGTOP note). Reads with pread: a 10 GiB core is never loaded. The
 * memory itself (PT_LOAD) is read by libdw (core_stack). x86-64 cores only, as diagtop writes and unwinds them. */
#ifndef DIAGTOP_CORE_NOTES_H
#define DIAGTOP_CORE_NOTES_H
#include <stddef.h>

#define CORE_AUXV_MAX 128 /* the kernel writes about 20; a core claiming more is cut there */

struct core_thread_note {
    int tid;
    int cursig;                    /* the signal it was taking, 0: none */
    unsigned long long pc, sp;     /* from its registers */
};

struct core_file_note {
    unsigned long long start, end, page_offset; /* one file mapping, as NT_FILE lists it */
    char *path;
};

struct core_auxv_entry {
    unsigned long long type, value; /* one (AT_ type, value) pair of NT_AUXV */
};

struct core_load {
    unsigned long long vaddr, memsz, offset, filesz; /* one PT_LOAD: filesz of its memsz bytes are in the file */
};

struct core_signal {
    int present;   /* an NT_SIGINFO note was there with a signal in it */
    int signo, code, errnum;
    unsigned long long addr; /* the faulting address, for SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP */
    int sender_pid, sender_uid; /* who sent it, for a signal sent by kill, tkill or sigqueue */
};

struct core_notes {
    int pid, ppid, uid, gid;
    char state;            /* the process's state letter, 0: no NT_PRPSINFO */
    char fname[17];        /* comm, NUL-terminated */
    char args[81];         /* the start of the command line, as the kernel keeps it (80 bytes) */
    struct core_signal signal;
    struct core_thread_note *threads; /* in the core's order: a kernel core puts the dumping thread first */
    int nthreads;
    struct core_file_note *files;
    int nfiles;
    unsigned long long auxv_entry, auxv_execfn, auxv_phdr; /* AT_ENTRY, AT_EXECFN, AT_PHDR; 0: absent */
    struct core_auxv_entry *auxv; /* every pair before AT_NULL, in the core's order (at most CORE_AUXV_MAX) */
    int nauxv;
    long long taken_monotonic_ns, taken_realtime_ns; /* when diagtop stopped it (its DIAGTOP note); 0: not said */
    unsigned long long file_size;   /* bytes on disk */
    unsigned long long needed_size; /* bytes the program headers describe: more than file_size when truncated */
    struct core_load *loads;        /* the PT_LOAD segments, by address */
    int nloads;
};

/* Reads the notes of the core open on fd. Returns 0, or -1 with a one-line reason in err: not an ELF file, not a
 * core, another class or architecture, headers or notes out of the file's bounds. A core whose memory was cut
 * short (a dump killed midway) still reads: needed_size > file_size says so. */
int core_notes_read(int fd, struct core_notes *out, char *err, size_t errlen);
void core_notes_free(struct core_notes *n);

/* "SIGSEGV", or "signal 42"; "address not mapped" for (SIGSEGV, SEGV_MAPERR); "" when the code says nothing. */
const char *core_notes_signal_name(int signo, char *buf, size_t bufsz);
const char *core_notes_signal_code(int signo, int code);
/* Whether this signal's si_addr is a faulting address (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP raised by the
 * kernel, not sent by a process). */
int core_notes_signal_has_addr(const struct core_signal *s);
/* Whether it was sent by a process (kill, tkill, tgkill, sigqueue, timers excluded): sender_pid and _uid hold. */
int core_notes_signal_sent(const struct core_signal *s);
/* "SIGSEGV (address not mapped) at 0x10", "SIGQUIT (sent by kill) from pid 12, uid 0", "SIGABRT (sent by tkill or
 * tgkill) from pid 7, uid 1000". */
const char *core_notes_signal_describe(const struct core_signal *s, char *buf, size_t bufsz);
#endif
