/* tui_state: the state of the interactive monitor shared by its key handlers, views and panes (ui/ only), and the
 * few functions on it they all use. tui_state.c calls no other file of ui/, so none of them calls another in a
 * circle to reach the state. */
#ifndef DIAGTOP_TUI_STATE_H
#define DIAGTOP_TUI_STATE_H
#include "model/monitor.h"
#include "model/watch_set.h"
#include "model/settings.h"
#include "header_graph.h"
#include "pane.h"
#include "screen.h"
#include "tui.h"

#define TUI_TEXT_MAX 256
#define TUI_STATUS_MAX 1024 /* a refusal with its reason and what would help */
#define TUI_MENU_MAX 64
#define TUI_MENU_LABEL 80 /* a column's title and its whole description */
#define TUI_MAX_TAGS 4096
#define KEY_FUNC_FLAG 0x40000000 /* function/arrow keys from curses, apart from typed characters */

enum tui_mode { MODE_TABLE, MODE_HELP, MODE_MENU, MODE_PROMPT, MODE_PANE };
enum menu_kind { MENU_SIGNAL, MENU_SORT, MENU_USER, MENU_COLUMNS };
enum prompt_kind { PROMPT_SEARCH, PROMPT_FILTER, PROMPT_DELAY, PROMPT_CONFIRM, PROMPT_WATCH };

struct menu {
    enum menu_kind kind;
    char title[64];
    int n, cursor, top;
    char labels[TUI_MENU_MAX][TUI_MENU_LABEL];
    long values[TUI_MENU_MAX];
    int checked[TUI_MENU_MAX]; /* columns menu: shown or not */
};

struct prompt {
    enum prompt_kind kind;
    char label[512];
    char text[TUI_TEXT_MAX];
    int pid; /* PROMPT_WATCH: the process the form arms a watch of */
    size_t cursor; /* byte offset of the cursor in text (line_edit) */
    char before[TUI_TEXT_MAX]; /* the text when the prompt opened: Esc in the filter prompt restores it */
    int failed; /* search found nothing */
    char answers[8];                                       /* PROMPT_CONFIRM: the keys that answer, "y", "ch" */
    unsigned (*on_answer)(struct tui *t, void *arg, int key); /* called with the answer key */
    void *on_answer_arg;
    char no_message[64];                                   /* the status after any other key */
};

struct tag {
    int pid;
    unsigned long long start_ticks;
};

/* What a key handler asks for after it changed the state. */
enum tui_effect { EFFECT_NONE = 0, EFFECT_REBUILD = 1, EFFECT_RESAMPLE = 2, EFFECT_SAVE = 4 };

struct tui {
    struct screen scr;
    struct monitor mon;
    const struct tui_config *cfg;
    struct settings *s;
    struct procview_opts vo;
    char filter[TUI_TEXT_MAX];
    int selected_pid; /* the selection follows the process, not the row index */
    long selected, top;
    int hscroll; /* characters of the command column scrolled off to the left (Left/Right) */
    struct tag tags[TUI_MAX_TAGS];
    int ntags;
    int paused, quit;
    enum tui_mode mode;
    struct menu menu;
    struct prompt prompt;
    int help_top;
    long search_origin; /* the row the search started from */
    int pending_signal; /* chosen in the signal menu, waiting for confirmation */
    char status[TUI_STATUS_MAX];
    int status_error;
    double status_until; /* when the status line goes back to the key bar */
    int bottom_lines;    /* lines under the table or pane: the key bar, or the message wrapped (message_view) */
    struct watch_set watches;   /* W's watches, running while the user browses (watch_pane) */
    unsigned long long watch_seen; /* captures and failures already announced */
    struct header_graph graph;  /* the meters' recent past, for their graph mode (g) */
    struct pane_list panes;     /* result panes over the table area (stack, details, dump...) */
    char pane_arg[TUI_TEXT_MAX]; /* what a pane hands the one it opens (w in the leak view: the class asked about) */
    int header_lines, table_y, table_rows; /* layout of the last draw, for the mouse */
    enum column_id drawn[COL_COUNT];     /* the columns that fit the width, in order */
    int ndrawn;
    int col_x[COL_COUNT + 1];            /* x where each drawn column starts */
};

/* The bottom message, shown instead of the key bar for a few seconds, longer when it is long, and wrapped onto as
 * many lines as it needs; error shows it in the error style. */
void tui_set_status(struct tui *t, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Moves the selection to view row idx (clamped) and keeps it on screen. */
void tui_select_index(struct tui *t, long idx);
/* The index of pid in t->tags, -1 when it is not tagged. */
int tui_tag_index(const struct tui *t, int pid);
int tui_is_tagged(const struct tui *t, int pid);
#endif
