#include "table_text.h"

#include <stdio.h>
#include <string.h>

/* Pads text to width (bytes; cells other than the command are ASCII) on the left or right. Hot in batch output:
 * thousands of cells per refresh, so no printf here. */
static size_t pad(char *buf, size_t bufsz, const char *text, int width, int left)
{
    size_t len = strlen(text), w = width > 0 && (size_t)width > len ? (size_t)width : len;
    if (w >= bufsz) w = bufsz - 1;
    if (len > w) len = w;
    size_t fill = w - len;
    if (left) {
        memcpy(buf, text, len);
        memset(buf + len, ' ', fill);
    } else {
        memset(buf, ' ', fill);
        memcpy(buf + fill, text, len);
    }
    buf[w] = '\0';
    return w;
}

size_t table_text_cell(char *buf, size_t bufsz, const struct column *c, const struct procview_row *vr,
                       const struct column_ctx *ctx)
{
    char text[4096];
    if (c->id == COL_COMMAND) {
        size_t plen = strlen(vr->prefix);
        snprintf(text, sizeof text, "%s", vr->prefix);
        c->format(text + plen, sizeof text - plen, vr->row, ctx);
    } else {
        c->format(text, sizeof text, vr->row, ctx);
    }
    return pad(buf, bufsz, text, c->width, c->align_left);
}

size_t table_text_title(char *buf, size_t bufsz, const struct column *c)
{
    return pad(buf, bufsz, c->title, c->width, c->align_left);
}

void table_text_cut(char *s, int width)
{
    int cols = 0;
    for (unsigned char *p = (unsigned char *)s; *p; p++) {
        if ((*p & 0xC0) == 0x80) continue; /* continuation byte */
        if (cols == width) {
            *p = '\0';
            return;
        }
        cols++;
    }
}

/* Joins cells; make_cell writes cell i into buf. */
static void join(char *buf, size_t bufsz, int ncols, int width,
                 size_t (*make_cell)(char *, size_t, int, const void *), const void *arg)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < ncols && off + 2 < bufsz; i++) {
        if (i > 0) buf[off++] = ' ';
        off += make_cell(buf + off, bufsz - off, i, arg);
    }
    buf[off < bufsz ? off : bufsz - 1] = '\0';
    /* Trailing blanks of a left-aligned last column are noise in batch output. */
    while (off > 0 && buf[off - 1] == ' ') buf[--off] = '\0';
    if (width > 0) table_text_cut(buf, width);
}

struct line_arg {
    const enum column_id *cols;
    const struct procview_row *vr;
    const struct column_ctx *ctx;
};

static size_t line_cell(char *buf, size_t bufsz, int i, const void *arg)
{
    const struct line_arg *a = arg;
    return table_text_cell(buf, bufsz, &columns_table[a->cols[i]], a->vr, a->ctx);
}

static size_t title_cell(char *buf, size_t bufsz, int i, const void *arg)
{
    const enum column_id *cols = arg;
    return table_text_title(buf, bufsz, &columns_table[cols[i]]);
}

void table_text_line(char *buf, size_t bufsz, const enum column_id *cols, int ncols, const struct procview_row *vr,
                     const struct column_ctx *ctx, int width)
{
    struct line_arg a = {cols, vr, ctx};
    join(buf, bufsz, ncols, width, line_cell, &a);
}

void table_text_titles(char *buf, size_t bufsz, const enum column_id *cols, int ncols, int width)
{
    join(buf, bufsz, ncols, width, title_cell, cols);
}
