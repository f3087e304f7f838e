/* Which mappings a core holds (the kernel's rules under coredump_filter) and the ELF layout of the headers. */
#include <elf.h>

#include "actions/dump/dump_maps.h"
#include "actions/dump/elfcore.h"
#include "check.h"

static void parse_and_decide_default_filter(void)
{
    char *t = fixture("smaps_sample.txt", NULL);
    struct dump_maps dm;
    CHECK_INT(dump_maps_parse(t, &dm), 0);
    CHECK_INT(dm.n, 10);
    dump_maps_decide(&dm, 0x33, 0);
    enum dump_amount want[] = {DUMP_FIRST_PAGE, DUMP_ALL, DUMP_NOTHING, DUMP_NOTHING, DUMP_ALL,
                               DUMP_NOTHING, DUMP_FIRST_PAGE, DUMP_ALL, DUMP_NOTHING, DUMP_ALL};
    for (int i = 0; i < dm.n; i++) {
        if (dm.maps[i].amount != want[i]) printf("  mapping %d (%s): %d, expected %d\n", i, dm.maps[i].path, dm.maps[i].amount, want[i]);
        CHECK(dm.maps[i].amount == want[i]);
    }
    CHECK(dm.maps[2].dontdump);    /* dd */
    CHECK(dm.maps[4].shared && dm.maps[4].deleted);
    CHECK_INT(dm.maps[1].anonymous, 4096);
    CHECK_INT(dump_maps_bytes(&dm), 4096 + 4096 + 1048576 + 4096 + 135168 + 8192);
    dump_maps_free(&dm);
    free(t);
}

static void filter_bits_and_full(void)
{
    char *t = fixture("smaps_sample.txt", NULL);
    struct dump_maps dm;
    dump_maps_parse(t, &dm);
    dump_maps_decide(&dm, 0x0f, 0); /* + file-backed private and shared, no ELF headers */
    CHECK_INT(dm.maps[0].amount, DUMP_ALL);
    CHECK_INT(dm.maps[5].amount, DUMP_ALL);
    CHECK_INT(dm.maps[2].amount, DUMP_NOTHING); /* dontdump wins */
    dump_maps_decide(&dm, 0, 0);
    CHECK_INT(dm.maps[1].amount, DUMP_NOTHING);
    CHECK_INT(dm.maps[9].amount, DUMP_ALL); /* vdso always */
    dump_maps_decide(&dm, 0, 1);
    CHECK_INT(dm.maps[3].amount, DUMP_ALL); /* --full: every readable mapping */
    CHECK_INT(dm.maps[8].amount, DUMP_NOTHING); /* [vvar] cannot be read */
    dump_maps_free(&dm);
    free(t);
}

static void headers_layout(void)
{
    char *t = fixture("smaps_sample.txt", NULL);
    struct dump_maps dm;
    dump_maps_parse(t, &dm);
    dump_maps_decide(&dm, 0x33, 0);
    struct bytes b = {0};
    CHECK_INT(elfcore_headers(&b, &dm, 1000), 0);
    CHECK_INT(b.n, sizeof(Elf64_Ehdr) + 11 * sizeof(Elf64_Phdr));
    Elf64_Ehdr *eh = (Elf64_Ehdr *)b.data;
    CHECK(memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0);
    CHECK_INT(eh->e_type, ET_CORE);
    CHECK_INT(eh->e_machine, EM_X86_64);
    CHECK_INT(eh->e_phnum, 11);
    Elf64_Phdr *ph = (Elf64_Phdr *)(b.data + sizeof *eh);
    CHECK_INT(ph[0].p_type, PT_NOTE);
    CHECK_INT(ph[0].p_offset, sizeof *eh + 11 * sizeof *ph);
    CHECK_INT(ph[1].p_offset % 4096, 0);
    CHECK_INT(ph[1].p_filesz, 4096);          /* first page of the ELF */
    CHECK_INT(ph[2].p_offset, ph[1].p_offset + 4096);
    CHECK_INT(ph[3].p_filesz, 0);             /* dontdump */
    CHECK_INT(ph[3].p_memsz, 4 << 20);
    CHECK_INT(ph[2].p_flags, PF_R | PF_W);
    CHECK_INT(ph[10].p_flags, PF_R | PF_X);
    bytes_free(&b);
    dump_maps_free(&dm);
    free(t);
}

static void notes_order(void)
{
    char *t = fixture("smaps_sample.txt", NULL);
    struct dump_maps dm;
    dump_maps_parse(t, &dm);
    struct core_process p = {.pid = 10, .ppid = 1, .state = 'S', .fname = "prog"};
    struct core_thread th[2];
    memset(th, 0, sizeof th);
    th[0].tid = 10;
    th[1].tid = 11;
    th[0].regs.have_fp = th[1].regs.have_fp = 1;
    struct bytes b = {0};
    CHECK_INT(elfcore_notes(&b, &p, th, 2, &dm), 0);
    /* PRSTATUS(10), PRPSINFO, SIGINFO, FILE, FPREGSET(10), PRSTATUS(11), FPREGSET(11) (no auxv given) */
    unsigned want[] = {NT_PRSTATUS, NT_PRPSINFO, NT_SIGINFO, NT_FILE, NT_FPREGSET, NT_PRSTATUS, NT_FPREGSET};
    size_t off = 0;
    for (int i = 0; i < 7; i++) {
        Elf64_Nhdr *h = (Elf64_Nhdr *)(b.data + off);
        CHECK_INT(h->n_type, want[i]);
        off += sizeof *h + ((h->n_namesz + 3) & ~3u) + ((h->n_descsz + 3) & ~3u);
    }
    CHECK_INT(off, b.n);
    bytes_free(&b);
    dump_maps_free(&dm);
    free(t);
}

int main(void)
{
    check_suite = "dump";
    RUN(parse_and_decide_default_filter);
    RUN(filter_bits_and_full);
    RUN(headers_layout);
    RUN(notes_order);
    CHECK_EXIT();
}
