/* debuginfo_cache: libdw would inflate every compressed debug section of a file when it opens it (zlib), and
 * Debian ships debug files (libc6-dbg, -dbgsym) with zlib-compressed sections: 10 MB for libc. diagtop inflates
 * them itself (elf_inflate: libdeflate, into a memfd libdw opens as it is), answers from that copy, and, like gdb's
 * index cache, a detached child then keeps it per build-id in $XDG_CACHE_HOME/diagtop/debug (atomically; skipped
 * when the disk is short of space or DIAGTOP_NO_DEBUG_CACHE is set); programs whose own DWARF is compressed (Go)
 * are kept per file identity. */
#ifndef DIAGTOP_DEBUGINFO_CACHE_H
#define DIAGTOP_DEBUGINFO_CACHE_H
#include <elfutils/libdwfl.h>
#include <stdio.h>

/* A Dwfl find_debuginfo callback: the kept copy for the module's build-id when there is one; else the distribution's
 * debug file, inflated in memory (and kept for next time); else dwfl_standard_find_debuginfo (keeping an inflated
 * copy for next time when the file found has compressed sections). */
int debuginfo_cache_find(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
                         const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                         char **debuginfo_file_name);

/* A copy to keep in the cache: mem when this run's copy is complete, else src (the debug file) to inflate again. */
struct debuginfo_keep {
    int mem, src;
    char path[4200];
};
/* The copies one run made, kept once it has its answer: forking to write them while libdw's memory is live cost
 * the run copy-on-write faults. */
struct debuginfo_keeps {
    struct debuginfo_keep *v;
    size_t n;
};
struct inflate_part;
/* debuginfo_cache_find for a run that knows what it will look up: a distribution debug file's .debug_info
 * inflated only as far as part says (NULL: all of it), the copies noted in keeps (NULL: written at once). */
int debuginfo_cache_find_for(struct inflate_part *part, struct debuginfo_keeps *keeps, Dwfl_Module *mod,
                             void **userdata, const char *modname, GElf_Addr base, const char *file_name,
                             const char *debuglink_file, GElf_Word debuglink_crc, char **debuginfo_file_name);
/* Writes the noted copies from a detached grandchild (complete ones as they are, cut ones inflated again in it)
 * and empties the list. */
void debuginfo_cache_keep_now(struct debuginfo_keeps *keeps);

/* A Dwfl find_elf callback: dwfl_linux_proc_find_elf, except that a file with compressed sections of its own (a Go
 * program's DWARF) is read from its decompressed copy, made on first use. */
int debuginfo_cache_find_elf(Dwfl_Module *mod, void **userdata, const char *module_name, Dwarf_Addr base,
                             char **file_name, Elf **elfp);

/* The file to read for a program just opened on fd (a find_elf callback's answer): fd itself, or, for a file with
 * compressed sections of its own, its decompressed copy (fd closed), or fd with *elfp set (a Go program whose own
 * tables serve). */
int debuginfo_cache_program(int fd, Elf **elfp);

/* The cache's directory ($XDG_CACHE_HOME/diagtop/debug, else ~/.cache/diagtop/debug), or -1 without either. */
int debuginfo_cache_dir(char *buf, size_t bufsz);
/* The module's build-id in hex, or -1 when it has none. */
int debuginfo_cache_build_id(Dwfl_Module *mod, char *hex, size_t hexsz);

/* A small text file kept beside the debug copies: what one build's DWARF said (malloc's layout as
 * "BUILDID.malloc", runtime.g's as "go-ID.golayout"), so a later run reads no DWARF for it. keep writes it
 * atomically (a temporary name renamed into place, never a half-written one); open_kept opens it for reading, or
 * returns NULL (none, or no cache directory). */
FILE *debuginfo_cache_open_kept(const char *name);
void debuginfo_cache_keep(const char *name, const char *format, ...) __attribute__((format(printf, 2, 3)));

#endif
