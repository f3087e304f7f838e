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
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) return 1;
    CHECK_EXIT();
}
