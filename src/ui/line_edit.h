/* line_edit: the one line editor of every text prompt (the table's search, filter and delay, a pane's search,
 * filter and file name), with readline's keys and a cursor that moves within the line. */
#ifndef DIAGTOP_LINE_EDIT_H
#define DIAGTOP_LINE_EDIT_H
#include <stddef.h>

/* A key typed with Alt (Esc then the key, as terminals send it): LINE_EDIT_ALT | 'b'. */
#define LINE_EDIT_ALT 0x20000000

enum line_edit_result {
    LINE_EDIT_CHANGED, /* the text changed */
    LINE_EDIT_SAME,    /* an editing key that left the text as it was: a cursor move, Backspace on an empty line */
    LINE_EDIT_ACCEPT,  /* Enter, Ctrl-J, Ctrl-M */
    LINE_EDIT_CANCEL,  /* Esc, Ctrl-G */
    LINE_EDIT_OTHER,   /* not an editing key: the caller's (F3, Down), or ignored */
};

/* Applies one key (a typed character, a curses code | KEY_FUNC_FLAG, or a character | LINE_EDIT_ALT) to the UTF-8
 * text of size bytes, at the byte offset *cursor (kept on a character's start; NULL: at the end of the text).
 * As readline does: a printable character is inserted at the cursor when it fits; Left/Ctrl-B and Right/Ctrl-F move
 * one character, Alt-B and Alt-F one word (words are letters and digits), Home/Ctrl-A and End/Ctrl-E to the ends;
 * Backspace/Ctrl-H/DEL remove the character before the cursor, Delete/Ctrl-D the one under it; Ctrl-U removes
 * what is before the cursor (the whole line when it is at the end), Ctrl-K what is after it; Ctrl-W removes the
 * word before the cursor and the blanks after it (unix-word-rubout: words end at blanks), Alt-D the word after. */
enum line_edit_result line_edit_key(char *text, size_t size, size_t *cursor, int key);
/* The columns of text before byte offset at (one per character, as the screen draws them). */
int line_edit_columns(const char *text, size_t at);
#endif
