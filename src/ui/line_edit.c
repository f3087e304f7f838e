#include "line_edit.h"

#include <curses.h>
#include <string.h>

#include "tui_state.h"

#define CTRL(c) ((c) & 0x1f)

static int is_cont(char c) { return (c & 0xC0) == 0x80; } /* a UTF-8 continuation byte */
static int is_blank(char c) { return c == ' ' || c == '\t'; }
/* readline's word characters for Alt-B/F/D: letters and digits; any non-ASCII character counts as a letter. */
static int is_word(char c)
{
    unsigned char u = (unsigned char)c;
    return u >= 0x80 || (u >= '0' && u <= '9') || ((u | 0x20) >= 'a' && (u | 0x20) <= 'z');
}

static size_t prev_char(const char *text, size_t at)
{
    if (at == 0) return 0;
    at--;
    while (at > 0 && is_cont(text[at])) at--;
    return at;
}

static size_t next_char(const char *text, size_t at)
{
    if (!text[at]) return at;
    at++;
    while (text[at] && is_cont(text[at])) at++;
    return at;
}

static size_t word_back(const char *text, size_t at)
{
    while (at > 0 && !is_word(text[at - 1])) at--;
    while (at > 0 && is_word(text[at - 1])) at--;
    return at;
}

static size_t word_forward(const char *text, size_t at)
{
    while (text[at] && !is_word(text[at])) at++;
    while (text[at] && is_word(text[at])) at++;
    return at;
}

/* Inserts key as UTF-8 at *at; 0 when it does not fit or is not a character. */
static int insert(char *text, size_t size, size_t *at, int key)
{
    char utf8[4];
    size_t n = 0;
    if (key < 0x80) utf8[n++] = (char)key;
    else if (key < 0x800) {
        utf8[n++] = (char)(0xC0 | (key >> 6));
        utf8[n++] = (char)(0x80 | (key & 0x3F));
    } else if (key < 0x10000) {
        if (key >= 0xD800 && key < 0xE000) return 0; /* a lone surrogate is no character */
        utf8[n++] = (char)(0xE0 | (key >> 12));
        utf8[n++] = (char)(0x80 | ((key >> 6) & 0x3F));
        utf8[n++] = (char)(0x80 | (key & 0x3F));
    } else if (key < 0x110000) {
        utf8[n++] = (char)(0xF0 | (key >> 18));
        utf8[n++] = (char)(0x80 | ((key >> 12) & 0x3F));
        utf8[n++] = (char)(0x80 | ((key >> 6) & 0x3F));
        utf8[n++] = (char)(0x80 | (key & 0x3F));
    } else return 0;
    size_t len = strlen(text);
    if (len + n + 1 > size) return 0;
    memmove(text + *at + n, text + *at, len - *at + 1);
    memcpy(text + *at, utf8, n);
    *at += n;
    return 1;
}

/* Removes the bytes [from, to) and leaves the cursor at from; whether that removed anything. */
static enum line_edit_result cut(char *text, size_t *at, size_t from, size_t to)
{
    *at = from;
    if (from >= to) return LINE_EDIT_SAME;
    memmove(text + from, text + to, strlen(text + to) + 1);
    return LINE_EDIT_CHANGED;
}

static enum line_edit_result move_to(size_t *at, size_t where)
{
    *at = where;
    return LINE_EDIT_SAME;
}

enum line_edit_result line_edit_key(char *text, size_t size, size_t *cursor, int key)
{
    size_t len = strlen(text), end = len;
    size_t *at = cursor ? cursor : &end;
    if (*at > len) *at = len;
    while (*at > 0 && is_cont(text[*at])) (*at)--; /* the text was set under it: back to a character's start */
    size_t c = *at;
    switch (key) {
    case '\n': case '\r': case KEY_FUNC_FLAG | KEY_ENTER: return LINE_EDIT_ACCEPT;
    case 27: case CTRL('g'): return LINE_EDIT_CANCEL;
    case KEY_FUNC_FLAG | KEY_LEFT: case CTRL('b'): return move_to(at, prev_char(text, c));
    case KEY_FUNC_FLAG | KEY_RIGHT: case CTRL('f'): return move_to(at, next_char(text, c));
    case KEY_FUNC_FLAG | KEY_HOME: case CTRL('a'): return move_to(at, 0);
    case KEY_FUNC_FLAG | KEY_END: case CTRL('e'): return move_to(at, len);
    case LINE_EDIT_ALT | 'b': case LINE_EDIT_ALT | 'B': return move_to(at, word_back(text, c));
    case LINE_EDIT_ALT | 'f': case LINE_EDIT_ALT | 'F': return move_to(at, word_forward(text, c));
    case KEY_FUNC_FLAG | KEY_BACKSPACE: case 127: case CTRL('h'): return cut(text, at, prev_char(text, c), c);
    case KEY_FUNC_FLAG | KEY_DC: case CTRL('d'): return cut(text, at, c, next_char(text, c));
    case LINE_EDIT_ALT | 'd': case LINE_EDIT_ALT | 'D': return cut(text, at, c, word_forward(text, c));
    case CTRL('u'): return cut(text, at, 0, c);
    case CTRL('k'): return cut(text, at, c, len);
    case CTRL('w'): {
        size_t from = c;
        while (from > 0 && is_blank(text[from - 1])) from--;
        while (from > 0 && !is_blank(text[from - 1])) from--;
        return cut(text, at, from, c);
    }
    }
    if ((key & (KEY_FUNC_FLAG | LINE_EDIT_ALT)) || key < 0x20 || (key >= 0x7F && key < 0xA0)) return LINE_EDIT_OTHER;
    return insert(text, size, at, key) ? LINE_EDIT_CHANGED : LINE_EDIT_SAME;
}

int line_edit_columns(const char *text, size_t at)
{
    int cols = 0;
    for (size_t i = 0; i < at && text[i]; i++) cols += !is_cont(text[i]);
    return cols;
}
