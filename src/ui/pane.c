#include "pane.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../util/text.h"
#include "draw.h"
#include "keymap.h"
#include "tui_state.h"

void pane_open(struct tui *t, const struct pane_owner *owner, const char *title, const char *save_name)
{
    struct pane *p = &t->pane;
    if (p->open && p->owner != owner && p->owner->close) p->owner->close(t);
    text_lines_free(&p->lines);
    memset(p, 0, sizeof *p);
    p->open = 1;
    p->owner = owner;
    p->match = -1;
    snprintf(p->title, sizeof p->title, "%s", title);
    snprintf(p->save_name, sizeof p->save_name, "%s", save_name);
    t->mode = MODE_PANE;
}

void pane_close(struct tui *t)
{
    if (t->pane.owner && t->pane.owner->close) t->pane.owner->close(t);
    text_lines_free(&t->pane.lines);
    t->pane.open = 0;
    t->mode = MODE_TABLE;
}

void pane_set_lines(struct tui *t, struct text_lines *lines)
{
    struct pane *p = &t->pane;
    text_lines_free(&p->lines);
    p->lines = *lines;
    memset(lines, 0, sizeof *lines);
    if (p->top >= (long)p->lines.n) p->top = p->lines.n ? (long)p->lines.n - 1 : 0;
    p->busy = 0;
}

void pane_set_busy(struct tui *t, const char *text)
{
    snprintf(t->pane.busy_text, sizeof t->pane.busy_text, "%s", text);
    t->pane.busy = 1;
}

static int pane_rows(const struct tui *t) { return LINES - t->table_y - 1 > 1 ? LINES - t->table_y - 1 : 1; }

/* Next line matching the search, from line from (wrapping); -1 if none. */
static long find_from(const struct pane *p, long from)
{
    long n = (long)p->lines.n;
    for (long k = 0; k < n && p->search[0]; k++) {
        long i = ((from + k) % n + n) % n;
        if (text_contains_nocase(p->lines.lines[i], p->search)) return i;
    }
    return -1;
}

static void show_match(struct tui *t, long line)
{
    struct pane *p = &t->pane;
    p->match = line;
    if (line < 0) return;
    if (line < p->top || line >= p->top + pane_rows(t)) p->top = line > 2 ? line - 2 : 0;
}

/* Saves the pane's text to a new file (never overwrites), mode 0600. */
static void save(struct tui *t, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        tui_set_status(t, 1, "cannot create %s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return;
    }
    int bad = text_lines_write(&t->pane.lines, f) < 0;
    bad |= fclose(f) != 0;
    if (bad) {
        tui_set_status(t, 1, "cannot write %s: %s", path, strerror(errno));
        unlink(path);
    } else {
        tui_set_status(t, 0, "saved %zu lines to %s", t->pane.lines.n, path);
    }
}

static unsigned input_key(struct tui *t, int key)
{
    struct pane *p = &t->pane;
    size_t len = strlen(p->input_text);
    if (key == 27) {
        if (p->input == PANE_FILTER && p->owner->filter) p->owner->filter(t, ""); /* Esc clears a filter */
        p->input = PANE_KEYS;
        return EFFECT_NONE;
    }
    if (key == '\n' || key == '\r' || key == (KEY_FUNC_FLAG | KEY_ENTER)) {
        if (p->input == PANE_SAVE && p->input_text[0]) save(t, p->input_text);
        p->input = PANE_KEYS;
        return EFFECT_NONE;
    }
    if (key == (KEY_FUNC_FLAG | KEY_BACKSPACE) || key == 127 || key == 8) {
        while (len > 0 && (p->input_text[len - 1] & 0xC0) == 0x80) len--;
        if (len > 0) p->input_text[--len] = '\0';
        p->input_text[len] = '\0';
    } else if (!(key & KEY_FUNC_FLAG) && key >= 0x20 && key < 0x7F && len + 1 < sizeof p->input_text) {
        p->input_text[len] = (char)key;
        p->input_text[len + 1] = '\0';
    } else {
        return EFFECT_NONE;
    }
    if (p->input == PANE_SEARCH) { /* incremental */
        snprintf(p->search, sizeof p->search, "%.127s", p->input_text);
        show_match(t, find_from(p, p->top));
    } else if (p->input == PANE_FILTER && p->owner->filter) {
        p->owner->filter(t, p->input_text);
    }
    return EFFECT_NONE;
}

void pane_start_filter(struct tui *t, const char *current)
{
    t->pane.input = PANE_FILTER;
    snprintf(t->pane.input_text, sizeof t->pane.input_text, "%s", current ? current : "");
}

unsigned pane_key(struct tui *t, int key)
{
    struct pane *p = &t->pane;
    if (p->input != PANE_KEYS) return input_key(t, key);
    long rows = pane_rows(t), n = (long)p->lines.n;
    switch (key) {
    case 27: case 'q': case KEY_FUNC_FLAG | KEY_F(10):
        pane_close(t);
        return EFFECT_NONE;
    case KEY_FUNC_FLAG | KEY_UP: p->top--; break;
    case KEY_FUNC_FLAG | KEY_DOWN: p->top++; break;
    case KEY_FUNC_FLAG | KEY_PPAGE: p->top -= rows - 1; break;
    case KEY_FUNC_FLAG | KEY_NPAGE: case ' ': p->top += rows - 1; break;
    case KEY_FUNC_FLAG | KEY_HOME: p->top = 0; break;
    case KEY_FUNC_FLAG | KEY_END: p->top = n - rows; break;
    case '/': case KEY_FUNC_FLAG | KEY_F(3):
        p->input = PANE_SEARCH;
        p->input_text[0] = '\0';
        break;
    case 'n': show_match(t, find_from(p, p->match + 1)); break;
    case 'N': show_match(t, find_from(p, p->match - 1 < 0 ? n - 1 : p->match - 1) ); break;
    case 'S':
        if (p->busy || n == 0) break;
        p->input = PANE_SAVE;
        snprintf(p->input_text, sizeof p->input_text, "%s", p->save_name);
        break;
    case 'r':
        if (!p->busy && p->owner->recapture) return p->owner->recapture(t);
        break;
    default:
        if (p->owner->key) {
            unsigned fx = p->owner->key(t, key);
            if (fx != ~0u) return fx;
        }
    }
    if (p->top > n - rows) p->top = n - rows;
    if (p->top < 0) p->top = 0;
    return EFFECT_NONE;
}

void pane_draw(const struct tui *t, int y0, double now)
{
    const struct pane *p = &t->pane;
    const struct screen *s = &t->scr;
    if (y0 >= LINES - 1) return;
    draw_fill(y0, 0, COLS, screen_attr(s, STYLE_TITLE));
    char title[256];
    snprintf(title, sizeof title, " %s", p->title);
    draw_text(s, y0, 0, COLS, title, screen_attr(s, STYLE_TITLE));
    int rows = LINES - y0 - 2;
    if (p->busy) {
        char text[512], busy[400];
        if (p->owner->progress_text) p->owner->progress_text(t, busy, sizeof busy);
        else snprintf(busy, sizeof busy, "%s", p->busy_text);
        snprintf(text, sizeof text, "%s  %.1f s  (Esc cancels)", busy, now - p->busy_since);
        draw_text(s, y0 + 1, 1, COLS - 1, text, screen_attr(s, STYLE_VALUE));
    }
    for (int i = 0; i < rows && !p->busy; i++) {
        long idx = p->top + i;
        if (idx >= (long)p->lines.n) break;
        int attr = idx == p->match ? screen_attr(s, STYLE_SELECTED) : screen_attr(s, STYLE_NORMAL);
        if (idx == p->match) draw_fill(y0 + 1 + i, 0, COLS, attr);
        draw_text(s, y0 + 1 + i, 0, COLS, p->lines.lines[idx], attr);
    }
    int y = LINES - 1;
    if (p->input != PANE_KEYS) {
        const char *label = p->input == PANE_SEARCH ? "Search: " : p->input == PANE_FILTER ? "Filter: " : "Save to: ";
        int x = draw_text(s, y, 0, COLS, label, screen_attr(s, STYLE_KEY));
        draw_text(s, y, x, COLS - x, p->input_text, screen_attr(s, STYLE_NORMAL));
        return;
    }
    if (t->status[0] && now < t->status_until) {
        draw_text(s, y, 0, COLS, t->status, screen_attr(s, t->status_error ? STYLE_ERROR : STYLE_VALUE));
        return;
    }
    char bar[256];
    snprintf(bar, sizeof bar, "Esc close  / search  n next  r refresh  S save  %s  PgUp/PgDn scroll  [%ld/%zu]",
             p->owner->keys_help ? p->owner->keys_help : "", p->lines.n ? p->top + 1 : 0, p->lines.n);
    draw_fill(y, 0, COLS, screen_attr(s, STYLE_KEY_LABEL));
    draw_text(s, y, 0, COLS, bar, screen_attr(s, STYLE_KEY_LABEL));
}
