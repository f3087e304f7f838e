#include "pane.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/procname.h"
#include "collect/proctable.h"
#include "util/dump_path.h"
#include "util/fileio.h"
#include "util/job.h"
#include "util/text.h"
#include "draw.h"
#include "keybar.h"
#include "line_edit.h"
#include "message_view.h"
#include "tui_state.h"

#define PROGRESS_SECONDS 0.25 /* how often a busy pane's elapsed time is redrawn */

static struct pane *instance_of(struct tui *t, const struct pane_class *cls)
{
    struct pane_list *l = &t->panes;
    for (int i = 0; i < l->n; i++)
        if (l->items[i]->cls == cls) return l->items[i];
    if (l->n == PANES_MAX) return NULL;
    struct pane *p = calloc(1, sizeof *p);
    void *state = calloc(1, cls->state_size ? cls->state_size : 1);
    if (!p || !state) {
        free(p);
        free(state);
        return NULL;
    }
    p->cls = cls;
    p->state = state;
    l->items[l->n++] = p;
    return p;
}

/* A fresh view: no lines, scrolled to the top, no search. */
static void reset_view(struct pane *p)
{
    text_lines_free(&p->lines);
    p->title[0] = p->search[0] = p->input_text[0] = p->busy_text[0] = p->save_name[0] = p->proc_name[0] = '\0';
    p->top = 0;
    p->hscroll = 0;
    p->match = -1;
    p->cursor = p->cursor_first = 0;
    p->input = PANE_KEYS;
    p->busy = 0;
}

unsigned pane_open(struct tui *t, const struct pane_class *cls, const struct proc_row *row)
{
    if (t->panes.front) pane_close(t);
    struct pane *p = instance_of(t, cls);
    if (!p) {
        tui_set_status(t, 1, "out of memory");
        return EFFECT_NONE;
    }
    reset_view(p);
    procname_of_pid(row->tgid, p->proc_name, sizeof p->proc_name);
    if (!p->proc_name[0]) text_sanitize_display(p->proc_name, sizeof p->proc_name, row->comm, strlen(row->comm));
    enum pane_open_result r = cls->open(t, p, row);
    if (r == PANE_SHOWN) pane_show(t, p);
    return EFFECT_NONE;
}

void pane_show(struct tui *t, struct pane *p)
{
    t->panes.front = p;
    t->mode = MODE_PANE;
}

/* The pane closes or diagtop quits: its job stops, then the class drops what it does not keep. */
static void stop_work(struct pane *p)
{
    int stopped = p->job.running;
    if (pane_cancel_job(p) < 0) return; /* left running: the state is still the worker's */
    if (p->cls->closed) p->cls->closed(p, stopped);
}

void pane_close(struct tui *t)
{
    struct pane *p = t->panes.front;
    t->panes.front = NULL;
    t->mode = MODE_TABLE;
    if (!p) return;
    stop_work(p);
    reset_view(p);
}

void pane_destroy_all(struct tui *t)
{
    struct pane_list *l = &t->panes;
    for (int i = 0; i < l->n; i++) {
        struct pane *p = l->items[i];
        stop_work(p);
        if (p->job.running) continue; /* still in use by a worker: left (a dump's temporary file may remain) */
        if (p->cls->destroy) p->cls->destroy(p);
        text_lines_free(&p->lines);
        free(p->state);
        free(p);
    }
    l->n = 0;
    l->front = NULL;
}

void pane_set_lines(struct pane *p, struct text_lines *lines)
{
    text_lines_free(&p->lines);
    p->lines = *lines;
    memset(lines, 0, sizeof *lines);
    if (p->top >= (long)p->lines.n) p->top = p->lines.n ? (long)p->lines.n - 1 : 0;
    if (p->cursor >= (long)p->lines.n) p->cursor = p->lines.n ? (long)p->lines.n - 1 : 0;
    if (p->cursor < p->cursor_first) p->cursor = p->cursor_first;
    p->busy = 0;
}

void pane_set_busy(struct pane *p, const char *text, double now)
{
    snprintf(p->busy_text, sizeof p->busy_text, "%s", text);
    p->busy = 1;
    p->busy_since = now;
}

void pane_set_title(struct pane *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->title, sizeof p->title, fmt, ap);
    va_end(ap);
}

int pane_start_job(struct pane *p, void (*run)(struct job *j)) { return job_start(&p->job, run, p->state); }

int pane_cancel_job(struct pane *p) { return p->job.running ? job_cancel(&p->job, PANE_CANCEL_SECONDS) : 0; }

int pane_fd(const struct pane *p) { return job_fd(&p->job); }

void pane_job_ready(struct tui *t, struct pane *p)
{
    int events = job_events(&p->job);
    if ((events & JOB_NOTIFIED) && p->cls->notified) p->cls->notified(t, p);
    if (!(events & JOB_DONE)) return;
    job_finish(&p->job);
    if (p->cls->ready) p->cls->ready(t, p);
}

double pane_next_redraw(const struct tui *t, double last_draw)
{
    const struct pane *p = t->panes.front;
    return p && p->busy ? last_draw + PROGRESS_SECONDS : 0;
}

/* The lines of text under the title; a wrapped message takes its lines from the bottom while shown. */
static int pane_rows(const struct tui *t)
{
    int bottom = t->bottom_lines > 1 ? t->bottom_lines : 1;
    return LINES - t->table_y - bottom > 1 ? LINES - t->table_y - bottom : 1;
}

/* A line laid out in columns (two blanks between fields, after its indentation) is cut at the width and scrolls
 * sideways; any other line (a message, a hint) wraps, as every line does in a class whose lines all wrap. */
static int in_columns(const struct pane *p, const char *line)
{
    return !p->cls->wrap_lines && strstr(line + strspn(line, " "), "  ") != NULL;
}

/* Where a wrapped line goes on: under its value ("Parent chain    1 init <- ..."), else under its first word. */
static int hanging_indent(const char *line)
{
    size_t lead = strspn(line, " ");
    const char *gap = strstr(line + lead, "  ");
    if (gap && gap[strspn(gap, " ")]) return (int)(gap - line + (long)strspn(gap, " "));
    return (int)lead;
}

static int line_height(const struct pane *p, const char *line)
{
    return in_columns(p, line) ? 1 : draw_hanging(NULL, 0, 0, hanging_indent(line), line, 0);
}

/* The first line of the last screenful: the lines from it to the end fill at most rows lines, wrapped. */
static long last_top(const struct pane *p, long rows)
{
    long top = (long)p->lines.n, used = 0;
    while (top > 0) {
        int h = line_height(p, p->lines.lines[top - 1]);
        if (used + h > rows) break;
        used += h;
        top--;
    }
    return top < (long)p->lines.n || top == 0 ? top : top - 1;
}

/* Left/Right: the lines in columns move by 8 characters, up to where the longest one ends. */
static void scroll_sideways(struct pane *p, int right)
{
    int longest = 0;
    for (size_t i = 0; i < p->lines.n; i++) {
        if (!in_columns(p, p->lines.lines[i])) continue;
        int chars = 0;
        for (const char *q = p->lines.lines[i]; *q; q++) chars += (*q & 0xC0) != 0x80;
        if (chars > longest) longest = chars;
    }
    p->hscroll += right ? 8 : -8;
    if (p->hscroll > longest - COLS / 2) p->hscroll = longest - COLS / 2;
    if (p->hscroll < 0) p->hscroll = 0;
}

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

static void show_match(struct tui *t, struct pane *p, long line)
{
    p->match = line;
    if (line < 0) return;
    long rows = pane_rows(t), used = 0;
    for (long i = p->top; i <= line && used <= rows && line >= p->top; i++) used += line_height(p, p->lines.lines[i]);
    if (line < p->top || used > rows) p->top = line > 2 ? line - 2 : 0; /* in view, wrapped lines counted */
}

/* Where S saves: an absolute path as typed, else the name in the dump directory (like every file diagtop writes).
 * Returns 0, or -1 with the reason in the status line. */
static int save_path(struct tui *t, const char *typed, char *path, size_t n)
{
    char dir[4096], err[256];
    if (typed[0] == '/') {
        snprintf(path, n, "%s", typed);
        return 0;
    }
    if (dump_directory(NULL, t->s->dump_dir, dir, sizeof dir, err, sizeof err) < 0) {
        tui_set_status(t, 1, "%s", err);
        return -1;
    }
    snprintf(path, n, "%s/%s", dir, typed);
    return 0;
}

/* Saves the pane's text to a new file (never overwrites), mode 0600; the status names its absolute path. */
static void save(struct tui *t, const struct pane *p, const char *typed)
{
    char path[4400];
    if (save_path(t, typed, path, sizeof path) < 0) return;
    int fd = fileio_create_private(AT_FDCWD, path, O_WRONLY);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        tui_set_status(t, 1, "cannot create %s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return;
    }
    int bad = text_lines_write(&p->lines, f) < 0;
    bad |= fclose(f) != 0;
    if (bad) {
        tui_set_status(t, 1, "cannot write %s: %s", path, strerror(errno));
        unlink(path);
    } else {
        tui_set_status(t, 0, "saved %zu lines to %s", p->lines.n, path);
    }
}

/* S proposes the pane's file name in the dump directory, in full when it fits: the user sees where it goes. */
static void save_propose(struct tui *t, struct pane *p)
{
    char dir[4096], err[256], full[4400];
    snprintf(p->input_text, sizeof p->input_text, "%s", p->save_name);
    p->input_cursor = sizeof p->input_text; /* line_edit keeps it at the end of what the text becomes */
    if (dump_directory(NULL, t->s->dump_dir, dir, sizeof dir, err, sizeof err) < 0) return;
    size_t n = (size_t)snprintf(full, sizeof full, "%s/%s", dir, p->save_name);
    if (n < sizeof p->input_text) memcpy(p->input_text, full, n + 1);
}

/* A key while the bottom line edits a search, a filter or a file name (line_edit's keys). */
static unsigned input_key(struct tui *t, struct pane *p, int key)
{
    switch (line_edit_key(p->input_text, sizeof p->input_text, &p->input_cursor, key)) {
    case LINE_EDIT_CANCEL: /* a filter goes back to what held before the \ key */
        if (p->input == PANE_FILTER && p->cls->filter) p->cls->filter(t, p, p->input_before);
        p->input = PANE_KEYS;
        return EFFECT_NONE;
    case LINE_EDIT_ACCEPT:
        if (p->input == PANE_SAVE && p->input_text[0]) save(t, p, p->input_text);
        p->input = PANE_KEYS;
        return EFFECT_NONE;
    case LINE_EDIT_CHANGED: break;
    case LINE_EDIT_SAME: case LINE_EDIT_OTHER: return EFFECT_NONE;
    }
    if (p->input == PANE_SEARCH) { /* incremental */
        snprintf(p->search, sizeof p->search, "%.127s", p->input_text);
        show_match(t, p, find_from(p, p->top));
    } else if (p->input == PANE_FILTER && p->cls->filter) {
        p->cls->filter(t, p, p->input_text);
    }
    return EFFECT_NONE;
}

void pane_start_filter(struct pane *p, const char *current)
{
    p->input = PANE_FILTER;
    snprintf(p->input_text, sizeof p->input_text, "%s", current ? current : "");
    snprintf(p->input_before, sizeof p->input_before, "%s", p->input_text);
    p->input_cursor = strlen(p->input_text);
}

/* Cursor keys of a pane whose rows can be chosen. Returns 1 when key moved the cursor. */
static int move_cursor(struct pane *p, int key, long rows)
{
    long n = (long)p->lines.n, c = p->cursor;
    switch (key) {
    case KEY_FUNC_FLAG | KEY_UP: c--; break;
    case KEY_FUNC_FLAG | KEY_DOWN: c++; break;
    case KEY_FUNC_FLAG | KEY_PPAGE: c -= rows - 1; break;
    case KEY_FUNC_FLAG | KEY_NPAGE: c += rows - 1; break;
    case KEY_FUNC_FLAG | KEY_HOME: c = p->cursor_first; break;
    case KEY_FUNC_FLAG | KEY_END: c = n - 1; break;
    default: return 0;
    }
    if (c >= n) c = n - 1;
    if (c < p->cursor_first) c = p->cursor_first;
    p->cursor = c;
    if (c < p->top) p->top = c == p->cursor_first ? 0 : c;
    if (c >= p->top + rows) p->top = c - rows + 1;
    return 1;
}

unsigned pane_key(struct tui *t, int key)
{
    struct pane *p = t->panes.front;
    if (!p) return EFFECT_NONE;
    if (p->input != PANE_KEYS) return input_key(t, p, key);
    long rows = pane_rows(t), n = (long)p->lines.n;
    if (p->cls->has_cursor && move_cursor(p, key, rows)) return EFFECT_NONE;
    switch (key) {
    case 27: case 'q': case KEY_FUNC_FLAG | KEY_F(10):
        if (key == 27 && p->cls->back && p->cls->back(t, p)) return EFFECT_NONE;
        pane_close(t);
        return EFFECT_NONE;
    case KEY_FUNC_FLAG | KEY_UP: p->top--; break;
    case KEY_FUNC_FLAG | KEY_DOWN: p->top++; break;
    case KEY_FUNC_FLAG | KEY_PPAGE: p->top -= rows - 1; break;
    case KEY_FUNC_FLAG | KEY_NPAGE: case ' ': p->top += rows - 1; break;
    case KEY_FUNC_FLAG | KEY_HOME: p->top = 0; break;
    case KEY_FUNC_FLAG | KEY_END: p->top = last_top(p, rows); break;
    case KEY_FUNC_FLAG | KEY_LEFT: case KEY_FUNC_FLAG | KEY_RIGHT:
        if (p->cls->wrap_lines) goto own; /* the class's (the details pane's tabs) */
        scroll_sideways(p, key == (KEY_FUNC_FLAG | KEY_RIGHT));
        return EFFECT_NONE;
    case '/': case KEY_FUNC_FLAG | KEY_F(3):
        p->input = PANE_SEARCH;
        p->input_text[0] = '\0';
        p->input_cursor = 0;
        break;
    case 'n': show_match(t, p, find_from(p, p->match + 1)); break;
    case 'N': show_match(t, p, find_from(p, p->match - 1 < 0 ? n - 1 : p->match - 1)); break;
    case 'S':
        if (p->busy || n == 0) break;
        p->input = PANE_SAVE;
        save_propose(t, p);
        break;
    case 'r':
        if (!p->busy && p->cls->reload) return p->cls->reload(t, p);
        break;
    default:
    own:
        if (p->cls->key) {
            unsigned fx = p->cls->key(t, p, key);
            if (fx != PANE_KEY_UNHANDLED) return fx;
        }
    }
    long last = last_top(p, rows);
    if (p->top > last) p->top = last;
    if (p->top < 0) p->top = 0;
    return EFFECT_NONE;
}

/* The bottom bar: every pane's keys, the class's, and the position; labels shorten before keys go (keybar). */
static void footer(const struct tui *t, const struct pane *p, int y, int sideways)
{
    const struct screen *s = &t->scr;
    char spec[512], pos[48];
    snprintf(spec, sizeof spec, "Esc close|Esc  / search|/  n next|n  r refresh|r  S save|S  %s  PgUp/PgDn scroll|PgUp/PgDn%s",
             p->cls->keys_help ? p->cls->keys_help : "", sideways ? "  Left/Right sideways|Left/Right" : "");
    snprintf(pos, sizeof pos, "[%ld/%zu]", p->lines.n ? p->top + 1 : 0, p->lines.n);
    struct keybar kb;
    keybar_fit(&kb, spec, pos, COLS);
    int attr = screen_attr(s, STYLE_KEY_LABEL);
    draw_fill(y, 0, COLS, attr);
    int x = 0;
    for (int i = 0; i < kb.n; i++) {
        const struct keybar_item *it = &kb.items[i];
        x += i ? kb.sep : 0;
        char key[64];
        snprintf(key, sizeof key, "%.*s", it->keylen, it->text);
        x += draw_text(s, y, x, COLS - x, key, attr | (int)A_BOLD);
        x += draw_text(s, y, x, COLS - x, it->text + it->keylen, attr);
    }
    if (kb.show_right) draw_text(s, y, COLS - (int)strlen(pos), (int)strlen(pos), pos, attr);
}

void pane_draw(const struct tui *t, int y0, double now)
{
    const struct pane *p = t->panes.front;
    const struct screen *s = &t->scr;
    if (!p || y0 >= LINES - 1) return;
    draw_fill(y0, 0, COLS, screen_attr(s, STYLE_TITLE));
    char title[300] = " ";
    if (p->cls->title_fit) p->cls->title_fit(p, COLS - 1, title + 1, sizeof title - 1);
    else snprintf(title + 1, sizeof title - 1, "%s", p->title);
    draw_text(s, y0, 0, COLS, title, screen_attr(s, STYLE_TITLE));
    int rows = LINES - y0 - 1 - (t->bottom_lines > 1 ? t->bottom_lines : 1);
    if (p->busy) {
        char text[512], busy[400];
        if (p->cls->progress) p->cls->progress(p, busy, sizeof busy);
        else snprintf(busy, sizeof busy, "%s", p->busy_text);
        snprintf(text, sizeof text, " %s  %.1f s  (Esc cancels)", busy, now - p->busy_since);
        draw_hanging(s, y0 + 1, rows, 1, text, screen_attr(s, STYLE_VALUE));
    }
    int y = y0 + 1, end = y0 + 1 + rows, sideways = p->hscroll > 0;
    for (long idx = p->top; idx < (long)p->lines.n && y < end && !p->busy; idx++) {
        const char *line = p->lines.lines[idx];
        int chosen = idx == p->match || (p->cls->has_cursor && idx == p->cursor);
        int attr = chosen ? screen_attr(s, STYLE_SELECTED) : screen_attr(s, STYLE_NORMAL);
        int h = line_height(p, line);
        for (int i = 0; i < h && chosen && y + i < end; i++) draw_fill(y + i, 0, COLS, attr);
        if (in_columns(p, line)) sideways |= draw_cut(s, y, p->hscroll, line, attr);
        else draw_hanging(s, y, end - y, hanging_indent(line), line, attr);
        y += h;
    }
    if (message_view_draw(t)) return; /* a search, filter or file name being typed, or a message */
    footer(t, p, LINES - 1, sideways);
}
