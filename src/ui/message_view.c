#include "message_view.h"

#include <curses.h>

#include "draw.h"

/* The pieces of a prompt or a status, each in its style; returns how many (at most 3). */
static int pieces(const struct tui *t, const char *text[3], int attr[3])
{
    const struct screen *s = &t->scr;
    if (t->mode == MODE_PROMPT) {
        const struct prompt *p = &t->prompt;
        text[0] = p->label, attr[0] = screen_attr(s, STYLE_KEY);
        text[1] = p->text, attr[1] = screen_attr(s, p->failed ? STYLE_ERROR : STYLE_NORMAL);
        text[2] = p->failed ? "  (not found)" : "", attr[2] = screen_attr(s, STYLE_ERROR);
        return 3;
    }
    if (t->mode == MODE_PANE && t->panes.front && t->panes.front->input != PANE_KEYS) return 0;
    if (!t->status[0]) return 0;
    text[0] = t->status, attr[0] = screen_attr(s, t->status_error ? STYLE_ERROR : STYLE_VALUE);
    return 1;
}

/* Lays the pieces out from line y (drawing when s is set); returns the lines used. */
static int lay_out(const struct screen *s, int y, int n, const char *const text[3], const int attr[3])
{
    int x = 0, down = 0;
    for (int i = 0; i < n; i++) down += draw_wrapped(s, y + down, 0, COLS, &x, text[i], attr[i]);
    return down + 1;
}

int message_view_height(const struct tui *t)
{
    const char *text[3];
    int attr[3];
    int n = pieces(t, text, attr);
    if (n == 0 || LINES < 1) return 0;
    int h = lay_out(NULL, 0, n, text, attr);
    return h < LINES ? h : LINES;
}

int message_view_draw(const struct tui *t)
{
    const char *text[3];
    int attr[3];
    int n = pieces(t, text, attr);
    int h = message_view_height(t);
    if (n == 0 || h == 0) return 0;
    int y = LINES - h;
    for (int i = y; i < LINES; i++) draw_fill(i, 0, COLS, screen_attr(&t->scr, STYLE_NORMAL));
    /* Taller than the screen (a tiny terminal): the end, with the answer keys, is what stays in view. */
    int need = lay_out(NULL, 0, n, text, attr);
    lay_out(&t->scr, y - (need - h), n, text, attr);
    return 1;
}
