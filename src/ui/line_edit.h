/* line_edit: the one line editor of every text prompt (the table's search, filter and delay, a pane's search,
 * filter and file name), with readline's keys for a cursor that stays at the end of the line. */
#ifndef DIAGTOP_LINE_EDIT_H
#define DIAGTOP_LINE_EDIT_H
#include <stddef.h>

enum line_edit_result {
    LINE_EDIT_CHANGED, /* the text changed */
    LINE_EDIT_SAME,    /* an editing key that changed nothing (Backspace on an empty line) */
    LINE_EDIT_ACCEPT,  /* Enter, Ctrl-J, Ctrl-M */
    LINE_EDIT_CANCEL,  /* Esc, Ctrl-G */
    LINE_EDIT_OTHER,   /* not an editing key: the caller's (F3, Down), or ignored */
};

/* Applies one key (a typed character, or a curses code | KEY_FUNC_FLAG) to the UTF-8 text of size bytes:
 * a printable character is appended when it fits; Backspace, Ctrl-H and DEL remove the last character; Ctrl-U
 * removes the whole line (the cursor is at its end); Ctrl-W removes the last word and the blanks after it
 * (readline's unix-word-rubout: words end at blanks). */
enum line_edit_result line_edit_key(char *text, size_t size, int key);
#endif
