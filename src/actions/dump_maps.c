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

int dump_maps_parse(const char *smaps, struct dump_maps *out)
{
    memset(out, 0, sizeof *out);
    int cap = 0;
    struct dump_map *cur = NULL;
    for (const char *line = smaps; line && *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        char buf[4352];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf - 1 ? len : sizeof buf - 1), line);
        unsigned long long start, end, offset, inode;
        char perms[8];
        int path_off;
        if (is_header(buf, &start, &end, perms, &offset, &inode, &path_off)) {
            if (out->n == cap) {
                cap = cap ? cap * 2 : 64;
                struct dump_map *nm = realloc(out->maps, (size_t)cap * sizeof *nm);
                if (!nm) return -ENOMEM;
                out->maps = nm;
            }
            cur = &out->maps[out->n++];
            memset(cur, 0, sizeof *cur);
            cur->start = start;
            cur->end = end;
            cur->offset = offset;
            cur->inode = inode;
            snprintf(cur->perms, sizeof cur->perms, "%.4s", perms);
            const char *path = buf + path_off;
            while (*path == ' ') path++;
            if (*path) {
                cur->path = strdup(path);
                size_t pl = strlen(cur->path);
                if (pl > 10 && strcmp(cur->path + pl - 10, " (deleted)") == 0) cur->deleted = 1;
            }
            cur->shared = perms[3] == 's';
        } else if (cur && strncmp(buf, "Anonymous:", 10) == 0) {
            cur->anonymous = strtoull(buf + 10, NULL, 10) * 1024ULL;
        } else if (cur && strncmp(buf, "VmFlags:", 8) == 0) {
            cur->dontdump = strstr(buf, " dd") != NULL;
            cur->io = strstr(buf, " io") != NULL;
            cur->hugetlb = strstr(buf, " ht") != NULL;
        }
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
