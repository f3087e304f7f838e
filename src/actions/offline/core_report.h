/* core_report: what a core file says, read away from the process: who it was and why it was dumped (core_notes),
 * every thread's stack (libdw unwinds from the core's registers and memory, the same symbolizer as `diagtop
 * stack` names the frames), a Go program's goroutines, the native heap (glibc's, walked), and the files it
 * mapped with their build-ids, each said found or missing. The thread that took the fatal signal comes first. */
#ifndef DIAGTOP_CORE_REPORT_H
#define DIAGTOP_CORE_REPORT_H
#include "actions/stack/goroutines.h"
#include "actions/stack/stack.h"
#include "core_notes.h"
#include "glibc_heap.h"

struct core_options {
    int heap;            /* walk the native heap */
    const char *exe;     /* the program, when the core's path to it is wrong here; NULL: found by build-id or path */
    const char *sysroot; /* a directory holding the core's machine's files (a container's root); NULL: / */
    int source;          /* file:line and inlined calls */
};

struct core_module {
    char *name;         /* as the core names it (a path, or [vdso]) */
    char *file;         /* the file read for it; NULL: missing, or read from the core's memory (in_core) */
    int in_core;        /* no file: its image is in the core (the vdso) */
    char *debug_file;   /* its debug information, when a frame needed it; NULL otherwise */
    char build_id[41];  /* hex, "" when the core recorded none */
    unsigned long long start, end;
    int frames;         /* frames of the stacks in it */
};

/* The native heap: glibc's walked, or why not. */
struct core_heap {
    char allocator[32];      /* "glibc", "jemalloc", "tcmalloc", "the program's own", "" when none was found */
    int walked;              /* h holds the walk */
    char why_not[200];       /* when not walked */
    struct glibc_heap h;
};

struct core_report {
    struct core_notes notes;
    struct stack_result stacks;
    struct core_module *modules;
    int nmodules;
    int missing;        /* modules with frames whose file was not found */
    int signal_tid;     /* the thread that took notes.signal, 0: none known */
    struct goroutines goroutines;
    struct core_heap heap;
    char **auxv_strings; /* per notes.auxv entry: the string it points to (AT_EXECFN, AT_PLATFORM...), else NULL */
};

/* Reads the core at path. Returns 0, or -1 with a one-line reason (the notes' checks, or libdw's). */
int core_report_read(const char *path, const struct core_options *o, struct core_report *r, char *err,
                     size_t errlen);
/* The same for a core open on fd (left open), named path in messages. */
int core_report_read_fd(int fd, const char *path, const struct core_options *o, struct core_report *r, char *err,
                        size_t errlen);
void core_report_free(struct core_report *r);
#endif
