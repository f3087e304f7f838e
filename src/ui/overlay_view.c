#include "overlay_view.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "draw.h"
#include "keymap.h"
#include "message_view.h"

/* htop's bar: labels padded to six columns, or, when that does not fit (91 columns), followed by one space. */
static void function_bar(const struct tui *t, int y)
{
    static const char *const keys[][2] = {{"F1", "Help"}, {"F2", "Setup"}, {"F3", "Search"}, {"F4", "Filter"},
                                          {"F5", "Tree"}, {"F6", "SortBy"}, {"F7", "Nice-"}, {"F8", "Nice+"},
                                          {"F9", "Kill"}, {"F10", "Quit"}};
    enum { NKEYS = sizeof keys / sizeof keys[0] };
    const struct screen *s = &t->scr;
    int padded = 0;
    for (size_t i = 0; i < NKEYS; i++) padded += (int)strlen(keys[i][0]) + 7;
    int pad = padded <= COLS ? 6 : 0;
    int x = 0;
    for (size_t i = 0; i < NKEYS && x < COLS; i++) {
        x += draw_text(s, y, x, COLS - x, keys[i][0], screen_attr(s, STYLE_KEY));
        char label[16];
        snprintf(label, sizeof label, "%-*s ", pad, keys[i][1]);
        x += draw_text(s, y, x, COLS - x, label, screen_attr(s, STYLE_KEY_LABEL));
    }
    draw_fill(y, x, COLS - x, screen_attr(s, STYLE_KEY_LABEL));
}

void overlay_view_bottom(const struct tui *t)
{
    int y = LINES - 1;
    if (y < 1) return;
    if (!message_view_draw(t)) function_bar(t, y);
}

static void panel_frame(const struct tui *t, int y, int x, int h, int w, const char *title)
{
    const struct screen *s = &t->scr;
    for (int i = 0; i < h; i++) draw_fill(y + i, x, w, screen_attr(s, STYLE_PANEL));
    draw_text(s, y, x + 1, w - 2, title, screen_attr(s, STYLE_PANEL) | (int)A_BOLD);
}

void overlay_view_menu(const struct tui *t)
{
    const struct screen *s = &t->scr;
    const struct menu *m = &t->menu;
    int w = 0;
    for (int i = 0; i < m->n; i++) w = (int)strlen(m->labels[i]) > w ? (int)strlen(m->labels[i]) : w;
    w += 8;
    if ((int)strlen(m->title) + 2 > w) w = (int)strlen(m->title) + 2;
    if (w > COLS) w = COLS;
    int h = m->n + 2;
    if (h > LINES - 2) h = LINES - 2;
    if (h < 3 || w < 8) return;
    int y = (LINES - h) / 2, x = (COLS - w) / 2;
    panel_frame(t, y, x, h, w, m->title);
    int rows = h - 2;
    int top = m->cursor >= rows ? m->cursor - rows + 1 : 0;
    for (int i = 0; i < rows && top + i < m->n; i++) {
        int idx = top + i;
        char line[96];
        if (m->kind == MENU_COLUMNS) snprintf(line, sizeof line, "[%c] %s", m->checked[idx] ? 'x' : ' ', m->labels[idx]);
        else snprintf(line, sizeof line, "%s", m->labels[idx]);
        int attr = idx == m->cursor ? screen_attr(s, STYLE_SELECTED) | (int)A_BOLD : screen_attr(s, STYLE_PANEL);
        draw_fill(y + 1 + i, x + 1, w - 2, attr);
        draw_text(s, y + 1 + i, x + 2, w - 4, line, attr);
    }
}

void overlay_view_help(const struct tui *t)
{
    const struct screen *s = &t->scr;
    erase();
    draw_text(s, 0, 0, COLS, "diagtop keys (any other key closes; Up/Down scroll)", screen_attr(s, STYLE_LABEL));
    /* Each key's help wraps under itself from column 14; a key is shown whole or, at the end, not at all. The
     * bottom lines stay free for a message. */
    int y = 2, i, end = LINES - (t->bottom_lines > 1 ? t->bottom_lines : 1);
    for (i = t->help_top; i < keymap_count; i++) {
        int x = 0, down = draw_wrapped(NULL, y, 14, COLS - 14, &x, keymap_table[i].help, 0);
        if (y + down >= end) break;
        draw_text(s, y, 1, 12, keymap_table[i].label, screen_attr(s, STYLE_KEY));
        x = 0;
        y += draw_wrapped(s, y, 14, COLS - 14, &x, keymap_table[i].help, screen_attr(s, STYLE_NORMAL)) + 1;
    }
    static const char mouse[] = "Mouse: click a row to select it, a column title to sort by it (again to invert).";
    int x = 0;
    if (i < keymap_count || y + 1 + draw_wrapped(NULL, 0, 1, COLS - 2, &x, mouse, 0) >= end) return;
    x = 0;
    draw_wrapped(s, y + 1, 1, COLS - 2, &x, mouse, screen_attr(s, STYLE_DIM));
}
