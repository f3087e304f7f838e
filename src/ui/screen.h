/* screen: curses set-up and restore, colours and attributes, line-drawing mode, and the signal handlers that
 * guarantee the terminal is restored (quit signals become a request; crash signals restore, then re-raise). */
#ifndef DIAGTOP_SCREEN_H
#define DIAGTOP_SCREEN_H
#include <signal.h>

enum ui_style {
    STYLE_NORMAL, STYLE_LABEL, STYLE_VALUE, STYLE_BAR_USER, STYLE_BAR_SYSTEM, STYLE_BAR_IOWAIT, STYLE_BAR_STEAL,
    STYLE_BAR_MEM, STYLE_BAR_SWAP, STYLE_TITLE, STYLE_TITLE_SORTED, STYLE_SELECTED, STYLE_TAGGED, STYLE_BASENAME,
    STYLE_KEY, STYLE_KEY_LABEL, STYLE_ERROR, STYLE_DIM, STYLE_RUNNING, STYLE_PANEL, STYLE_COUNT
};

enum glyph_mode { GLYPHS_UTF8, GLYPHS_ACS, GLYPHS_ASCII };

struct screen {
    int color;
    int utf8; /* the locale's charset is UTF-8: non-ASCII text can be shown */
    enum glyph_mode glyphs;
    int attrs[STYLE_COUNT];
};

/* Initializes curses. Returns 0, or -1 if the terminal cannot be driven (message printed). */
int screen_open(struct screen *s, int no_color);
void screen_close(void);
/* Set by SIGINT/SIGTERM/SIGHUP: the main loop quits cleanly. */
int screen_quit_requested(void);
int screen_attr(const struct screen *s, enum ui_style style);
#endif
