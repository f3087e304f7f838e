/* elf_inflate: a copy with its compressed sections inflated has each section's bytes as the uncompressed original
 * and keeps its loaded bytes in place; a malformed or hostile file gets an error, never a crash or a huge copy. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdw.h>

#include "actions/stack/cu_index.h"
#include "actions/stack/dwarf_prefix.h"
#include "actions/stack/elf_inflate.h"
#include "check.h"

static char dir[256], plain[300], packed[300];

/* The file's bytes (malloc'd) and size. */
static unsigned char *slurp(const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) return NULL;
    unsigned char *b = malloc((size_t)st.st_size);
    *size = b && pread(fd, b, (size_t)st.st_size, 0) == st.st_size ? (size_t)st.st_size : 0;
    close(fd);
    return b;
}

/* Writes bytes to a file of the test directory and runs elf_inflate_memfd on it. */
static int inflate_bytes(const unsigned char *b, size_t n, size_t max)
{
    char path[320];
    snprintf(path, sizeof path, "%s/case", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, b, n) != (ssize_t)n) return -999;
    int rc = elf_inflate_memfd(fd, max, NULL);
    close(fd);
    if (rc >= 0) close(rc);
    return rc;
}

/* The data of the section called name, or NULL. */
static Elf_Data *section_data(Elf *elf, const char *name, GElf_Shdr *sh)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) < 0) return NULL;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        const char *n = gelf_getshdr(scn, sh) ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;
        if (n && strcmp(n, name) == 0) return elf_getdata(scn, NULL);
    }
    return NULL;
}

static void test_copy_matches_the_uncompressed_file(void)
{
    int src = open(packed, O_RDONLY);
    int mem = elf_inflate_memfd(src, 1UL << 30, NULL);
    CHECK(mem >= 0);
    if (mem < 0) return;
    int orig = open(plain, O_RDONLY);
    elf_version(EV_CURRENT);
    Elf *a = elf_begin(orig, ELF_C_READ_MMAP, NULL), *b = elf_begin(mem, ELF_C_READ_MMAP, NULL);
    CHECK(a && b);
    const char *names[] = {".debug_info", ".debug_abbrev", ".debug_line", ".debug_str", ".symtab", ".text"};
    for (size_t i = 0; a && b && i < sizeof names / sizeof *names; i++) {
        GElf_Shdr sa, sb;
        Elf_Data *da = section_data(a, names[i], &sa), *db = section_data(b, names[i], &sb);
        CHECK(da && db);
        if (!da || !db) continue;
        CHECK(!(sb.sh_flags & SHF_COMPRESSED));
        CHECK_INT(db->d_size, da->d_size);
        CHECK(db->d_size == da->d_size && memcmp(da->d_buf, db->d_buf, da->d_size) == 0);
    }
    /* Everything before the first compressed section, the loaded segments included, is where it was. */
    size_t np, nm;
    unsigned char *p = slurp(packed, &np);
    off_t msize = lseek(mem, 0, SEEK_END);
    unsigned char *m = mmap(NULL, (size_t)msize, PROT_READ, MAP_PRIVATE, mem, 0);
    Elf *pe = elf_memory((char *)p, np);
    nm = np;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(pe, scn));) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) && sh.sh_offset < nm) nm = sh.sh_offset;
    }
    CHECK(nm > 0 && memcmp(p + sizeof(Elf64_Ehdr), m + sizeof(Elf64_Ehdr), nm - sizeof(Elf64_Ehdr)) == 0);
    elf_end(pe);
    munmap(m, (size_t)msize);
    free(p);
    elf_end(a);
    elf_end(b);
    close(orig);
    close(mem);
    close(src);
}

static void test_nothing_compressed(void)
{
    int fd = open(plain, O_RDONLY);
    CHECK_INT(elf_inflate_memfd(fd, 1UL << 30, NULL), -ENODATA);
    close(fd);
}

/* The compressed header of .debug_info in the packed file's bytes. */
static Elf64_Chdr *info_chdr(unsigned char *b, size_t n)
{
    Elf *e = elf_memory((char *)b, n);
    GElf_Shdr sh;
    Elf64_Chdr *ch = section_data(e, ".debug_info", &sh) ? (Elf64_Chdr *)(b + sh.sh_offset) : NULL;
    elf_end(e);
    return ch;
}

static void test_hostile_files(void)
{
    size_t n;
    unsigned char *b = slurp(packed, &n), *c = malloc(n);
    CHECK(b && c && n > 4096);
    if (!b || !c) return;
    CHECK_INT(inflate_bytes(b, 10, 1UL << 30), -EINVAL);          /* shorter than a header */
    CHECK_INT(inflate_bytes(b, n / 2, 1UL << 30), -EINVAL);       /* the section table cut off */
    CHECK_INT(inflate_bytes(b, n, 4096), -EFBIG);                 /* beyond the caller's bound */
    memcpy(c, b, n);
    c[EI_CLASS] = ELFCLASS32;
    CHECK_INT(inflate_bytes(c, n, 1UL << 30), -ENOTSUP);
    memcpy(c, b, n);
    ((Elf64_Ehdr *)c)->e_shnum = 0xffff; /* more sections than the file holds */
    CHECK_INT(inflate_bytes(c, n, 1UL << 30), -EINVAL);
    memcpy(c, b, n);
    Elf64_Chdr *ch = info_chdr(c, n);
    CHECK(ch != NULL);
    if (ch) {
        ch->ch_size = 1ULL << 40; /* a claimed terabyte: refused before anything is allocated */
        CHECK_INT(inflate_bytes(c, n, 1UL << 30), -EFBIG);
        memcpy(c, b, n);
        ch = info_chdr(c, n);
        ch->ch_size += 1; /* one byte more than the stream holds */
        CHECK_INT(inflate_bytes(c, n, 1UL << 30), -EINVAL);
        memcpy(c, b, n);
        ch = info_chdr(c, n);
        memset((unsigned char *)(ch + 1) + 16, 0x55, 64); /* a corrupt stream */
        CHECK_INT(inflate_bytes(c, n, 1UL << 30), -EINVAL);
        memcpy(c, b, n);
        ch = info_chdr(c, n);
        ch->ch_type = 2; /* zstd: not ours to inflate; libdw is told nothing changed */
        CHECK_INT(inflate_bytes(c, n, 1UL << 30), -ENOTSUP);
    }
    free(b);
    free(c);
}

/* ---- .debug_info inflated in part (dwarf_prefix) ---- */

/* The value of the symbol called name in the ELF file at path (its DWARF address), or 0. */
static unsigned long long symbol_value(const char *path, const char *name)
{
    int fd = open(path, O_RDONLY);
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    unsigned long long v = 0;
    for (Elf_Scn *scn = NULL; e && !v && (scn = elf_nextscn(e, scn));) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB) continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym sym;
            const char *n = gelf_getsym(d, (int)i, &sym) ? elf_strptr(e, sh.sh_link, sym.st_name) : NULL;
            if (n && strcmp(n, name) == 0 && sym.st_value) v = sym.st_value;
        }
    }
    elf_end(e);
    close(fd);
    return v;
}

/* The first loaded address of the file at path, as dwarf_prefix wants it. */
static unsigned long long load_of(const char *path)
{
    int fd = open(path, O_RDONLY);
    Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    size_t n = 0;
    unsigned long long v = ~0ULL;
    if (e && elf_getphdrnum(e, &n) == 0) elf_first_load(elf64_getphdr(e), n, &v);
    elf_end(e);
    close(fd);
    return v;
}

/* Inflates path with .debug_info only as far as the units covering addrs; returns the memfd, *cut as the part said. */
static int inflate_for(const char *path, const unsigned long long *addrs, size_t n, unsigned long long load, int *cut)
{
    struct dwarf_prefix dp = {.addrs = addrs, .naddrs = n, .first_load = load};
    struct inflate_part part = dwarf_prefix_part(&dp);
    int src = open(path, O_RDONLY);
    int mem = elf_inflate_memfd(src, 1UL << 30, &part);
    close(src);
    dwarf_prefix_free(&dp);
    *cut = part.cut;
    return mem;
}

/* The name of the unit covering addr in the ELF at fd, as the symbolizer finds it (cu_index), or "" (into buf). */
static const char *unit_name(int fd, unsigned long long addr, char *buf, size_t len)
{
    Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
    struct cu_index ix = {0};
    Dwarf_Die *cu = dw ? cu_index_find(&ix, dw, addr) : NULL;
    const char *name = cu ? dwarf_diename(cu) : NULL;
    snprintf(buf, len, "%s", name ? name : "");
    cu_index_free(&ix);
    if (dw) dwarf_end(dw);
    return buf;
}

static void test_part_holds_the_units_asked(void)
{
    /* Two functions of units inside the binary, from the library linked after the test's own unit. */
    unsigned long long addrs[] = {symbol_value(plain, "elf_copy_first_load"), symbol_value(plain, "dwarf_prefix_part")};
    CHECK(addrs[0] && addrs[1]);
    int cut;
    int mem = inflate_for(packed, addrs, 2, load_of(plain), &cut);
    CHECK(mem >= 0);
    if (mem < 0) return;
    CHECK(cut);
    int orig = open(plain, O_RDONLY);
    Elf *a = elf_begin(orig, ELF_C_READ_MMAP, NULL), *b = elf_begin(mem, ELF_C_READ_MMAP, NULL);
    GElf_Shdr sa, sb;
    Elf_Data *da = section_data(a, ".debug_info", &sa), *db = section_data(b, ".debug_info", &sb);
    CHECK(da && db);
    if (da && db) { /* a prefix of the real section, ending at a unit's end */
        CHECK(db->d_size > 0 && db->d_size < da->d_size);
        CHECK(memcmp(da->d_buf, db->d_buf, db->d_size) == 0);
    }
    Elf_Data *la = section_data(a, ".debug_line", &sa), *lb = section_data(b, ".debug_line", &sb);
    CHECK(la && lb && la->d_size == lb->d_size); /* every other section whole */
    elf_end(a);
    elf_end(b);
    /* the same units found in the cut copy as in the whole file */
    char want[256], got[256];
    for (int i = 0; i < 2; i++) {
        unit_name(orig, addrs[i], want, sizeof want);
        CHECK(want[0] != '\0');
        CHECK_STR(unit_name(mem, addrs[i], got, sizeof got), want);
    }
    close(orig);
    close(mem);
}

/* The lowest address of the file's last unit, or 0. */
static unsigned long long last_unit_pc(const char *path)
{
    int fd = open(path, O_RDONLY);
    Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
    Dwarf_Off off = 0, next, last = 0;
    size_t hsize;
    while (dw && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        last = off + hsize;
        off = next;
    }
    Dwarf_Die cu;
    Dwarf_Addr lo = 0;
    if (dw && dwarf_offdie(dw, last, &cu) && dwarf_lowpc(&cu, &lo) != 0) lo = 0;
    if (dw) dwarf_end(dw);
    close(fd);
    return lo;
}

/* An address no unit covers, one in the last unit, a debug file laid out apart from its program: the whole
 * section. */
static void test_part_whole_when_in_doubt(void)
{
    unsigned long long inside = symbol_value(plain, "elf_copy_first_load"), nowhere[] = {inside, 1};
    unsigned long long last[] = {inside, last_unit_pc(plain)};
    CHECK(inside && last[1]);
    int cut = -1;
    int mem = inflate_for(packed, nowhere, 2, load_of(plain), &cut);
    CHECK(mem >= 0 && cut == 0);
    if (mem >= 0) close(mem);
    cut = -1;
    mem = inflate_for(packed, last, 2, load_of(plain), &cut);
    CHECK(mem >= 0 && cut == 0);
    if (mem >= 0) close(mem);
    cut = -1;
    mem = inflate_for(packed, &inside, 1, load_of(plain) + 0x1000, &cut);
    CHECK(mem >= 0 && cut == 0);
    if (mem >= 0) close(mem);
}

/* Skips one LEB128 at *p. */
static void skip_leb(const unsigned char **p)
{
    while (*(*p)++ & 0x80) {}
}

/* A unit whose abbreviations use DW_FORM_ref_addr may refer to any unit: the whole section. The plain file's
 * first DW_FORM_ref4 in the unit of the address becomes a DW_FORM_ref_addr (the same 4 bytes in 32-bit DWARF),
 * then the file is compressed again. */
static void test_part_whole_for_references_outside(void)
{
    unsigned long long addr = symbol_value(plain, "elf_copy_first_load");
    size_t n;
    unsigned char *b = slurp(plain, &n);
    Elf *e = elf_memory((char *)b, n);
    GElf_Shdr sh;
    Elf_Data *ab = section_data(e, ".debug_abbrev", &sh);
    int fd = open(plain, O_RDONLY);
    Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
    Dwarf_Die cu;
    Dwarf_Off abbrev_off = 0;
    int patched = 0;
    if (ab && dw && dwarf_addrdie(dw, addr, &cu)) {
        Dwarf_Off unit = dwarf_dieoffset(&cu) - dwarf_cuoffset(&cu), next;
        size_t hsize;
        dwarf_next_unit(dw, unit, &next, &hsize, NULL, &abbrev_off, NULL, NULL, NULL, NULL);
        unsigned char *p0 = b + sh.sh_offset;
        const unsigned char *p = p0 + abbrev_off;
        while (!patched && *p) { /* code, tag, children, then (name, form) pairs up to (0, 0) */
            skip_leb(&p);
            skip_leb(&p);
            p++;
            while (!patched && (p[0] || p[1])) {
                skip_leb(&p);
                if (*p == 0x13) {
                    p0[p - p0] = 0x10;
                    patched = 1;
                }
                if (*p++ == 0x21) skip_leb(&p);
            }
            p += 2;
        }
    }
    CHECK(patched);
    if (dw) dwarf_end(dw);
    close(fd);
    elf_end(e);
    char path[320], cmd[800];
    snprintf(path, sizeof path, "%s/refaddr", dir);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && write(fd, b, n) == (ssize_t)n);
    close(fd);
    free(b);
    snprintf(cmd, sizeof cmd, "objcopy --compress-debug-sections=zlib '%s'", path);
    CHECK(system(cmd) == 0);
    int cut = -1;
    int mem = inflate_for(path, &addr, 1, load_of(plain), &cut);
    CHECK(mem >= 0 && cut == 0);
    if (mem >= 0) close(mem);
}

int main(int argc, char **argv)
{
    (void)argc;
    check_suite = "elf_inflate";
    snprintf(dir, sizeof dir, "/tmp/diagtop-test-inflate.XXXXXX");
    if (!mkdtemp(dir)) return 1;
    /* This test's own binary (built with -g): once as it is, once with its debug sections compressed by objcopy */
    snprintf(plain, sizeof plain, "%s/plain", dir);
    snprintf(packed, sizeof packed, "%s/packed", dir);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && objcopy --compress-debug-sections=zlib '%s' '%s'", argv[0], plain,
             plain, packed);
    if (system(cmd) != 0) {
        printf("FAIL elf_inflate: cannot make the compressed copy with objcopy\n");
        return 1;
    }
    RUN(test_copy_matches_the_uncompressed_file);
    RUN(test_nothing_compressed);
    RUN(test_hostile_files);
    RUN(test_part_holds_the_units_asked);
    RUN(test_part_whole_when_in_doubt);
    RUN(test_part_whole_for_references_outside);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) return 1;
    CHECK_EXIT();
}
