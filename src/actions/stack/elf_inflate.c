#include "elf_inflate.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The source file and the layout of its copy. */
struct inflate_plan {
    const unsigned char *src;
    size_t src_size;
    Elf64_Shdr *sh; /* the copy's section headers: offsets, sizes and flags rewritten */
    size_t shnum;
    size_t *order;  /* the sections after the prefix, by offset */
    size_t norder;
    size_t prefix;  /* bytes copied as they are: everything before the first compressed section */
    size_t shoff;   /* of the copy's section header table */
    size_t size;    /* of the copy */
};

static int in_file(const struct inflate_plan *p, uint64_t off, uint64_t len)
{
    return off <= p->src_size && len <= p->src_size - off;
}

/* An ELF64 little-endian header with a section table inside the file; its section count (extended when
 * e_shnum is 0). */
static int read_header(struct inflate_plan *p)
{
    const Elf64_Ehdr *eh = (const void *)p->src;
    if (p->src_size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) return -EINVAL;
    if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB) return -ENOTSUP;
    if (eh->e_shoff == 0) return -ENODATA;
    if (eh->e_shentsize != sizeof(Elf64_Shdr) || !in_file(p, eh->e_shoff, sizeof(Elf64_Shdr))) return -EINVAL;
    const Elf64_Shdr *sh0 = (const void *)(p->src + eh->e_shoff);
    uint64_t n = eh->e_shnum ? eh->e_shnum : sh0->sh_size;
    if (n == 0 || n > p->src_size / sizeof(Elf64_Shdr) || !in_file(p, eh->e_shoff, n * sizeof(Elf64_Shdr)))
        return -EINVAL;
    if (eh->e_phnum && (eh->e_phentsize != sizeof(Elf64_Phdr) ||
                        !in_file(p, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr))))
        return -EINVAL;
    p->shnum = n;
    p->sh = malloc(n * sizeof *p->sh);
    if (!p->sh) return -ENOMEM;
    memcpy(p->sh, sh0, n * sizeof *p->sh);
    return 0;
}

static int has_data(const Elf64_Shdr *s)
{
    return s->sh_type != SHT_NOBITS && s->sh_size > 0;
}

/* The offset of the first compressed section; every section's bytes inside the file. */
static int find_prefix(struct inflate_plan *p)
{
    uint64_t first = UINT64_MAX;
    for (size_t i = 1; i < p->shnum; i++) {
        const Elf64_Shdr *s = &p->sh[i];
        if (!has_data(s)) continue;
        if (!in_file(p, s->sh_offset, s->sh_size)) return -EINVAL;
        if ((s->sh_flags & SHF_COMPRESSED) && s->sh_offset < first) first = s->sh_offset;
    }
    if (first == UINT64_MAX) return -ENODATA;
    p->prefix = first;
    return 0;
}

/* What stays in place must end before the prefix does: the program headers and every segment (libdwfl reads a
 * main ELF's loaded bytes by their offsets), every loaded section, and any section that starts inside it. */
static int check_prefix(const struct inflate_plan *p)
{
    const Elf64_Ehdr *eh = (const void *)p->src;
    if (eh->e_phnum && eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > p->prefix) return -ENOTSUP;
    const Elf64_Phdr *ph = (const void *)(p->src + eh->e_phoff);
    for (size_t i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_filesz && (ph[i].p_offset > p->prefix || ph[i].p_filesz > p->prefix - ph[i].p_offset))
            return -ENOTSUP;
    for (size_t i = 1; i < p->shnum; i++) {
        const Elf64_Shdr *s = &p->sh[i];
        if (!has_data(s)) continue;
        int before = s->sh_offset < p->prefix;
        if ((before && s->sh_size > p->prefix - s->sh_offset) || (!before && (s->sh_flags & SHF_ALLOC)))
            return -ENOTSUP;
    }
    return 0;
}

static int by_offset(const void *a, const void *b, void *arg)
{
    const Elf64_Shdr *sh = arg;
    uint64_t x = sh[*(const size_t *)a].sh_offset, y = sh[*(const size_t *)b].sh_offset;
    return x < y ? -1 : x > y;
}

/* The size and alignment a section has in the copy. */
static int copy_shape(const struct inflate_plan *p, const Elf64_Shdr *s, uint64_t *size, uint64_t *align)
{
    *size = s->sh_size;
    *align = s->sh_addralign;
    if (s->sh_flags & SHF_COMPRESSED) {
        if (s->sh_size < sizeof(Elf64_Chdr)) return -EINVAL;
        Elf64_Chdr ch;
        memcpy(&ch, p->src + s->sh_offset, sizeof ch); /* the header need not be aligned in the file */
        if (ch.ch_type != ELFCOMPRESS_ZLIB) return -ENOTSUP;
        *size = ch.ch_size;
        *align = ch.ch_addralign;
    }
    if (*align == 0) *align = 1;
    return (*align & (*align - 1)) || *align > 65536 ? -EINVAL : 0;
}

/* Is section s one that stacks never read? Location lists place variables, which a stack does not show; they are a
 * seventh of libc's debug bytes. The copy keeps their headers as SHT_NOBITS, which libdw skips. */
static int unneeded(const struct inflate_plan *p, const Elf64_Shdr *s)
{
    const Elf64_Ehdr *eh = (const void *)p->src;
    size_t strndx = eh->e_shstrndx == SHN_XINDEX ? p->sh[0].sh_link : eh->e_shstrndx;
    if (strndx == 0 || strndx >= p->shnum || !has_data(&p->sh[strndx])) return 0;
    const Elf64_Shdr *str = &p->sh[strndx];
    if (s->sh_name >= str->sh_size) return 0;
    const char *name = (const char *)p->src + str->sh_offset + s->sh_name;
    size_t left = str->sh_size - s->sh_name;
    return (left > 10 && strcmp(name, ".debug_loc") == 0) || (left > 15 && strcmp(name, ".debug_loclists") == 0);
}

/* Lays the sections after the prefix out one after the other, in their order, then the section table. */
static int plan_layout(struct inflate_plan *p, size_t max_bytes)
{
    p->order = malloc(p->shnum * sizeof *p->order);
    if (!p->order) return -ENOMEM;
    for (size_t i = 1; i < p->shnum; i++)
        if (p->sh[i].sh_offset >= p->prefix || !has_data(&p->sh[i])) p->order[p->norder++] = i;
    qsort_r(p->order, p->norder, sizeof *p->order, by_offset, p->sh);
    uint64_t pos = p->prefix;
    for (size_t k = 0; k < p->norder; k++) {
        Elf64_Shdr *s = &p->sh[p->order[k]];
        if (has_data(s) && unneeded(p, s)) {
            s->sh_type = SHT_NOBITS;
            s->sh_flags &= ~(uint64_t)SHF_COMPRESSED;
        }
        if (!has_data(s)) {
            if (s->sh_offset >= p->prefix) s->sh_offset = pos; /* a NOBITS or empty section past the prefix */
            continue;
        }
        uint64_t size, align;
        int rc = copy_shape(p, s, &size, &align);
        if (rc < 0) return rc;
        pos = (pos + align - 1) & ~(align - 1);
        if (size > max_bytes || pos > max_bytes - size) return -EFBIG;
        s->sh_offset = pos;
        pos += size;
    }
    p->shoff = (pos + 7) & ~(uint64_t)7;
    p->size = p->shoff + p->shnum * sizeof(Elf64_Shdr);
    return p->size > max_bytes ? -EFBIG : 0;
}

/* Fills the copy at dst: the prefix, each section (inflated or as it is), the table, the header's e_shoff. */
static int fill(struct inflate_plan *p, unsigned char *dst)
{
    struct libdeflate_decompressor *z = libdeflate_alloc_decompressor();
    if (!z) return -ENOMEM;
    memcpy(dst, p->src, p->prefix);
    int rc = 0;
    const Elf64_Shdr *orig = (const void *)(p->src + ((const Elf64_Ehdr *)p->src)->e_shoff);
    for (size_t k = 0; rc == 0 && k < p->norder; k++) {
        size_t i = p->order[k];
        Elf64_Shdr *s = &p->sh[i];
        const Elf64_Shdr *o = &orig[i];
        if (!has_data(o) || !has_data(s)) continue;
        if (!(o->sh_flags & SHF_COMPRESSED)) {
            memcpy(dst + s->sh_offset, p->src + o->sh_offset, o->sh_size);
            continue;
        }
        Elf64_Chdr ch;
        memcpy(&ch, p->src + o->sh_offset, sizeof ch);
        /* NULL for the actual size: anything but exactly ch_size bytes is an error */
        if (libdeflate_zlib_decompress(z, p->src + o->sh_offset + sizeof ch, o->sh_size - sizeof ch,
                                       dst + s->sh_offset, ch.ch_size, NULL) != LIBDEFLATE_SUCCESS)
            rc = -EINVAL;
        s->sh_flags &= ~(uint64_t)SHF_COMPRESSED;
        s->sh_size = ch.ch_size;
        s->sh_addralign = ch.ch_addralign;
    }
    libdeflate_free_decompressor(z);
    memcpy(dst + p->shoff, p->sh, p->shnum * sizeof *p->sh);
    ((Elf64_Ehdr *)dst)->e_shoff = p->shoff;
    return rc;
}

/* A memfd of the planned size, filled. */
static int write_memfd(struct inflate_plan *p)
{
    int fd = memfd_create("diagtop-debuginfo", MFD_CLOEXEC);
    if (fd < 0) return -errno;
    int rc = ftruncate(fd, (off_t)p->size) < 0 ? -errno : 0;
    void *dst = MAP_FAILED;
    if (rc == 0) { /* populated at once: cheaper than one fault per page */
        dst = mmap(NULL, p->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
        if (dst == MAP_FAILED) rc = -errno;
    }
    if (rc == 0) rc = fill(p, dst);
    if (dst != MAP_FAILED) munmap(dst, p->size);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    return fd;
}

/* Whether any section is compressed, from the headers alone (a few kilobytes read): most files a process maps
 * have nothing compressed, and mapping each whole file to find out cost a warm run more than reading them. */
static int peek_compressed(int fd, size_t size)
{
    Elf64_Ehdr eh;
    Elf64_Shdr sh;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return -EINVAL;
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) return -ENOTSUP;
    if (eh.e_shoff == 0 || eh.e_shentsize != sizeof sh || eh.e_shoff > size) return eh.e_shoff ? -EINVAL : 0;
    uint64_t n = eh.e_shnum;
    if (n == 0 && (pread(fd, &sh, sizeof sh, (off_t)eh.e_shoff) != (ssize_t)sizeof sh || (n = sh.sh_size) == 0))
        return -EINVAL;
    if (n > (size - eh.e_shoff) / sizeof sh) return -EINVAL;
    Elf64_Shdr *all = malloc(n * sizeof sh);
    if (!all) return -ENOMEM;
    int rc = pread(fd, all, n * sizeof sh, (off_t)eh.e_shoff) == (ssize_t)(n * sizeof sh) ? 0 : -EINVAL;
    for (uint64_t i = 1; rc == 0 && i < n; i++)
        if ((all[i].sh_flags & SHF_COMPRESSED) && has_data(&all[i])) rc = 1;
    free(all);
    return rc;
}

int elf_inflate_memfd(int src_fd, size_t max_bytes)
{
    struct stat st;
    if (fstat(src_fd, &st) < 0) return -errno;
    if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) return -EINVAL;
    int any = peek_compressed(src_fd, (size_t)st.st_size);
    if (any <= 0) return any == 0 ? -ENODATA : any;
    struct inflate_plan p = {.src_size = (size_t)st.st_size};
    void *src = mmap(NULL, p.src_size, PROT_READ, MAP_PRIVATE, src_fd, 0);
    if (src == MAP_FAILED) return -errno;
    p.src = src;
    int rc = read_header(&p);
    if (rc == 0) rc = find_prefix(&p);
    if (rc == 0) rc = check_prefix(&p);
    if (rc == 0) rc = plan_layout(&p, max_bytes);
    if (rc == 0) rc = write_memfd(&p);
    munmap(src, p.src_size);
    free(p.sh);
    free(p.order);
    return rc;
}
