/* elfcore: the non-memory parts of an ELF core file as the kernel writes them (docs/protocols/elfcore.md): the ELF and
 * program headers, and the notes (per thread NT_PRSTATUS, NT_FPREGSET, NT_X86_XSTATE; once NT_PRPSINFO,
 * NT_SIGINFO, NT_AUXV, NT_FILE; and diagtop's own, diagtop_note.h). Pure byte building; the caller writes them. */
#ifndef DIAGTOP_ELFCORE_H
#define DIAGTOP_ELFCORE_H
#include <signal.h>
#include <stddef.h>

#include "actions/target/arch_regs.h"
#include "dump_maps.h"

struct core_thread {
    int tid;
    struct arch_core_regs regs;
    int signal; /* the signal it was stopped with (pr_cursig) */
};

struct core_process {
    int pid, ppid, pgrp, sid;
    unsigned uid, gid;
    char state;
    long nice;
    unsigned long flags;
    char fname[16];
    char psargs[80];
    unsigned char *auxv;
    size_t auxv_len;
    const siginfo_t *siginfo; /* the first thread's, as it came (a fault's address and code); NULL: its signal only */
    long long taken_monotonic_ns, taken_realtime_ns; /* when it was stopped: the DIAGTOP note (0: none written) */
};

struct bytes {
    unsigned char *data;
    size_t n, cap;
};

/* Notes; threads[0] comes first (readers treat it as the one that "crashed"). Returns 0 or -ENOMEM. */
int elfcore_notes(struct bytes *out, const struct core_process *p, const struct core_thread *threads, int nthreads,
                  const struct dump_maps *dm);
/* File offset where memory data starts, for notes of notes_size bytes and one PT_LOAD per mapping. */
unsigned long long elfcore_data_offset(const struct dump_maps *dm, size_t notes_size);
/* Bytes of data the file holds for a mapping (p_filesz). */
unsigned long long elfcore_filesz(const struct dump_map *m);
/* ELF header and program headers (PT_NOTE, then a PT_LOAD per mapping in address order). With PN_XNUM (0xffff)
 * or more program headers, e_phnum is PN_XNUM and the real count is in section header 0's sh_info: e_shoff,
 * e_shnum = 1 and e_shentsize point at it, and it follows the data, as the kernel writes it (elfcore_trailer). */
int elfcore_headers(struct bytes *out, const struct dump_maps *dm, size_t notes_size);
/* What follows the data: that one section header, or nothing (out->n == 0) below PN_XNUM program headers.
 * *offset is where it goes, the end of the data; *offset + out->n is the file's size. */
int elfcore_trailer(struct bytes *out, const struct dump_maps *dm, size_t notes_size, unsigned long long *offset);
void bytes_free(struct bytes *b);
#endif
