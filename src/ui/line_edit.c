#include "line_edit.h"

#include <curses.h>
#include <string.h>

#include "tui_state.h"

#define CTRL(c) ((c) & 0x1f)

/* Appends key as UTF-8; 0 when it does not fit or is not a character. */
static int append(char *text, size_t size, int key)
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
    memcpy(text + len, utf8, n);
    text[len + n] = '\0';
    return 1;
}

static int is_blank(char c) { return c == ' ' || c == '\t'; }

/* Truncates text to len bytes; whether that removed anything. */
static enum line_edit_result cut(char *text, size_t len)
{
    if (text[len] == '\0') return LINE_EDIT_SAME;
    text[len] = '\0';
    return LINE_EDIT_CHANGED;
}

enum line_edit_result line_edit_key(char *text, size_t size, int key)
{
    size_t len = strlen(text);
    switch (key) {
    case '\n': case '\r': case KEY_FUNC_FLAG | KEY_ENTER: return LINE_EDIT_ACCEPT;
    case 27: case CTRL('g'): return LINE_EDIT_CANCEL;
    case KEY_FUNC_FLAG | KEY_BACKSPACE: case 127: case CTRL('h'):
        while (len > 0 && (text[len - 1] & 0xC0) == 0x80) len--; /* a whole UTF-8 character */
        return cut(text, len > 0 ? len - 1 : 0);
    case CTRL('u'): return cut(text, 0);
    case CTRL('w'):
        while (len > 0 && is_blank(text[len - 1])) len--;
        while (len > 0 && !is_blank(text[len - 1])) len--;
        return cut(text, len);
    }
    if ((key & KEY_FUNC_FLAG) || key < 0x20 || (key >= 0x7F && key < 0xA0)) return LINE_EDIT_OTHER;
    return append(text, size, key) ? LINE_EDIT_CHANGED : LINE_EDIT_SAME;
}
