/* dump_maps: the mappings of a process as /proc/PID/smaps describes them, and how much of each a core dump holds
 * by the kernel's rules (fs/coredump.c vma_dump_size) under a coredump_filter. Pure parsing and deciding. */
#ifndef DIAGTOP_DUMP_MAPS_H
#define DIAGTOP_DUMP_MAPS_H
#include <stddef.h>

enum dump_amount { DUMP_NOTHING, DUMP_FIRST_PAGE, DUMP_ALL };

struct dump_map {
    unsigned long long start, end, offset, inode;
    char perms[5];
    char *path;            /* NULL for anonymous; "[vdso]", "[stack]", "/usr/lib/..." */
    unsigned long long anonymous; /* bytes written privately (smaps Anonymous:) */
    int dontdump, io, hugetlb, shared, deleted;
    enum dump_amount amount;
};

struct dump_maps {
    struct dump_map *maps;
    int n, cap;
};

/* Parses smaps text. Returns 0 or -ENOMEM. */
int dump_maps_parse(const char *smaps, struct dump_maps *out);
/* The same a line at a time (len bytes, without the newline), for smaps read as a stream: a process with many
 * mappings has more smaps text (~700 bytes a mapping) than is worth holding. dm starts zeroed. */
int dump_maps_parse_line(struct dump_maps *dm, const char *line, size_t len);
/* Decides m->amount for every mapping under filter (coredump_filter bits; full: every readable mapping whole). */
void dump_maps_decide(struct dump_maps *dm, unsigned filter, int full);
/* Bytes the core's data will span (before sparseness). */
unsigned long long dump_maps_bytes(const struct dump_maps *dm);
void dump_maps_free(struct dump_maps *dm);
#endif
