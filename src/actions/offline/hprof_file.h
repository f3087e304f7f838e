/* hprof_file: a heap dump's bytes, mapped read-only. A gzipped dump (HotSpot's GC.heap_dump -gz: many gzip members
 * end to end) is inflated first into an unlinked temporary file, so that the bytes live in the page cache, never
 * in this process's heap, and the readers see one flat mapping either way. */
#ifndef DIAGTOP_HPROF_FILE_H
#define DIAGTOP_HPROF_FILE_H
#include <stddef.h>
#include <stdint.h>

struct hprof_file {
    const unsigned char *bytes;
    size_t size;
    uint64_t stored_size; /* the file's size on disk (the .gz's when compressed) */
    int gzipped;
};

/* Maps path. tmpdir (NULL: $TMPDIR, else /tmp) takes the inflated copy of a .gz. Returns 0, or -1 with err set
 * (naming the file, and the directory when it ran out of space). */
int hprof_file_open(struct hprof_file *f, const char *path, const char *tmpdir, char *err, size_t errlen);
/* Lets the kernel drop the pages of [from, to) from this process (they stay in the page cache): a pass over a
 * dump larger than memory keeps its resident set to what it still reads. */
void hprof_file_release(const struct hprof_file *f, size_t from, size_t to);
void hprof_file_close(struct hprof_file *f);
#endif
