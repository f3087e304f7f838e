/* keymap: the key table of the process table screen (data: keys, label, help text, handler), and the handling of
 * menus and prompts. The help screen is generated from this table. */
#ifndef DIAGTOP_KEYMAP_H
#define DIAGTOP_KEYMAP_H
#include "pane.h"
#include "tui_state.h"

#define KEYMAP_MAX_KEYS 3

struct key_binding {
    int keys[KEYMAP_MAX_KEYS]; /* typed characters, or curses codes | KEY_FUNC_FLAG; 0 ends */
    const char *label;         /* how help shows the keys */
    const char *help;
    unsigned (*handler)(struct tui *t, int key);
    const struct pane_class *pane; /* instead of a handler: the key opens this pane for the selected row */
};

extern const struct key_binding keymap_table[];
extern const int keymap_count;

/* Asks a question in the bottom line that one of the keys in answers (lower case; upper case counts too) answers:
 * on_answer(t, arg, key) is called with it and its effects returned; any other key shows no_message. A y/N
 * question has answers "y". */
void keymap_ask(struct tui *t, const char *question, const char *answers,
                unsigned (*on_answer)(struct tui *t, void *arg, int key), void *arg, const char *no_message);
/* Handles one key in the current mode; returns enum tui_effect flags. */
unsigned keymap_dispatch(struct tui *t, int key);
#endif
