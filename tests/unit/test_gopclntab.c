/* A Go program's own tables against its DWARF, on the Go test targets (build/targets/gostacks and gopsy, Go's own
 * linker, runtime/cgo linked in): at PCs across every function, the symbolizer gives the same frames (names,
 * offsets; file:line and the inlined calls at all but a few PCs in a thousand) from .gopclntab as from DWARF
 * (DIAGTOP_NO_GOPCLNTAB=1), and the frame size of
 * the pcsp table is .debug_frame's CFA, with an entry exactly where the tables have one. */
#include "check.h"
#include "actions/stack/gopclntab.h"
#include "actions/stack/modules.h"
#include "actions/stack/symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define STRIDE 37 /* every 37th byte of every function, and each function's first and last byte */

static const char *str_or(const char *s) { return s ? s : "(null)"; }

static int same_frames(const struct stack_frame *a, int na, const struct stack_frame *b, int nb)
{
    if (na != nb) return 0;
    for (int i = 0; i < na; i++)
        if (a[i].pc != b[i].pc || a[i].inlined != b[i].inlined || a[i].offset != b[i].offset ||
            a[i].line != b[i].line || strcmp(str_or(a[i].function), str_or(b[i].function)) != 0 ||
            strcmp(str_or(a[i].file), str_or(b[i].file)) != 0 || strcmp(str_or(a[i].module), str_or(b[i].module)))
            return 0;
    return 1;
}

static void print_frames(const char *what, const struct stack_frame *f, int n)
{
    for (int i = 0; i < n; i++)
        printf("    %s %s%s+%#llx %s:%d\n", what, f[i].inlined ? "(inlined) " : "", str_or(f[i].function),
               f[i].offset, str_or(f[i].file), f[i].line);
}

/* Starts a target and waits for its "ready" line. Returns its pid, or -1. */
static int start(const char *path, const char *arg)
{
    int fds[2];
    if (pipe(fds) < 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        execl(path, path, arg, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char buf[64] = {0};
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    return n > 0 && strncmp(buf, "ready", 5) == 0 ? pid : -1;
}

/* The CFA offset from SP that libdw reads in .debug_frame at addr, -1 without an entry, -2 for another rule. */
static long long cfi_offset(Dwarf_CFI *cfi, Dwarf_Addr addr)
{
    Dwarf_Frame *frame;
    if (dwarf_cfi_addrframe(cfi, addr, &frame) != 0) return -1;
    Dwarf_Op *ops;
    size_t nops;
    long long off = -2;
    if (dwarf_frame_cfa(frame, &ops, &nops) == 0 && nops == 1 && ops[0].atom == DW_OP_bregx && ops[0].number == 7)
        off = (long long)ops[0].number2;
    free(frame);
    return off;
}

static int pcs_checked;

static void check_target(const char *name, const char *arg)
{
    char path[512];
    snprintf(path, sizeof path, "%s/../../build/targets/%s", FIXTURES_DIR, name);
    if (access(path, X_OK) != 0) {
        printf("  skipped: %s not built (make targets)\n", path);
        return;
    }
    int pid = start(path, arg);
    CHECK(pid > 0);
    if (pid <= 0) return;
    char err[256];
    setenv("DIAGTOP_NO_GOPCLNTAB", "1", 1);
    struct modules *dw = modules_new(pid, err, sizeof err);
    CHECK(dw != NULL);
    Dwfl_Module *dw_mod = NULL;
    Dwarf_Addr bias = 0;
    Dwarf_CFI *cfi = NULL;
    struct symbolizer *dw_sym = dw ? symbolizer_new(dw) : NULL;
    /* The program's module: loaded now, while DWARF is asked for. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    struct gopclntab *t = gopclntab_open(elf);
    CHECK(t != NULL);
    struct gopclntab_func first;
    if (t && dw && gopclntab_func_at(t, 0, &first) == 0) {
        dw_mod = dwfl_addrmodule(modules_dwfl(dw), first.entry);
        CHECK(dw_mod && !modules_go(dw_mod, &bias));
        cfi = dw_mod ? dwfl_module_dwarf_cfi(dw_mod, &bias) : NULL;
        CHECK(cfi != NULL);
    }
    unsetenv("DIAGTOP_NO_GOPCLNTAB");
    struct modules *go = modules_new(pid, err, sizeof err);
    struct symbolizer *go_sym = go ? symbolizer_new(go) : NULL;
    CHECK(go_sym && dw_sym);
    int bad_names = 0, bad_cfa = 0, go_funcs = 0, lookups = 0, inline_diffs = 0, line_diffs = 0;
    for (size_t i = 0; t && go_sym && dw_sym && cfi && i < gopclntab_nfuncs(t); i++) {
        struct gopclntab_func fn;
        if (gopclntab_func_at(t, i, &fn) < 0) continue;
        struct gopclntab_func found;
        int ours = gopclntab_find(t, fn.entry, &found) == 0;
        go_funcs += ours;
        for (unsigned long long pc = fn.entry; pc < fn.end; pc = pc + STRIDE < fn.end ? pc + STRIDE : pc + 1 == fn.end ? fn.end : fn.end - 1) {
            struct stack_frame a[20], b[20];
            for (int ra = 0; ra < 2; ra++) {
                /* as a return address, pc + 1: the lookups are at pc */
                int na = symbolizer_lookup(go_sym, pc + (unsigned)ra, ra, 1, a, 20);
                int nb = symbolizer_lookup(dw_sym, pc + (unsigned)ra, ra, 1, b, 20);
                lookups++;
                struct stack_frame oa = na > 0 ? a[na - 1] : (struct stack_frame){0}, ob = nb > 0 ? b[nb - 1] : oa;
                oa.file = ob.file = NULL, oa.line = ob.line = 0; /* a call line: compared below */
                if (na < 1 || nb < 1 || !same_frames(&oa, 1, &ob, 1)) {
                    if (bad_names++ < 5) {
                        printf("  %s at %#llx (return address %d):\n", name, pc + (unsigned)ra, ra);
                        print_frames("tables:", a, na);
                        print_frames("DWARF: ", b, nb);
                    }
                } else if (strcmp(str_or(a[0].file), str_or(b[0].file)) != 0 || a[0].line != b[0].line) {
                    line_diffs++;
                } else if (!same_frames(a, na, b, nb)) {
                    inline_diffs++;
                }
                for (int k = 0; k < na; k++) stack_frame_clear(&a[k]);
                for (int k = 0; k < nb; k++) stack_frame_clear(&b[k]);
            }
            long long want = cfi_offset(cfi, pc - bias), got = -1;
            if (ours) {
                long long d = gopclntab_spdelta(t, &fn, pc);
                got = d == -2 ? -1 : d < 0 ? -3 : d + 8;
            }
            if (want != got && bad_cfa++ < 5)
                printf("  %s at %#llx (%s): CFA SP+%lld in .debug_frame, SP+%lld from pcsp\n", name, pc,
                       str_or(gopclntab_name(t, &fn)), want, got);
            pcs_checked++;
        }
    }
    CHECK(go_funcs > 1000);
    /* The function and its offset are the same everywhere. File:line and the inlined calls differ at a few PCs
     * in a thousand, where DWARF and the tables disagree: a call line of DWARF's that the source does not have
     * (net.cgoLookupPort calls ipVersion at cgo_unix.go:76, as the tables say; DWARF says :79), a row of the line
     * table written for a zero-size instruction, wrappers whose inlined method DWARF leaves out. */
    printf("  %s: %d lookups; another line than DWARF's at %d, other inlined frames or call lines at %d\n", name,
           lookups, line_diffs, inline_diffs);
    CHECK((inline_diffs + line_diffs) * 1000 <= lookups);
    CHECK_INT(bad_names, 0);
    CHECK_INT(bad_cfa, 0);
    symbolizer_free(go_sym);
    symbolizer_free(dw_sym);
    modules_free(go);
    modules_free(dw);
    gopclntab_free(t);
    if (elf) elf_end(elf);
    if (fd >= 0) close(fd);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static void gostacks_tables_match_its_dwarf(void) { check_target("gostacks", NULL); }
static void gopsy_tables_match_its_dwarf(void) { check_target("gopsy", "-no-agent"); }

int main(void)
{
    char cache[] = "/tmp/diagtop-unit-gopclntab.XXXXXX";
    if (mkdtemp(cache)) setenv("XDG_CACHE_HOME", cache, 1); /* the DWARF side's decompressed copy: not the user's */
    RUN(gostacks_tables_match_its_dwarf);
    RUN(gopsy_tables_match_its_dwarf);
    printf("  %d pcs compared\n", pcs_checked);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", cache);
    if (system(cmd) != 0) printf("  could not remove %s\n", cache);
    CHECK_EXIT();
}
