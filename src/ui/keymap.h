/* keymap: the key table of the process table screen (data: keys, label, help text, handler), and the handling of
 * menus and prompts. The help screen is generated from this table. */
#ifndef DIAGTOP_KEYMAP_H
#define DIAGTOP_KEYMAP_H
#include "tui_state.h"

#define KEY_FUNC_FLAG 0x40000000 /* function/arrow keys from curses, apart from typed characters */
#define KEYMAP_MAX_KEYS 3

struct key_binding {
    int keys[KEYMAP_MAX_KEYS]; /* typed characters, or curses codes | KEY_FUNC_FLAG; 0 ends */
    const char *label;         /* how help shows the keys */
    const char *help;
    unsigned (*handler)(struct tui *t, int key);
};

extern const struct key_binding keymap_table[];
extern const int keymap_count;

/* Handles one key in the current mode; returns enum tui_effect flags. */
unsigned keymap_dispatch(struct tui *t, int key);
#endif
