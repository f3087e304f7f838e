#include "dump_maps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_header(const char *line, unsigned long long *start, unsigned long long *end, char *perms,
                     unsigned long long *offset, unsigned long long *inode, int *path_off)
{
    int off = 0;
    if (sscanf(line, "%llx-%llx %4s %llx %*x:%*x %llu %n", start, end, perms, offset, inode, &off) < 5) return 0;
    *path_off = off;
    return 1;
}

static int add_map(struct dump_maps *dm, const char *buf)
{
    unsigned long long start, end, offset, inode;
    char perms[8];
    int path_off;
    if (!is_header(buf, &start, &end, perms, &offset, &inode, &path_off)) return 0;
    if (dm->n == dm->cap) {
        int cap = dm->cap ? dm->cap * 2 : 64;
        struct dump_map *nm = realloc(dm->maps, (size_t)cap * sizeof *nm);
        if (!nm) return -ENOMEM;
        dm->maps = nm;
        dm->cap = cap;
    }
    struct dump_map *m = &dm->maps[dm->n];
    memset(m, 0, sizeof *m);
    m->start = start;
    m->end = end;
    m->offset = offset;
    m->inode = inode;
    snprintf(m->perms, sizeof m->perms, "%.4s", perms);
    const char *path = buf + path_off;
    while (*path == ' ') path++;
    if (*path) {
        if (!(m->path = strdup(path))) return -ENOMEM;
        size_t pl = strlen(m->path);
        if (pl > 10 && strcmp(m->path + pl - 10, " (deleted)") == 0) m->deleted = 1;
    }
    m->shared = perms[3] == 's';
    dm->n++;
    return 0;
}

int dump_maps_parse_line(struct dump_maps *dm, const char *line, size_t len)
{
    /* A mapping's first line starts with its address in lowercase hex; the ~25 field lines under it start with
     * a capital, and only two of them matter: copying and scanning every line was most of the parse. */
    int header = len > 0 && ((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f'));
    int anon = !header && len >= 10 && memcmp(line, "Anonymous:", 10) == 0;
    int flags = !header && len >= 8 && memcmp(line, "VmFlags:", 8) == 0;
    if (!header && !anon && !flags) return 0;
    char buf[4352];
    if (len > sizeof buf - 1) len = sizeof buf - 1;
    memcpy(buf, line, len);
    buf[len] = '\0';
    struct dump_map *cur = dm->n ? &dm->maps[dm->n - 1] : NULL;
    if (header) return add_map(dm, buf);
    if (cur && anon) {
        cur->anonymous = strtoull(buf + 10, NULL, 10) * 1024ULL;
    } else if (cur && flags) {
        cur->dontdump = strstr(buf, " dd") != NULL;
        cur->io = strstr(buf, " io") != NULL;
        cur->hugetlb = strstr(buf, " ht") != NULL;
    }
    return 0;
}

int dump_maps_parse(const char *smaps, struct dump_maps *out)
{
    memset(out, 0, sizeof *out);
    for (const char *line = smaps; line && *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        if (dump_maps_parse_line(out, line, len) < 0) return -ENOMEM;
        line = eol ? eol + 1 : NULL;
    }
    return 0;
}

/* The kernel's vma_dump_size, in its order. */
static enum dump_amount decide(const struct dump_map *m, unsigned filter)
{
#define FILTER(bit) (filter & (1u << (bit)))
    const char *p = m->path;
    if (p && (strcmp(p, "[vdso]") == 0 || strcmp(p, "[vvar]") == 0 || strcmp(p, "[vsyscall]") == 0))
        return DUMP_ALL;
    if (m->dontdump) return DUMP_NOTHING;
    if (m->hugetlb) return (m->shared ? FILTER(6) : FILTER(5)) ? DUMP_ALL : DUMP_NOTHING;
    if (m->io) return DUMP_NOTHING;
    int file_backed = p && p[0] == '/' && m->inode != 0;
    int anon_shared = m->shared && (!file_backed || m->deleted || strncmp(p, "/dev/zero", 9) == 0 ||
                                    strncmp(p, "/SYSV", 5) == 0);
    if (m->shared) return (anon_shared ? FILTER(1) : FILTER(3)) ? DUMP_ALL : DUMP_NOTHING;
    if (m->anonymous > 0 && FILTER(0)) return DUMP_ALL; /* private, written to */
    if (!file_backed) goto whole_elf_header;            /* private anonymous never written: zeros */
    if (FILTER(2)) return DUMP_ALL;
whole_elf_header:
    /* The first page of a mapped file (the kernel also checks it starts with the ELF magic), so readers find the
     * build-ids. */
    if (FILTER(4) && file_backed && m->offset == 0 && m->perms[0] == 'r') return DUMP_FIRST_PAGE;
    return DUMP_NOTHING;
#undef FILTER
}

void dump_maps_decide(struct dump_maps *dm, unsigned filter, int full)
{
    for (int i = 0; i < dm->n; i++) {
        struct dump_map *m = &dm->maps[i];
        if (full) m->amount = m->perms[0] == 'r' && !m->io ? DUMP_ALL : DUMP_NOTHING;
        else m->amount = decide(m, filter);
        /* [vvar] cannot be read at all (EFAULT/EIO): as gdb does, no bytes for it. */
        if (m->path && strcmp(m->path, "[vvar]") == 0) m->amount = DUMP_NOTHING;
    }
}

unsigned long long dump_maps_bytes(const struct dump_maps *dm)
{
    unsigned long long total = 0;
    for (int i = 0; i < dm->n; i++) {
        const struct dump_map *m = &dm->maps[i];
        total += m->amount == DUMP_ALL ? m->end - m->start : m->amount == DUMP_FIRST_PAGE ? 4096 : 0;
    }
    return total;
}

void dump_maps_free(struct dump_maps *dm)
{
    for (int i = 0; i < dm->n; i++) free(dm->maps[i].path);
    free(dm->maps);
    memset(dm, 0, sizeof *dm);
}
