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
