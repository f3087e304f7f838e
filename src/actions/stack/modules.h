/* modules: the code mapped in one process as libdwfl sees it (executable, shared objects, vdso), with their unwind
 * tables and debug information. The unwinder and the symbolizer share it: one Dwfl per process, kept across
 * captures and rebuilt when /proc/PID/maps changes (exec, dlopen, dlclose). Debug files are found by build-id and
 * debuglink (debuginfo_cache keeps decompressed copies). */
#ifndef DIAGTOP_MODULES_H
#define DIAGTOP_MODULES_H
#include <elfutils/libdwfl.h>
#include <stddef.h>

struct modules;

/* Reports the modules mapped in pid now. Returns NULL with a reason. */
struct modules *modules_new(int pid, char *err, size_t errlen);
/* Reports the modules a core file mapped (libdwfl reads NT_FILE and the link map in its memory), for the process pid
 * it was. Files are looked for under sysroot first (NULL: none), and exe is the program (NULL: by build-id or the
 * path the core names); each is used only if its build-id is the one the core recorded. Returns NULL with a reason. */
struct modules *modules_new_core(Elf *core, int pid, const char *exe, const char *sysroot, char *err, size_t errlen);
/* Whether path is an ELF file with the build-id the core recorded for mod (any ELF file when it recorded none). */
int modules_file_matches(Dwfl_Module *mod, const char *path);
void modules_free(struct modules *m);
/* Reads the mappings again when they changed since the last report. Returns 0 or -errno with a reason. */
int modules_sync(struct modules *m, char *err, size_t errlen);
/* Loads, for every module, what unwinding may need: the ELF file, its .eh_frame table, and .debug_frame (from the
 * file or its separate debug file) where .eh_frame is missing. Done before a stop, so that the stop window
 * holds no file opening, decompression or table parsing. */
void modules_prepare_unwind(struct modules *m);
/* Says that this Dwfl, until it is rebuilt or freed, is asked about these addresses only (as looked up: a return
 * address less one): a debug file loaded after this then has only the part of its DWARF they read inflated, and
 * the copies for the cache are written once the Dwfl is gone, from the debug files themselves. For one-shot
 * captures; other addresses may find no DWARF. */
void modules_expect(struct modules *m, const unsigned long long *addrs, size_t n);
int modules_pid(const struct modules *m);
Dwfl *modules_dwfl(struct modules *m);
/* Increases each time the Dwfl is rebuilt: whatever was cached against the old one is stale. */
unsigned modules_generation(const struct modules *m);

/* The compilation unit DIE covering addr in a module's DWARF, with the bias, like
 * dwfl_module_addrdie, but also for binaries without .debug_aranges (Go's): then the CUs' own address ranges are
 * indexed once per module. NULL when no CU covers it. */
Dwarf_Die *modules_addrdie(struct modules *m, Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Addr *bias);

struct gopclntab;
/* A Go program's own PC tables, where they serve the module (gopclntab.h), with the module's bias; NULL otherwise
 * and when DIAGTOP_NO_GOPCLNTAB is set (then its DWARF serves, as for any program). */
const struct gopclntab *modules_go(Dwfl_Module *mod, Dwarf_Addr *bias);
#endif
