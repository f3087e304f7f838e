#include "message_view.h"

#include <curses.h>
#include <string.h>

#include "draw.h"
#include "line_edit.h"

#define PIECES 4

/* What is shown: up to PIECES pieces, each in its style, and, for a typed line, the piece after which its
 * cursor is (-1: none). The typed text is split at the cursor (into before, a copy, and after). */
struct message {
    const char *text[PIECES];
    int attr[PIECES];
    int n, cursor_after;
    char before[TUI_TEXT_MAX];
};

static void typed(struct message *m, const struct screen *s, const char *label, const char *text, size_t cursor,
                  int style)
{
    size_t len = strlen(text), at = cursor < len ? cursor : len;
    snprintf(m->before, sizeof m->before, "%.*s", (int)at, text);
    m->text[0] = label, m->attr[0] = screen_attr(s, STYLE_KEY);
    m->text[1] = m->before, m->attr[1] = screen_attr(s, style);
    m->text[2] = text + at, m->attr[2] = screen_attr(s, style);
    m->n = 3, m->cursor_after = 1;
}

static void pieces(const struct tui *t, struct message *m)
{
    const struct screen *s = &t->scr;
    const struct pane *front = t->mode == MODE_PANE ? t->panes.front : NULL;
    m->n = 0, m->cursor_after = -1;
    if (t->mode == MODE_PROMPT) {
        const struct prompt *p = &t->prompt;
        if (p->kind == PROMPT_CONFIRM) {
            m->text[0] = p->label, m->attr[0] = screen_attr(s, STYLE_KEY);
            m->n = 1;
            return;
        }
        typed(m, s, p->label, p->text, p->cursor, p->failed ? STYLE_ERROR : STYLE_NORMAL);
        if (p->failed) m->text[m->n] = "  (not found)", m->attr[m->n++] = screen_attr(s, STYLE_ERROR);
        return;
    }
    if (front && front->input != PANE_KEYS) {
        const char *label = front->input == PANE_SEARCH   ? "Search: "
                            : front->input == PANE_FILTER ? "Filter: "
                                                          : "Save to: ";
        typed(m, s, label, front->input_text, front->input_cursor, STYLE_NORMAL);
        return;
    }
    if (!t->status[0]) return;
    m->text[0] = t->status, m->attr[0] = screen_attr(s, t->status_error ? STYLE_ERROR : STYLE_VALUE);
    m->n = 1;
}

/* Lays the pieces out from line y (drawing when s is set); returns the lines used, and where the cursor goes in
 * *cy, *cx (when the message has one). */
static int lay_out(const struct screen *s, int y, const struct message *m, int *cy, int *cx)
{
    int x = 0, down = 0;
    for (int i = 0; i < m->n; i++) {
        down += draw_wrapped(s, y + down, 0, COLS, &x, m->text[i], m->attr[i]);
        if (i != m->cursor_after) continue;
        /* The next piece goes on where this one ended: on the next line when the line is full. */
        *cy = y + down + (x >= COLS), *cx = x >= COLS ? 0 : x;
    }
    return down + 1;
}

int message_view_height(const struct tui *t)
{
    struct message m;
    int cy, cx;
    pieces(t, &m);
    if (m.n == 0 || LINES < 1) return 0;
    int h = lay_out(NULL, 0, &m, &cy, &cx);
    if (m.cursor_after >= 0 && cy >= h) h = cy + 1; /* the cursor after a full last line gets its own line */
    return h < LINES ? h : LINES;
}

int message_view_draw(const struct tui *t)
{
    struct message m;
    int cy = -1, cx = 0;
    pieces(t, &m);
    int h = message_view_height(t);
    if (m.n == 0 || h == 0) return 0;
    int y = LINES - h;
    for (int i = y; i < LINES; i++) draw_fill(i, 0, COLS, screen_attr(&t->scr, STYLE_NORMAL));
    /* Taller than the screen (a tiny terminal): the end, with the answer keys, is what stays in view. */
    int need = lay_out(NULL, 0, &m, &cy, &cx);
    if (m.cursor_after >= 0 && cy >= need) need = cy + 1;
    lay_out(&t->scr, y - (need - h), &m, &cy, &cx);
    return 1;
}

void message_view_place_cursor(const struct tui *t)
{
    static int shown = -1; /* curs_set only when it changes: no output while nothing moves */
    struct message m;
    int cy = -1, cx = 0, want = 0;
    pieces(t, &m);
    int h = message_view_height(t);
    if (m.cursor_after >= 0 && h > 0) {
        int need = lay_out(NULL, 0, &m, &cy, &cx);
        if (cy >= need) need = cy + 1;
        cy += LINES - h - (need - h);
        want = cy >= 0 && cy < LINES;
    }
    if (want != shown) curs_set(want);
    shown = want;
    if (want) move(cy, cx);
}
