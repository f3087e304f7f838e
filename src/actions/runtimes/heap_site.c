#include "heap_site.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Allocation functions and the wrappers programs and libraries put around them; a trailing '*' matches any end.
 * malloc and its family are the agent's hooks (it leaves them out of its stacks, but a stack from elsewhere may
 * hold them). */
static const char *const builtin[] = {
    "malloc", "calloc", "realloc", "reallocarray", "memalign", "posix_memalign", "aligned_alloc", "valloc",
    "pvalloc", "__libc_malloc", "__libc_calloc", "__libc_realloc", "__libc_memalign",
    "strdup", "__strdup", "strndup", "__strndup", "wcsdup", "asprintf", "vasprintf", "__asprintf",
    /* SQLite */
    "sqlite3Malloc", "sqlite3MallocZero", "sqlite3_malloc", "sqlite3_malloc64", "sqlite3Realloc", "sqlite3_realloc",
    "sqlite3_realloc64", "sqlite3DbMalloc*", "sqlite3DbRealloc*", "sqlite3DbReallocOrFree",
    /* GLib */
    "g_malloc*", "g_try_malloc*", "g_realloc*", "g_try_realloc*", "g_slice_alloc*", "g_memdup*", "g_strdup",
    "g_strndup",
    /* GNU xmalloc (gnulib, libiberty) */
    "xmalloc", "xcalloc", "xrealloc", "xzalloc", "xstrdup", "xmemdup", "xnmalloc", "xcharalloc",
    /* C++: operator new and new[] in every form, demangled and not */
    "operator new*", "_Znwm*", "_Znam*", "_Znwj*", "_Znaj*",
    /* CPython */
    "PyMem_*", "_PyMem_*", "PyObject_Malloc", "PyObject_Calloc", "PyObject_Realloc", "_PyObject_Malloc",
    "_PyObject_Calloc", "_PyObject_Realloc",
};

/* Libraries whose own code between malloc and their caller is their allocator's. Deliberately not the
 * interpreters (libpython exports PyMem_Malloc too): their code between malloc and the program that embeds them
 * is the whole program being interpreted, not a wrapper. Nor libc (its malloc is the hook itself). */
const char *const heap_site_allocator_entries[] = {"sqlite3_malloc", "sqlite3_malloc64", "g_malloc", "_Znwm",
                                                   "_Znam", NULL};

int heap_drop_init(struct heap_drop *d, const char *regex, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    if (!regex || !*regex) return 0;
    /* Anchored as pprof anchors -drop_frames: the regex must match the whole name. */
    size_t n = strlen(regex) + 5;
    char *anchored = malloc(n);
    if (!anchored) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    snprintf(anchored, n, "^(%s)$", regex);
    int rc = regcomp(&d->re, anchored, REG_EXTENDED | REG_NOSUB);
    free(anchored);
    if (rc != 0) {
        char why[160];
        regerror(rc, &d->re, why, sizeof why);
        snprintf(err, errlen, "'%s' is not an extended regular expression: %s", regex, why);
        return -EINVAL;
    }
    d->has_regex = 1;
    return 0;
}

void heap_drop_free(struct heap_drop *d)
{
    if (d->has_regex) regfree(&d->re);
    memset(d, 0, sizeof *d);
}

int heap_drop_matches(const struct heap_drop *d, const char *function)
{
    if (!function) return 0;
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++) {
        size_t len = strlen(builtin[i]);
        if (builtin[i][len - 1] == '*' ? strncmp(function, builtin[i], len - 1) == 0 : strcmp(function, builtin[i]) == 0)
            return 1;
    }
    return d && d->has_regex && regexec(&d->re, function, 0, NULL, 0) == 0;
}

static int agent_module(const char *module) { return module && !strncmp(module, "libdiagtop-agent", 16); }

/* Two rules drop frames, and the row is named after the frame that calls the outermost dropped one:
 * - names: the built-in list, the user's regex, and the agent's own hooks (its module);
 * - an allocator library (heap_site_allocator_entries): when the frame right after the hook lies in a shared
 *   library that exports such an entry point, that frame and every frame after it in the same library, up to the
 *   first frame outside it. A stripped library's wrappers are hidden symbols (Debian's libsqlite3 exports
 *   sqlite3_malloc but not sqlite3MemMalloc, which calls malloc), so that they show only as lib+0xoff and no name
 *   can match them; and what such a library allocates on its own behalf between its caller and malloc (a
 *   prepared statement, a string of sqlite3_mprintf) is its caller's to free. The program's own executable never
 *   counts (python3 exports PyMem_Malloc, and its code is the whole program).
 * As pprof's -drop_frames cuts a stack: from the outermost frame inward, at the first dropped frame after a kept
 * one, so that a wrapper calling helpers the list does not name (sqlite3DbMallocRaw -> mallocWithAlarm -> malloc)
 * is dropped whole. A stack of nothing but dropped frames keeps its innermost. */
int heap_site_pick(const struct heap_drop *d, const struct heap_site_frame *f, int n)
{
    int run = 0;
    if (n > 0 && f[0].alloc_library && f[0].module)
        while (run < n && f[run].module && strcmp(f[run].module, f[0].module) == 0) run++;
    int kept = 0;
    for (int i = n - 1; i >= 0; i--) {
        int drop = i < run || agent_module(f[i].module) || heap_drop_matches(d, f[i].function);
        if (!drop) kept = 1;
        else if (kept) return i + 1;
    }
    return 0;
}
