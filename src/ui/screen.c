#include "screen.h"

#include <curses.h>
#include <langinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>

#include "util/quit_signals.h"
#include <unistd.h>

static volatile sig_atomic_t quit_requested;
static volatile sig_atomic_t screen_is_open; /* signal handlers need to know whether to restore */

static void on_quit_signal(int sig)
{
    (void)sig;
    quit_requested = 1;
}

/* A crash must not leave the terminal raw: restore, then die of the same signal (as htop does). */
static void on_crash_signal(int sig)
{
    if (screen_is_open) {
        curs_set(1);
        endwin();
        screen_is_open = 0;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_handlers(void)
{
    quit_signals_install(on_quit_signal); /* poll() returns EINTR and the loop sees the request */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_crash_signal;
    sa.sa_flags = SA_RESETHAND;
    int crash[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof crash / sizeof crash[0]; i++) sigaction(crash[i], &sa, NULL);
}

int screen_quit_requested(void) { return quit_requested; }

static void setup_styles(struct screen *s)
{
    static const struct { short fg, bg; int extra; int mono; } def[STYLE_COUNT] = {
        [STYLE_NORMAL] = {-1, -1, 0, A_NORMAL},
        [STYLE_LABEL] = {COLOR_CYAN, -1, 0, A_BOLD},
        [STYLE_VALUE] = {-1, -1, A_BOLD, A_BOLD},
        [STYLE_BAR_USER] = {COLOR_GREEN, -1, 0, A_NORMAL},
        [STYLE_BAR_SYSTEM] = {COLOR_RED, -1, 0, A_BOLD},
        [STYLE_BAR_IOWAIT] = {COLOR_BLUE, -1, A_BOLD, A_DIM},
        [STYLE_BAR_STEAL] = {COLOR_CYAN, -1, 0, A_UNDERLINE},
        [STYLE_BAR_MEM] = {COLOR_GREEN, -1, 0, A_NORMAL},
        [STYLE_BAR_SWAP] = {COLOR_RED, -1, 0, A_NORMAL},
        [STYLE_TITLE] = {COLOR_BLACK, COLOR_GREEN, 0, A_REVERSE},
        [STYLE_TITLE_SORTED] = {COLOR_BLACK, COLOR_CYAN, 0, A_REVERSE | A_BOLD | A_UNDERLINE},
        [STYLE_SELECTED] = {COLOR_BLACK, COLOR_CYAN, 0, A_REVERSE},
        [STYLE_TAGGED] = {COLOR_YELLOW, -1, A_BOLD, A_BOLD | A_UNDERLINE},
        [STYLE_BASENAME] = {COLOR_CYAN, -1, A_BOLD, A_BOLD},
        [STYLE_KEY] = {-1, -1, A_BOLD, A_BOLD},
        [STYLE_KEY_LABEL] = {COLOR_BLACK, COLOR_CYAN, 0, A_REVERSE},
        [STYLE_ERROR] = {COLOR_RED, -1, A_BOLD, A_BOLD},
        [STYLE_DIM] = {COLOR_BLUE, -1, A_BOLD, A_DIM},
        [STYLE_RUNNING] = {COLOR_GREEN, -1, A_BOLD, A_BOLD},
        [STYLE_PANEL] = {COLOR_BLACK, COLOR_WHITE, 0, A_REVERSE},
    };
    for (int i = 0; i < STYLE_COUNT; i++) {
        if (s->color && i > 0) {
            init_pair((short)i, def[i].fg, def[i].bg);
            s->attrs[i] = COLOR_PAIR(i) | def[i].extra;
        } else {
            s->attrs[i] = def[i].mono;
        }
    }
}

/* Line drawing from the locale and terminfo, never from TERM names. */
static enum glyph_mode pick_glyphs(int utf8)
{
    if (utf8) return GLYPHS_UTF8;
    const char *acsc = tigetstr("acsc");
    if (acsc && acsc != (char *)-1 && *acsc) return GLYPHS_ACS;
    return GLYPHS_ASCII;
}

int screen_open(struct screen *s, int no_color)
{
    memset(s, 0, sizeof *s);
    const char *codeset = nl_langinfo(CODESET);
    s->utf8 = codeset && (strcmp(codeset, "UTF-8") == 0 || strcmp(codeset, "utf8") == 0);
    install_handlers();
    if (!newterm(NULL, stdout, stdin)) {
        fprintf(stderr, "diagtop: cannot drive this terminal (TERM=%s)\n", getenv("TERM") ? getenv("TERM") : "");
        return -1;
    }
    screen_is_open = 1;
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    mouseinterval(0);
    s->color = !no_color && has_colors();
    if (s->color) {
        start_color();
        use_default_colors();
    }
    s->glyphs = pick_glyphs(s->utf8);
    setup_styles(s);
    return 0;
}

void screen_close(void)
{
    if (!screen_is_open) return;
    screen_is_open = 0;
    curs_set(1);
    endwin();
}

int screen_attr(const struct screen *s, enum ui_style style) { return s->attrs[style]; }
