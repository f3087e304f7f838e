#include "draw.h"

#include <curses.h>
#include <string.h>

#include "util/text.h"

int draw_text(const struct screen *s, int y, int x, int maxw, const char *text, int attr)
{
    if (maxw <= 0 || y < 0 || y >= LINES || x >= COLS) return 0;
    if (x + maxw > COLS) maxw = COLS - x;
    char buf[4096];
    size_t o = 0;
    int cols = 0;
    const unsigned char *p = (const unsigned char *)text;
    while (*p && cols < maxw && o + 5 < sizeof buf) {
        int len = text_utf8_seqlen(p, strlen((const char *)p));
        if (len <= 1 || !s->utf8) {
            buf[o++] = (*p >= 0x20 && *p < 0x7F) ? (char)*p : '?';
            p += len > 0 ? len : 1;
        } else {
            memcpy(buf + o, p, (size_t)len);
            o += (size_t)len;
            p += len;
        }
        cols++;
    }
    buf[o] = '\0';
    attron(attr);
    mvaddstr(y, x, buf);
    attroff(attr);
    return cols;
}

/* One line of text wrapped at w columns (one per character, as draw_text counts them): its columns in *cols;
 * returns where the next line starts (the spaces at the break skipped), NULL after the last line. Breaks after the
 * last word that fits; a word longer than the line (a path) is cut where the line ends, unless defer (the line
 * starts after other text) lets it move whole to the next line: then *cols is 0. */
static const char *wrap_line(const char *p, int w, int defer, int *cols)
{
    const char *q = p, *brk = NULL;
    size_t left = strlen(p);
    int n = 0, brk_cols = 0;
    while (*q && n < w) {
        if (*q == ' ' && q > p && q[-1] != ' ') brk = q, brk_cols = n; /* after a word, not in an indentation */
        int len = text_utf8_seqlen((const unsigned char *)q, left);
        len = len > 0 ? len : 1;
        q += len;
        left -= (size_t)len;
        n++;
    }
    if (!*q) {
        *cols = n;
        return NULL;
    }
    if (*q == ' ') brk = q, brk_cols = n; /* the line ends right before a space */
    if (!brk || brk == p) {
        if (defer) {
            *cols = 0;
            return p;
        }
        brk = q, brk_cols = n;
    }
    *cols = brk_cols;
    while (*brk == ' ') brk++;
    return *brk ? brk : NULL;
}

int draw_wrapped(const struct screen *s, int y, int left, int w, int *x, const char *text, int attr)
{
    int down = 0;
    if (w <= 0) return 0;
    if (*x >= w) *x = 0, down++;
    for (const char *p = text; p && *p;) {
        int cols;
        const char *next = wrap_line(p, w - *x, *x > 0, &cols);
        if (s && cols > 0) draw_text(s, y + down, left + *x, cols, p, attr);
        *x += cols;
        if (!next) break;
        p = next;
        *x = 0;
        down++;
    }
    return down;
}

/* The columns of the word that starts at p. */
static int word_columns(const char *p)
{
    int n = 0;
    for (; *p && *p != ' '; p++) n += (*p & 0xC0) != 0x80;
    return n;
}

int draw_hanging(const struct screen *s, int y, int maxlines, int indent, const char *text, int attr)
{
    int lines = 0;
    if (COLS <= 0) return 1;
    if (indent > COLS / 2) indent = 0;
    for (const char *p = text; p && *p; lines++) {
        int left = lines ? indent : 0, cols;
        const char *next = wrap_line(p, COLS - left, 0, &cols);
        if (next && word_columns(next) > COLS - indent) { /* a path longer than any line: it goes on here */
            next = p;
            for (cols = 0; *next && cols < COLS - left; cols++) {
                int len = text_utf8_seqlen((const unsigned char *)next, strlen(next));
                next += len > 0 ? len : 1;
            }
            while (*next == ' ') next++;
            if (!*next) next = NULL;
        }
        if (s && lines < maxlines && cols > 0) draw_text(s, y + lines, left, cols, p, attr);
        p = next;
    }
    return lines ? lines : 1;
}

int draw_cut(const struct screen *s, int y, int skip, const char *text, int attr)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t left = strlen(text);
    int skipped = 0;
    for (; *p && skipped < skip; skipped++) { /* whole characters off to the left */
        int len = text_utf8_seqlen(p, left);
        len = len > 0 ? len : 1;
        p += len, left -= (size_t)len;
    }
    int chars = 0; /* one column each, as draw_text counts them */
    for (const unsigned char *q = p; *q; q++) chars += (*q & 0xC0) != 0x80;
    int cut = chars > COLS;
    int x = skipped > 0 && COLS > 2;
    if (x) draw_text(s, y, 0, 1, "<", attr | (int)A_BOLD);
    draw_text(s, y, x, COLS - x - cut, (const char *)p + (x && *p ? text_utf8_seqlen(p, left) : 0), attr);
    if (cut) draw_text(s, y, COLS - 1, 1, ">", attr | (int)A_BOLD);
    return cut || skipped > 0;
}

void draw_fill(int y, int x, int maxw, int attr)
{
    if (y < 0 || y >= LINES || x >= COLS || maxw <= 0) return;
    if (x + maxw > COLS) maxw = COLS - x;
    attron(attr);
    mvhline(y, x, ' ', maxw);
    attroff(attr);
}

void draw_hline(const struct screen *s, int y, int x, int w, int attr)
{
    if (y < 0 || y >= LINES || w <= 0) return;
    attron(attr);
    if (s->glyphs == GLYPHS_ASCII) mvhline(y, x, '-', w);
    else mvhline(y, x, ACS_HLINE, w);
    attroff(attr);
}
