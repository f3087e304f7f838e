/* elf_inflate: an in-memory copy of an ELF file with its compressed sections (SHF_COMPRESSED, zlib) inflated, so
 * that libdw opens it without inflating anything itself. Made with libdeflate, which inflates a whole buffer of
 * known size two to four times faster than zlib's streaming inflate that libelf uses: on a cold run this is most
 * of the CPU a first stack costs (libc6-dbg's libc: 10 MB of debug sections). */
#ifndef DIAGTOP_ELF_INFLATE_H
#define DIAGTOP_ELF_INFLATE_H
#include <elf.h>
#include <stddef.h>

/* One section inflated only as far as its reader needs (the DWARF units of the addresses one run looks up: a tenth
 * of that run's CPU for libc). Once every other section is in the copy, wanted() says how many of its leading bytes
 * to inflate; with those in, end() says where the section ends in the copy, at most that far, or SIZE_MAX to have
 * it all after all. Both may read the copy's other sections through elf_copy_section. */
struct elf_copy;
struct inflate_part {
    const char *section;
    size_t (*wanted)(void *arg, const struct elf_copy *copy);
    size_t (*end)(void *arg, const struct elf_copy *copy, const unsigned char *bytes, size_t len);
    void *arg;
    int cut; /* set when the copy holds the section only in part */
};

/* An inflated section of the copy being made (not the part itself), or NULL. */
const unsigned char *elf_copy_section(const struct elf_copy *copy, const char *name, size_t *len);
/* Where the first loaded segment among n program headers starts (its p_vaddr rounded down to its alignment, as
 * libdwfl syncs a debug file with its program): 0, or -1 when none is loaded. The copy's own, the same way. */
int elf_first_load(const Elf64_Phdr *ph, size_t n, unsigned long long *vaddr);
int elf_copy_first_load(const struct elf_copy *copy, unsigned long long *vaddr);

/* A memfd (close-on-exec, read position 0) holding the file at src_fd with every compressed section inflated, at
 * most max_bytes long; part, when given and compressed, only as far as its reader says. The bytes before the first
 * compressed section (headers, loaded segments) keep their offsets, so the copy also serves as a program's main
 * ELF (Go's DWARF is compressed). Returns the fd, or -ENODATA
 * when nothing is compressed, -ENOTSUP for a layout it does not rewrite (ELF32, big-endian, a loaded section after
 * a compressed one), -EFBIG beyond max_bytes, -EINVAL for a malformed file. Every header is bounds-checked: a
 * target's own binary may be hostile. */
int elf_inflate_memfd(int src_fd, size_t max_bytes, struct inflate_part *part);
#endif
