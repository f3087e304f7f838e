#include "table_view.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "render/table_text.h"
#include "draw.h"
#include "watch_pane.h"

#define COMMAND_MIN_PERCENT 40
#define MARKED_MAX 1024

/* While a watch runs, the rows start after a mark column two wide: W on the processes watches follow. */
struct marks {
    int pids[MARKED_MAX];
    int n, width;
};

static void marks_read(const struct tui *t, struct marks *m)
{
    m->n = watch_pane_marked(t, m->pids, MARKED_MAX);
    m->width = m->n >= 0 ? 2 : 0;
}

static int marks_has(const struct marks *m, int pid)
{
    for (int i = 0; i < m->n; i++)
        if (m->pids[i] == pid) return 1;
    return 0;
}

/* On a narrow terminal the least telling columns give way so the command stays readable (htop's default set fits
 * 80 columns; ours has RES/min and RUNTIME on top): one goes while the command would get less than 40% of the
 * width, 32 columns at 80. */
static const enum column_id narrow_drop_order[] = {COL_PRI, COL_NI, COL_SHR, COL_VIRT, COL_THR, COL_MEM, COL_TIME,
                                                   COL_USER};

/* The width the columns left of the command take with their separators (a row ends with the command), or all the
 * columns' when there is no command. */
static int width_before_command(const enum column_id *cols, int n)
{
    int w = 0;
    for (int i = 0; i < n && cols[i] != COL_COMMAND; i++) w += columns_table[cols[i]].width + 1;
    return w;
}

static void choose_columns(struct tui *t, int room)
{
    memcpy(t->drawn, t->s->cols, sizeof t->drawn);
    t->ndrawn = t->s->ncols;
    int has_command = 0;
    for (int i = 0; i < t->ndrawn; i++) has_command |= t->drawn[i] == COL_COMMAND;
    int need = has_command ? (room * COMMAND_MIN_PERCENT + 99) / 100 : 0;
    for (size_t d = 0; d < sizeof narrow_drop_order / sizeof narrow_drop_order[0]; d++) {
        if (width_before_command(t->drawn, t->ndrawn) + need <= room) break;
        for (int i = 0; i < t->ndrawn; i++) {
            if (t->drawn[i] != narrow_drop_order[d]) continue;
            memmove(&t->drawn[i], &t->drawn[i + 1], (size_t)(t->ndrawn - i - 1) * sizeof t->drawn[0]);
            t->ndrawn--;
            break;
        }
    }
}

static void draw_titles(struct tui *t, int y, int x)
{
    const struct screen *s = &t->scr;
    draw_fill(y, 0, COLS, screen_attr(s, STYLE_TITLE));
    for (int i = 0; i < t->ndrawn; i++) {
        const struct column *c = &columns_table[t->drawn[i]];
        char cell[64];
        t->col_x[i] = x;
        table_text_title(cell, sizeof cell, c);
        int sorted = c->id == t->vo.sort;
        int attr = screen_attr(s, sorted ? STYLE_TITLE_SORTED : STYLE_TITLE);
        x += draw_text(s, y, x, COLS - x, cell, attr);
        x += 1;
    }
    t->col_x[t->ndrawn] = COLS;
}

/* Skips n UTF-8 characters of s. */
static const char *skip_chars(const char *s, int n)
{
    while (*s && n > 0) {
        s++;
        while ((*s & 0xC0) == 0x80) s++;
        n--;
    }
    return s;
}

/* The command cell: tree prefix, then the command with the program's basename highlighted. */
static void draw_command(struct tui *t, int y, int x, const struct procview_row *vr, int attr, int highlight)
{
    const struct screen *s = &t->scr;
    char cmd[4096];
    size_t off, len;
    columns_format_command(cmd, sizeof cmd, vr->row, &off, &len);
    if (t->hscroll > 0) { /* scrolled: the line from the offset, without tree or highlight */
        char line[4200];
        snprintf(line, sizeof line, "%s%s", vr->prefix, cmd);
        draw_text(s, y, x, COLS - x, skip_chars(line, t->hscroll), attr);
        return;
    }
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

static void draw_row(struct tui *t, int y, const struct procview_row *vr, int selected, const struct marks *m)
{
    const struct screen *s = &t->scr;
    int tagged = tui_is_tagged(t, vr->row->pid);
    int base = screen_attr(s, selected ? STYLE_SELECTED : tagged ? STYLE_TAGGED : STYLE_NORMAL);
    if (selected) draw_fill(y, 0, COLS, base);
    int x = m->width;
    if (m->width && marks_has(m, vr->row->pid)) draw_text(s, y, 0, m->width, "W", base | (int)A_BOLD);
    for (int i = 0; i < t->ndrawn && x < COLS; i++) {
        const struct column *c = &columns_table[t->drawn[i]];
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
    struct marks m;
    marks_read(t, &m);
    choose_columns(t, COLS - m.width);
    draw_titles(t, t->table_y - 1, m.width);
    const struct procview *v = &t->mon.view;
    for (int i = 0; i < t->table_rows; i++) {
        long idx = t->top + i;
        if (idx >= (long)v->n) break;
        draw_row(t, t->table_y + i, &v->rows[idx], idx == t->selected, &m);
    }
}

int table_view_column_at(const struct tui *t, int x)
{
    for (int i = 0; i < t->ndrawn; i++)
        if (x >= t->col_x[i] && x < t->col_x[i + 1]) return (int)t->drawn[i];
    return -1;
}
