/* elf_inflate: an in-memory copy of an ELF file with its compressed sections (SHF_COMPRESSED, zlib) inflated, so
 * that libdw opens it without inflating anything itself. Made with libdeflate, which inflates a whole buffer of
 * known size two to four times faster than zlib's streaming inflate that libelf uses: on a cold run this is most
 * of the CPU a first stack costs (libc6-dbg's libc: 10 MB of debug sections). */
#ifndef DIAGTOP_ELF_INFLATE_H
#define DIAGTOP_ELF_INFLATE_H
#include <stddef.h>

/* A memfd (close-on-exec, read position 0) holding the file at src_fd with every compressed section inflated, at
 * most max_bytes long. The bytes before the first compressed section (headers, loaded segments) keep their
 * offsets, so the copy also serves as a program's main ELF (Go's DWARF is compressed). Returns the fd, or -ENODATA
 * when nothing is compressed, -ENOTSUP for a layout it does not rewrite (ELF32, big-endian, a loaded section after
 * a compressed one), -EFBIG beyond max_bytes, -EINVAL for a malformed file. Every header is bounds-checked: a
 * target's own binary may be hostile. */
int elf_inflate_memfd(int src_fd, size_t max_bytes);
#endif
