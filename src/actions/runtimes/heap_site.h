/* heap_site: which frame of an allocation stack names its row in a heap profile. The innermost frames of an
 * allocation are the allocator's (malloc's hook, then wrappers such as sqlite3Malloc, g_malloc, xmalloc, operator
 * new); a row named after them would put every leak of a program on one line. The row is named after the first
 * frame outside them: the frames a built-in list and a user's regex (like pprof's -drop_frames) drop, and those of a
 * library that wraps malloc itself (see heap_site_pick). One rule for every front end: providers apply it. */
#ifndef DIAGTOP_HEAP_SITE_H
#define DIAGTOP_HEAP_SITE_H
#include <regex.h>
#include <stddef.h>

struct heap_drop {
    int has_regex;
    regex_t re; /* the user's frames to drop, matched against the whole function name */
};

/* The rule with the user's regex (NULL or "": the built-in list only). Returns 0 or -EINVAL with the reason. */
int heap_drop_init(struct heap_drop *d, const char *regex, char *err, size_t errlen);
void heap_drop_free(struct heap_drop *d);
/* Whether a function (a symbol or demangled name; NULL never is) is dropped: in the built-in list of allocation
 * wrappers or matched, whole, by the user's regex. */
int heap_drop_matches(const struct heap_drop *d, const char *function);

/* Exported functions that mark a library as one that wraps malloc with an allocator of its own (sqlite3_malloc,
 * g_malloc, operator new as _Znwm...): NULL-terminated, for symbolizer_library_exports. */
extern const char *const heap_site_allocator_entries[];

struct heap_site_frame {
    const char *function; /* NULL when no symbol names it */
    const char *module;   /* basename of its file, NULL when unknown */
    int alloc_library;    /* its module is a shared library that exports one of heap_site_allocator_entries */
};

/* The index of the frame that names an allocation site's row; frames innermost first, n >= 1. */
int heap_site_pick(const struct heap_drop *d, const struct heap_site_frame *f, int n);
#endif
