/* procview: which rows a front end shows and in what order: filters (user, pids, text), threads on or off, sort
 * by any column, and the tree (children under their parent, siblings sorted). No curses, no I/O. */
#ifndef DIAGTOP_PROCVIEW_H
#define DIAGTOP_PROCVIEW_H
#include <stddef.h>
#include <sys/types.h>

#include "columns.h"

#define PROCVIEW_MAX_PIDS 64
#define PROCVIEW_PREFIX_MAX 96

struct procview_opts {
    enum column_id sort;
    int reverse;        /* invert the column's natural order */
    int tree;
    int show_threads;
    int user_set;
    uid_t user;
    int npids;
    int pids[PROCVIEW_MAX_PIDS];
    const char *filter; /* case-insensitive substring of the command line; NULL or "" for none */
    int ascii;          /* tree drawn with ASCII instead of Unicode line characters */
};

struct procview_row {
    struct proc_row *row;
    char prefix[PROCVIEW_PREFIX_MAX]; /* tree branches drawn before the command, "" outside tree view */
};

struct procview {
    struct procview_row *rows;
    size_t n, cap;
};

/* What extra data every row needs for these options (sort column, filter), as PROC_NEED_* flags. */
unsigned procview_needs(const struct procview_opts *o);
/* Rebuilds v from the table's rows. Returns 0 or -ENOMEM. */
int procview_build(struct procview *v, struct proc_row **rows, size_t n, const struct procview_opts *o,
                   const struct column_ctx *ctx);
/* Index of pid in the view, or -1. */
long procview_find(const struct procview *v, int pid);
/* Does the row match the text (command line, name or pid)? Used by filter and search alike. */
int procview_matches(const struct proc_row *r, const char *text);
void procview_free(struct procview *v);
#endif
