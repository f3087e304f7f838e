#include "modules.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fileio.h"
#include "cu_index.h"
#include "debuginfo_cache.h"
#include "dwarf_prefix.h"
#include "gopclntab.h"

/* What diagtop keeps of one module (its Dwfl userdata). */
struct module_data {
    struct modules *owner;
    int pid;
    unsigned long long map_start, map_end; /* its first mapping: /proc/PID/map_files/START-END is its very file */
    struct cu_index ix;                    /* built on first use */
    int go_checked;
    struct gopclntab *go;                  /* a Go program's own tables, when they serve it */
    Dwarf_Addr go_bias;
};

struct modules {
    int pid;
    Dwfl *dwfl;
    unsigned long long maps_hash; /* of /proc/PID/maps when the Dwfl was reported */
    unsigned generation;
    int one_shot;                  /* modules_expect was told every address this Dwfl will be asked */
    unsigned long long *expected;  /* those addresses, sorted */
    size_t nexpected;
    struct debuginfo_keeps keeps;  /* the debug copies to keep once the Dwfl is gone */
    int from_core;                 /* reported from a core file: nothing to sync */
    char *sysroot;                 /* a core's: where its files are looked for first; NULL: / */
    char *debuginfo_path;          /* a core's with a sysroot: its debug directories, then ours */
    Dwfl_Callbacks core_callbacks; /* a core's (the Dwfl keeps a pointer): the sysroot in debuginfo_path */
};

/* A module's file as its process maps it, through /proc/PID/map_files (root, or CAP_CHECKPOINT_RESTORE): the path in
 * /proc/PID/maps names another file when the process runs in a container (its /usr/lib/.../libc.so.6 is not ours:
 * wrong names, wrong unwind tables) or when the file was replaced or deleted since (a library upgraded under a
 * running service: libdw would read only its loaded segments from memory, without a symbol table). Otherwise, and
 * when map_files cannot be opened, the file by its name. The name stays the module's: debuglinks are next to it. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base, char **file_name,
                    Elf **elfp)
{
    const struct module_data *md = *userdata;
    char path[96];
    if (md && md->map_end && name[0] == '/') {
        snprintf(path, sizeof path, "/proc/%d/map_files/%llx-%llx", md->pid, md->map_start, md->map_end);
        int fd = debuginfo_cache_find_elf(mod, userdata, path, base, file_name, elfp);
        if (fd >= 0 || *elfp) {
            char *own = strdup(name);
            if (own) {
                free(*file_name);
                *file_name = own;
            }
            return fd;
        }
    }
    return debuginfo_cache_find_elf(mod, userdata, name, base, file_name, elfp);
}

/* The first loaded address of a program (ELF64), as libdwfl syncs its debug file with it; 0 when it has none. */
static unsigned long long first_load(Elf *elf)
{
    size_t n;
    unsigned long long vaddr = 0;
    if (elf && elf_getphdrnum(elf, &n) == 0) elf_first_load(elf64_getphdr(elf), n, &vaddr);
    return vaddr;
}

/* The expected addresses inside mod, in its DWARF's terms (the program's bias removed: its debug file must share
 * the program's layout, which dwarf_prefix checks), into dp; NULL when none or out of memory. */
static unsigned long long *expected_in(const struct modules *m, Dwfl_Module *mod, struct dwarf_prefix *dp)
{
    Dwarf_Addr start, end, bias;
    Elf *elf = dwfl_module_getelf(mod, &bias); /* loaded already: libdwfl looks for debug files after it */
    dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
    size_t lo = 0, hi = m->nexpected;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->expected[mid] < start) lo = mid + 1;
        else hi = mid;
    }
    size_t n = 0;
    while (lo + n < m->nexpected && m->expected[lo + n] < end) n++;
    unsigned long long *addrs = elf && n ? malloc(n * sizeof *addrs) : NULL;
    for (size_t i = 0; addrs && i < n; i++) addrs[i] = m->expected[lo + i] - bias;
    *dp = (struct dwarf_prefix){.addrs = addrs, .naddrs = addrs ? n : 0, .first_load = first_load(elf)};
    return addrs;
}

/* debuginfo_cache_find; in a one-shot Dwfl, with only the part of .debug_info its lookups read inflated and the
 * copies kept once it is gone. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
                          const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                          char **debuginfo_file_name)
{
    const struct module_data *md = *userdata;
    struct modules *m = md ? md->owner : NULL;
    if (!m || !m->one_shot)
        return debuginfo_cache_find(mod, userdata, modname, base, file_name, debuglink_file, debuglink_crc,
                                    debuginfo_file_name);
    struct dwarf_prefix dp;
    unsigned long long *addrs = expected_in(m, mod, &dp);
    struct inflate_part part = dwarf_prefix_part(&dp);
    int fd = debuginfo_cache_find_for(addrs ? &part : NULL, &m->keeps, mod, userdata, modname, base, file_name,
                                      debuglink_file, debuglink_crc, debuginfo_file_name);
    dwarf_prefix_free(&dp);
    free(addrs);
    return fd;
}

static const Dwfl_Callbacks proc_callbacks = {
    .find_elf = find_elf, /* dwfl_linux_proc_find_elf, Go's compressed DWARF decompressed once */
    .find_debuginfo = find_debuginfo, /* dwfl_standard_find_debuginfo with a decompressed-copy cache */
};

static unsigned long long fnv1a(const char *text)
{
    unsigned long long h = 1469598103934665603ULL;
    for (const char *c = text; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    return h;
}

/* FNV-1a of /proc/PID/maps: cheap enough to run before every capture. 0 when unreadable. */
static unsigned long long maps_hash(int pid)
{
    char *maps = fileio_read_proc(AT_FDCWD, pid, "maps", 256 << 20, NULL);
    unsigned long long h = maps ? fnv1a(maps) : 0;
    free(maps);
    return h;
}

static void module_data_free(struct module_data *md)
{
    if (!md) return;
    cu_index_free(&md->ix);
    gopclntab_free(md->go);
    free(md);
}

static int free_module_data(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
    (void)mod, (void)name, (void)start, (void)arg;
    module_data_free(*userdata);
    *userdata = NULL;
    return DWARF_CB_OK;
}

/* The module's data, made on first use. NULL when out of memory. */
static struct module_data *module_data_of(void **userdata)
{
    if (!*userdata) *userdata = calloc(1, sizeof(struct module_data));
    return *userdata;
}

/* The file mappings of /proc/PID/maps, [start, end) in its (ascending) order. */
struct file_maps {
    struct modules *owner;
    int pid;
    unsigned long long (*ranges)[2];
    size_t n;
};

/* Parsed by hand: sscanf would measure the rest of the text at every line (70,000 mappings happen). */
static void file_maps_parse(struct file_maps *fm, const char *maps)
{
    size_t cap = 0;
    for (const char *line = maps; *line;) {
        const char *eol = strchr(line, '\n');
        if (!eol) eol = line + strlen(line);
        char *p;
        unsigned long long start = strtoull(line, &p, 16), end = *p == '-' ? strtoull(p + 1, &p, 16) : 0;
        for (int field = 0; field < 4 && p < eol; field++) { /* perms, offset, device, inode */
            while (p < eol && *p == ' ') p++;
            while (p < eol && *p != ' ') p++;
        }
        while (p < eol && *p == ' ') p++;
        if (p < eol && *p == '/' && end > start) {
            if (fm->n == cap) {
                size_t c = cap ? cap * 2 : 64;
                void *r = realloc(fm->ranges, c * sizeof *fm->ranges);
                if (!r) return;
                fm->ranges = r;
                cap = c;
            }
            fm->ranges[fm->n][0] = start;
            fm->ranges[fm->n++][1] = end;
        }
        line = *eol ? eol + 1 : eol;
    }
}

static int note_first_mapping(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
    (void)mod, (void)name;
    const struct file_maps *fm = arg;
    size_t lo = 0, hi = fm->n;
    while (lo < hi) { /* the mapping starting at start: libdwfl reports a module from its first one */
        size_t mid = (lo + hi) / 2;
        if (fm->ranges[mid][0] < start) lo = mid + 1;
        else hi = mid;
    }
    if (lo == fm->n || fm->ranges[lo][0] != start) return DWARF_CB_OK;
    struct module_data *md = module_data_of(userdata);
    if (md)
        *md = (struct module_data){
            .owner = fm->owner, .pid = fm->pid, .map_start = start, .map_end = fm->ranges[lo][1]};
    return DWARF_CB_OK;
}

static void end_dwfl(struct modules *m)
{
    if (!m->dwfl) return;
    dwfl_getmodules(m->dwfl, free_module_data, NULL, 0);
    dwfl_end(m->dwfl);
    m->dwfl = NULL;
    debuginfo_cache_keep_now(&m->keeps);
    free(m->expected);
    m->expected = NULL;
    m->nexpected = 0;
    m->one_shot = 0;
}

static int report(struct modules *m, char *err, size_t errlen)
{
    end_dwfl(m);
    m->generation++;
    char *maps = fileio_read_proc(AT_FDCWD, m->pid, "maps", 256 << 20, NULL);
    m->maps_hash = maps ? fnv1a(maps) : 0;
    m->dwfl = dwfl_begin(&proc_callbacks);
    if (!m->dwfl) {
        free(maps);
        snprintf(err, errlen, "libdw: %s", dwfl_errmsg(-1));
        return -ENOMEM;
    }
    dwfl_report_begin(m->dwfl);
    int rc = dwfl_linux_proc_report(m->dwfl, m->pid);
    dwfl_report_end(m->dwfl, NULL, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "cannot read the mappings of %d: %s", m->pid, rc > 0 ? strerror(rc) : dwfl_errmsg(-1));
        free(maps);
        end_dwfl(m);
        return rc > 0 ? -rc : -EIO;
    }
    struct file_maps fm = {.owner = m, .pid = m->pid};
    if (maps) file_maps_parse(&fm, maps);
    dwfl_getmodules(m->dwfl, note_first_mapping, &fm, 0);
    free(fm.ranges);
    free(maps);
    return 0;
}

struct modules *modules_new(int pid, char *err, size_t errlen)
{
    struct modules *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    m->pid = pid;
    if (report(m, err, errlen) < 0) {
        modules_free(m);
        return NULL;
    }
    return m;
}

/* ---- a core's modules ---- */

/* Opens path when its GNU build-id is the one the core recorded for mod (from the mapped file's first page); when
 * the core recorded none, any ELF file there. Returns the fd, or -1. */
static int open_matching(Dwfl_Module *mod, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    const unsigned char *want;
    GElf_Addr vaddr;
    int wantlen = dwfl_module_build_id(mod, &want, &vaddr);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    const void *have = NULL;
    ssize_t havelen = elf ? dwelf_elf_gnu_build_id(elf, &have) : -1;
    int ok = elf && elf_kind(elf) == ELF_K_ELF &&
             (wantlen <= 0 || (havelen == wantlen && memcmp(have, want, (size_t)wantlen) == 0));
    elf_end(elf);
    if (!ok) {
        close(fd);
        return -1;
    }
    return fd;
}

int modules_file_matches(Dwfl_Module *mod, const char *path)
{
    int fd = open_matching(mod, path);
    if (fd < 0) return 0;
    close(fd);
    return 1;
}

/* A core's file: under the sysroot first when there is one; then by build-id (and --exe for the program), as
 * eu-stack finds it; then by the path the core names, if its build-id matches. A file found but not matching is
 * not used: a library upgraded since the dump would name every frame wrongly. */
static int core_find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base, char **file_name,
                         Elf **elfp)
{
    const struct module_data *md = *userdata;
    const struct modules *m = md ? md->owner : NULL;
    char path[4200];
    int fd = -1;
    *elfp = NULL;
    if (m && m->sysroot && name[0] == '/' && snprintf(path, sizeof path, "%s%s", m->sysroot, name) < (int)sizeof path)
        fd = open_matching(mod, path);
    if (fd < 0) {
        fd = dwfl_build_id_find_elf(mod, userdata, name, base, file_name, elfp);
        if (fd >= 0 || *elfp) return fd < 0 || *elfp ? fd : debuginfo_cache_program(fd, elfp);
        if (name[0] == '/' && !(m && m->sysroot)) fd = open_matching(mod, name);
        snprintf(path, sizeof path, "%s", name);
    }
    if (fd < 0) return -1;
    free(*file_name);
    *file_name = strdup(path);
    return debuginfo_cache_program(fd, elfp);
}

static int own_core_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
    (void)mod, (void)name, (void)start;
    struct modules *m = arg;
    struct module_data *md = module_data_of(userdata);
    if (md && !md->owner) *md = (struct module_data){.owner = m, .pid = m->pid};
    return DWARF_CB_OK;
}

struct modules *modules_new_core(Elf *core, int pid, const char *exe, const char *sysroot, char *err, size_t errlen)
{
    struct modules *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    m->pid = pid;
    m->from_core = 1;
    m->generation = 1;
    m->core_callbacks = (Dwfl_Callbacks){.find_elf = core_find_elf, .find_debuginfo = find_debuginfo};
    if (sysroot) {
        m->sysroot = strdup(sysroot);
        /* libdwfl's default path (".debug" next to the file, then /usr/lib/debug), the sysroot's first */
        if (m->sysroot && asprintf(&m->debuginfo_path, ":.debug:%s/usr/lib/debug:/usr/lib/debug", sysroot) < 0)
            m->debuginfo_path = NULL;
        if (!m->sysroot || !m->debuginfo_path) {
            snprintf(err, errlen, "out of memory");
            modules_free(m);
            return NULL;
        }
        m->core_callbacks.debuginfo_path = &m->debuginfo_path;
    }
    m->dwfl = dwfl_begin(&m->core_callbacks);
    if (!m->dwfl) {
        snprintf(err, errlen, "libdw: %s", dwfl_errmsg(-1));
        modules_free(m);
        return NULL;
    }
    dwfl_report_begin(m->dwfl);
    int n = dwfl_core_file_report(m->dwfl, core, exe);
    dwfl_report_end(m->dwfl, NULL, NULL);
    if (n < 0) {
        snprintf(err, errlen, "cannot read the core's mapped files: %s", dwfl_errmsg(-1));
        modules_free(m);
        return NULL;
    }
    dwfl_getmodules(m->dwfl, own_core_module, m, 0);
    return m;
}

void modules_free(struct modules *m)
{
    if (!m) return;
    end_dwfl(m);
    free(m->sysroot);
    free(m->debuginfo_path);
    free(m);
}

int modules_sync(struct modules *m, char *err, size_t errlen)
{
    if (m->from_core) return 0;
    if (m->dwfl && maps_hash(m->pid) == m->maps_hash) return 0;
    return report(m, err, errlen);
}

static int by_address(const void *a, const void *b)
{
    unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return x < y ? -1 : x > y;
}

void modules_expect(struct modules *m, const unsigned long long *addrs, size_t n)
{
    free(m->expected);
    m->expected = n ? malloc(n * sizeof *addrs) : NULL;
    m->nexpected = m->expected ? n : 0;
    if (m->expected) memcpy(m->expected, addrs, n * sizeof *addrs);
    qsort(m->expected, m->nexpected, sizeof *addrs, by_address);
    m->one_shot = 1;
}

int modules_pid(const struct modules *m) { return m->pid; }
Dwfl *modules_dwfl(struct modules *m) { return m->dwfl; }
unsigned modules_generation(const struct modules *m) { return m->generation; }

/* The module's data, NULL when out of memory. */
static struct module_data *data_of(Dwfl_Module *mod)
{
    void **userdata;
    dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
    return userdata ? module_data_of(userdata) : NULL;
}

const struct gopclntab *modules_go(Dwfl_Module *mod, Dwarf_Addr *bias)
{
    struct module_data *md = mod ? data_of(mod) : NULL;
    if (!md) return NULL;
    if (!md->go_checked) {
        md->go_checked = 1;
        Elf *elf = getenv("DIAGTOP_NO_GOPCLNTAB") ? NULL : dwfl_module_getelf(mod, &md->go_bias);
        md->go = elf ? gopclntab_open(elf) : NULL;
    }
    *bias = md->go_bias;
    return md->go;
}

/* One module's unwind tables, loaded now. A .debug_frame without a search table is parsed lazily, entry by
 * entry, until the one covering a PC is found: looking up an address no entry covers parses them all. */
static int prepare_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
    (void)userdata, (void)name, (void)start, (void)arg;
    Dwarf_Addr bias;
    if (!dwfl_module_getelf(mod, &bias)) return DWARF_CB_OK;
    if (modules_go(mod, &bias)) return DWARF_CB_OK; /* unwound with its own tables: no DWARF to read */
    if (dwfl_module_eh_cfi(mod, &bias)) return DWARF_CB_OK;
    Dwarf_CFI *cfi = dwfl_module_dwarf_cfi(mod, &bias);
    Dwarf_Frame *frame = NULL;
    if (cfi && dwarf_cfi_addrframe(cfi, ~(Dwarf_Addr)0 >> 1, &frame) == 0) free(frame);
    return DWARF_CB_OK;
}

void modules_prepare_unwind(struct modules *m)
{
    if (m->dwfl) dwfl_getmodules(m->dwfl, prepare_module, NULL, 0);
}

Dwarf_Die *modules_addrdie(struct modules *m, Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Addr *bias)
{
    (void)m;
    void **userdata;
    dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
    Dwarf *dw = dwfl_module_getdwarf(mod, bias);
    struct module_data *md = dw && userdata ? module_data_of(userdata) : NULL;
    return md ? cu_index_find(&md->ix, dw, addr - *bias) : NULL;
}
