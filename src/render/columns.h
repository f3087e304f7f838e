/* columns: the declarative table of process-table columns. Each column says its key (sort key and config name),
 * title, width, which extra /proc data it needs, how rows compare and how a cell is formatted. The TUI, the batch
 * text output and the sort/column options all read this one table. */
#ifndef DIAGTOP_COLUMNS_H
#define DIAGTOP_COLUMNS_H
#include <stddef.h>

#include "collect/proctable.h"
#include "collect/users.h"

enum column_id {
    COL_PID, COL_USER, COL_PRI, COL_NI, COL_VIRT, COL_RES, COL_SHR, COL_S, COL_CPU, COL_MEM, COL_TIME, COL_THR,
    COL_GROWTH, COL_RUNTIME, COL_DISK_READ, COL_DISK_WRITE, COL_NET_READ, COL_NET_WRITE, COL_WAIT, COL_IO_WAIT, COL_CSW, COL_OOM, COL_UNIT, COL_COMMAND,
    COL_COUNT
};

struct column_ctx {
    struct users *users;
    long hertz;
};

struct column {
    enum column_id id;
    const char *key;   /* "cpu": sort key and config name */
    const char *title; /* "%CPU" */
    int width;         /* 0: takes the rest of the line */
    int align_left;
    int sort_descending; /* the natural order: biggest first for amounts */
    unsigned needs;      /* PROC_NEED_* for a row whose cell is shown or compared */
    const char *description;
    int (*compare)(const struct proc_row *a, const struct proc_row *b, const struct column_ctx *ctx);
    void (*format)(char *buf, size_t bufsz, const struct proc_row *r, const struct column_ctx *ctx);
    int optional; /* shown only when chosen (F2, --columns, the config): a column nobody asked for reads nothing */
};

extern const struct column columns_table[COL_COUNT];

/* The column with this key or title (case-insensitive), or NULL. */
const struct column *columns_find(const char *key);
/* Parses "pid,user,cpu" into ids; returns the count or -1 with a reason naming the bad key. */
int columns_parse_list(const char *list, enum column_id *out, int max, char *err, size_t errlen);
/* The columns shown by default (all but the optional ones), in order. */
int columns_default(enum column_id *out, int max);
/* Writes the command cell without any tree prefix: the full command line sanitized, or "[comm]" for kernel threads
 * and processes without one; thread rows show the thread's name. base_off and base_len locate the program's
 * basename inside it for highlighting. */
void columns_format_command(char *buf, size_t bufsz, const struct proc_row *r, size_t *base_off, size_t *base_len);
#endif
