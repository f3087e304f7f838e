#include "table_view.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "../render/table_text.h"
#include "draw.h"

static void draw_titles(struct tui *t, int y)
{
    const struct screen *s = &t->scr;
    draw_fill(y, 0, COLS, screen_attr(s, STYLE_TITLE));
    int x = 0;
    for (int i = 0; i < t->s->ncols; i++) {
        const struct column *c = &columns_table[t->s->cols[i]];
        char cell[64];
        t->col_x[i] = x;
        table_text_title(cell, sizeof cell, c);
        int sorted = c->id == t->vo.sort;
        int attr = screen_attr(s, sorted ? STYLE_TITLE_SORTED : STYLE_TITLE);
        x += draw_text(s, y, x, COLS - x, cell, attr);
        x += 1;
    }
    t->col_x[t->s->ncols] = COLS;
}

/* The command cell: tree prefix, then the command with the program's basename highlighted. */
static void draw_command(struct tui *t, int y, int x, const struct procview_row *vr, int attr, int highlight)
{
    const struct screen *s = &t->scr;
    char cmd[4096];
    size_t off, len;
    columns_format_command(cmd, sizeof cmd, vr->row, &off, &len);
    if (off > strlen(cmd)) off = strlen(cmd);
    if (off + len > strlen(cmd)) len = strlen(cmd) - off;
    int w = COLS - x;
    x += draw_text(s, y, x, w, vr->prefix, highlight ? attr : screen_attr(s, STYLE_DIM));
    char part[4096];
    snprintf(part, sizeof part, "%.*s", (int)off, cmd);
    x += draw_text(s, y, x, COLS - x, part, attr);
    snprintf(part, sizeof part, "%.*s", (int)len, cmd + off);
    x += draw_text(s, y, x, COLS - x, part, highlight ? attr : screen_attr(s, STYLE_BASENAME));
    draw_text(s, y, x, COLS - x, cmd + off + len, attr);
}

static void draw_row(struct tui *t, int y, const struct procview_row *vr, int selected)
{
    const struct screen *s = &t->scr;
    int tagged = tui_is_tagged(t, vr->row->pid);
    int base = screen_attr(s, selected ? STYLE_SELECTED : tagged ? STYLE_TAGGED : STYLE_NORMAL);
    if (selected) draw_fill(y, 0, COLS, base);
    int x = 0;
    for (int i = 0; i < t->s->ncols && x < COLS; i++) {
        const struct column *c = &columns_table[t->s->cols[i]];
        if (c->id == COL_COMMAND) {
            draw_command(t, y, x, vr, base, selected || tagged);
            break;
        }
        char cell[128];
        table_text_cell(cell, sizeof cell, c, vr, &t->mon.ctx);
        int attr = base;
        if (!selected && !tagged && c->id == COL_S && vr->row->state == 'R') attr = screen_attr(s, STYLE_RUNNING);
        x += draw_text(s, y, x, COLS - x, cell, attr);
        x += 1;
    }
}

void table_view_draw(struct tui *t)
{
    draw_titles(t, t->table_y - 1);
    const struct procview *v = &t->mon.view;
    for (int i = 0; i < t->table_rows; i++) {
        long idx = t->top + i;
        if (idx >= (long)v->n) break;
        draw_row(t, t->table_y + i, &v->rows[idx], idx == t->selected);
    }
}

int table_view_column_at(const struct tui *t, int x)
{
    for (int i = 0; i < t->s->ncols; i++)
        if (x >= t->col_x[i] && x < t->col_x[i + 1]) return i;
    return -1;
}
