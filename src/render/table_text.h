/* table_text: process-table cells and lines as plain text (batch output; the TUI draws the same cells). */
#ifndef DIAGTOP_TABLE_TEXT_H
#define DIAGTOP_TABLE_TEXT_H
#include <stddef.h>

#include "columns.h"
#include "procview.h"

/* The cell padded to the column's width (COMMAND: tree prefix + command, cut at bufsz). Returns its length. */
size_t table_text_cell(char *buf, size_t bufsz, const struct column *c, const struct procview_row *vr,
                       const struct column_ctx *ctx);
/* The title cell padded to the column's width. */
size_t table_text_title(char *buf, size_t bufsz, const struct column *c);
/* A whole line: cells separated by one space, cut at width display columns (0: no limit). */
void table_text_line(char *buf, size_t bufsz, const enum column_id *cols, int ncols, const struct procview_row *vr,
                     const struct column_ctx *ctx, int width);
void table_text_titles(char *buf, size_t bufsz, const enum column_id *cols, int ncols, int width);
/* Cuts a UTF-8 string so it spans at most width terminal columns (one per code point; enough for our cells). */
void table_text_cut(char *s, int width);
#endif
