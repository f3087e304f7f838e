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

/* An inflate stopped for want of space may leave its last match unwritten: at most 258 bytes (RFC 1951). */
#define INFLATE_CUT_SLACK 512

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
    size_t part;    /* the section inflated in part, laid out last (after the table), or 0 */
};

/* What the reader of a part sees: the copy as far as it is filled. */
struct elf_copy {
    const struct inflate_plan *plan;
    const unsigned char *dst;
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

/* Section i's header in the source file. */
static const Elf64_Shdr *original(const struct inflate_plan *p, size_t i)
{
    return &((const Elf64_Shdr *)(p->src + ((const Elf64_Ehdr *)p->src)->e_shoff))[i];
}

/* Section s's name from the file's own string table (read where the file has it: the copy's layout may have
 * moved it), or NULL. */
static const char *section_name(const struct inflate_plan *p, const Elf64_Shdr *s)
{
    const Elf64_Ehdr *eh = (const void *)p->src;
    size_t strndx = eh->e_shstrndx == SHN_XINDEX ? p->sh[0].sh_link : eh->e_shstrndx;
    if (strndx == 0 || strndx >= p->shnum || !has_data(original(p, strndx))) return NULL;
    const Elf64_Shdr *str = original(p, strndx);
    if (str->sh_flags & SHF_COMPRESSED || s->sh_name >= str->sh_size) return NULL;
    const char *name = (const char *)p->src + str->sh_offset + s->sh_name;
    return memchr(name, '\0', str->sh_size - s->sh_name) ? name : NULL;
}

/* Is section s one that stacks never read? Location lists place variables, which a stack does not show; they are a
 * seventh of libc's debug bytes. The copy keeps their headers as SHT_NOBITS, which libdw skips. */
static int unneeded(const struct inflate_plan *p, const Elf64_Shdr *s)
{
    const char *name = section_name(p, s);
    return name && (strcmp(name, ".debug_loc") == 0 || strcmp(name, ".debug_loclists") == 0);
}

/* The index of the section called name that has bytes in the file, or 0. */
static size_t section_index(const struct inflate_plan *p, const char *name)
{
    for (size_t i = 1; name && i < p->shnum; i++) {
        const char *n = section_name(p, &p->sh[i]);
        if (n && strcmp(n, name) == 0 && has_data(&p->sh[i])) return i;
    }
    return 0;
}

/* Gives section s its place in the copy at *pos (aligned), and moves *pos past it. */
static int place_section(const struct inflate_plan *p, Elf64_Shdr *s, uint64_t *pos, size_t max_bytes)
{
    if (has_data(s) && unneeded(p, s)) {
        s->sh_type = SHT_NOBITS;
        s->sh_flags &= ~(uint64_t)SHF_COMPRESSED;
    }
    if (!has_data(s)) {
        if (s->sh_offset >= p->prefix) s->sh_offset = *pos; /* a NOBITS or empty section past the prefix */
        return 0;
    }
    uint64_t size, align;
    int rc = copy_shape(p, s, &size, &align);
    if (rc < 0) return rc;
    *pos = (*pos + align - 1) & ~(align - 1);
    if (size > max_bytes || *pos > max_bytes - size) return -EFBIG;
    s->sh_offset = *pos;
    *pos += size;
    return 0;
}

/* Lays the sections after the prefix out one after the other, in their order, then the section table, then the
 * section inflated in part (so that cutting it shortens the copy). */
static int plan_layout(struct inflate_plan *p, size_t max_bytes)
{
    p->order = malloc(p->shnum * sizeof *p->order);
    if (!p->order) return -ENOMEM;
    for (size_t i = 1; i < p->shnum; i++)
        if (p->sh[i].sh_offset >= p->prefix || !has_data(&p->sh[i])) p->order[p->norder++] = i;
    qsort_r(p->order, p->norder, sizeof *p->order, by_offset, p->sh);
    uint64_t pos = p->prefix;
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < p->norder; k++)
        if (p->order[k] != p->part) rc = place_section(p, &p->sh[p->order[k]], &pos, max_bytes);
    p->shoff = pos = (pos + 7) & ~(uint64_t)7;
    pos += p->shnum * sizeof(Elf64_Shdr);
    if (rc == 0 && p->part) rc = place_section(p, &p->sh[p->part], &pos, max_bytes);
    p->size = pos;
    return rc < 0 ? rc : p->size > max_bytes ? -EFBIG : 0;
}

/* Faults in len bytes at addr for writing at once (MADV_POPULATE_WRITE, Linux 5.14): cheaper than a fault per
 * page. Where the kernel lacks it, the pages fault as they are written. */
static void populate(unsigned char *addr, size_t len)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)addr & ~(page - 1);
    madvise((void *)a, len + ((uintptr_t)addr - a), 23 /* MADV_POPULATE_WRITE */);
}

/* Inflates or copies original section i into its place in the copy, at most out bytes of it: *made is how many
 * are the section's (all of them, or when cut at most out, as an inflate stopped for space leaves the last match
 * unwritten). The copy's header then says the section is plain. */
static int fill_section(const struct inflate_plan *p, struct libdeflate_decompressor *z, unsigned char *dst, size_t i,
                        size_t out, size_t *made)
{
    const Elf64_Shdr *o = original(p, i);
    Elf64_Shdr *s = &p->sh[i];
    if (!(o->sh_flags & SHF_COMPRESSED)) {
        memcpy(dst + s->sh_offset, p->src + o->sh_offset, o->sh_size);
        *made = o->sh_size;
        return 0;
    }
    Elf64_Chdr ch;
    memcpy(&ch, p->src + o->sh_offset, sizeof ch);
    size_t want = out < ch.ch_size ? out : ch.ch_size;
    /* NULL for the actual size: anything but exactly ch_size bytes is an error, unless asked for fewer */
    enum libdeflate_result r = libdeflate_zlib_decompress(z, p->src + o->sh_offset + sizeof ch,
                                                          o->sh_size - sizeof ch, dst + s->sh_offset, want, NULL);
    if (r != LIBDEFLATE_SUCCESS && !(r == LIBDEFLATE_INSUFFICIENT_SPACE && want < ch.ch_size)) return -EINVAL;
    *made = want < ch.ch_size ? (want > INFLATE_CUT_SLACK ? want - INFLATE_CUT_SLACK : 0) : want;
    s->sh_flags &= ~(uint64_t)SHF_COMPRESSED;
    s->sh_size = ch.ch_size;
    s->sh_addralign = ch.ch_addralign;
    return 0;
}

/* The part: as many bytes as its reader wants (and a match's worth more, which an inflate stopped for space may
 * leave unwritten), then the end the reader sets within them; all of it when it wants all or cannot say. */
static int fill_part(struct inflate_plan *p, struct libdeflate_decompressor *z, unsigned char *dst,
                     struct inflate_part *part)
{
    const struct elf_copy view = {p, dst};
    Elf64_Chdr ch;
    memcpy(&ch, p->src + original(p, p->part)->sh_offset, sizeof ch);
    size_t wanted = part->wanted(part->arg, &view), made;
    if (wanted < ch.ch_size && ch.ch_size - wanted > INFLATE_CUT_SLACK) {
        size_t out = wanted + INFLATE_CUT_SLACK;
        populate(dst + p->sh[p->part].sh_offset, out);
        if (fill_section(p, z, dst, p->part, out, &made) < 0) return -EINVAL;
        size_t end = made >= wanted ? part->end(part->arg, &view, dst + p->sh[p->part].sh_offset, wanted) : SIZE_MAX;
        if (end <= wanted) {
            p->sh[p->part].sh_size = end;
            p->size = p->sh[p->part].sh_offset + end;
            part->cut = 1;
            return 0;
        }
    }
    populate(dst + p->sh[p->part].sh_offset, ch.ch_size);
    return fill_section(p, z, dst, p->part, SIZE_MAX, &made);
}

/* Fills the copy at dst: the prefix, each section (inflated or as it is), the part, the table, e_shoff. */
static int fill(struct inflate_plan *p, unsigned char *dst, struct inflate_part *part)
{
    struct libdeflate_decompressor *z = libdeflate_alloc_decompressor();
    if (!z) return -ENOMEM;
    memcpy(dst, p->src, p->prefix);
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < p->norder; k++) {
        size_t i = p->order[k], made;
        if (i != p->part && has_data(&p->sh[i])) rc = fill_section(p, z, dst, i, SIZE_MAX, &made);
    }
    if (rc == 0 && p->part) rc = fill_part(p, z, dst, part);
    libdeflate_free_decompressor(z);
    memcpy(dst + p->shoff, p->sh, p->shnum * sizeof *p->sh);
    ((Elf64_Ehdr *)dst)->e_shoff = p->shoff;
    return rc;
}

/* A memfd of the planned size, filled; cut to the part's end when the part was cut. */
static int write_memfd(struct inflate_plan *p, struct inflate_part *part)
{
    int fd = memfd_create("diagtop-debuginfo", MFD_CLOEXEC);
    if (fd < 0) return -errno;
    size_t planned = p->size, filled = p->part ? p->sh[p->part].sh_offset : p->size;
    int rc = ftruncate(fd, (off_t)planned) < 0 ? -errno : 0;
    void *dst = MAP_FAILED;
    if (rc == 0) {
        dst = mmap(NULL, planned, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (dst == MAP_FAILED) rc = -errno;
        else populate(dst, filled);
    }
    if (rc == 0) rc = fill(p, dst, part);
    if (dst != MAP_FAILED) munmap(dst, planned);
    if (rc == 0 && p->size < planned && ftruncate(fd, (off_t)p->size) < 0) rc = -errno;
    if (rc < 0) {
        close(fd);
        return rc;
    }
    return fd;
}

const unsigned char *elf_copy_section(const struct elf_copy *copy, const char *name, size_t *len)
{
    const struct inflate_plan *p = copy->plan;
    size_t i = section_index(p, name);
    if (i == 0 || i == p->part || (p->sh[i].sh_flags & SHF_COMPRESSED)) return NULL;
    *len = p->sh[i].sh_size;
    return copy->dst + p->sh[i].sh_offset;
}

int elf_first_load(const Elf64_Phdr *ph, size_t n, unsigned long long *vaddr)
{
    for (size_t i = 0; ph && i < n; i++)
        if (ph[i].p_type == PT_LOAD) {
            *vaddr = ph[i].p_vaddr & -ph[i].p_align; /* libdwfl's own sum, alignment 0 included */
            return 0;
        }
    return -1;
}

int elf_copy_first_load(const struct elf_copy *copy, unsigned long long *vaddr)
{
    const Elf64_Ehdr *eh = (const void *)copy->plan->src;
    return elf_first_load((const void *)(copy->plan->src + eh->e_phoff), eh->e_phnum, vaddr); /* read_header checked */
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

int elf_inflate_memfd(int src_fd, size_t max_bytes, struct inflate_part *part)
{
    struct stat st;
    if (part) part->cut = 0;
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
    if (rc == 0 && part) p.part = section_index(&p, part->section);
    if (p.part && !(p.sh[p.part].sh_flags & SHF_COMPRESSED)) p.part = 0; /* stored plain: nothing to cut */
    if (rc == 0) rc = plan_layout(&p, max_bytes);
    if (rc == 0) rc = write_memfd(&p, part);
    munmap(src, p.src_size);
    free(p.sh);
    free(p.order);
    return rc;
}
