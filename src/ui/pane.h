/* pane: the result panes over the table area (stack, details, dump; later memstats, heap, profile) behind one
 * interface. A pane class is a const table of functions, like htop's Panel classes; the event loop and the key map
 * know panes only through it. Every pane shows text lines that scroll, search with /, refresh with r, save with S
 * and close with Esc; while its class's work runs it shows a progress line and Esc cancels the work.
 *
 * Each class has one instance, created the first time it is opened and kept until diagtop exits, so that what it
 * learned of a process (unwind tables, symbols) serves the next opening. At most one pane is in front. */
#ifndef DIAGTOP_PANE_H
#define DIAGTOP_PANE_H
#include <stddef.h>

#include "render/text_lines.h"

struct tui;
struct pane;
struct proc_row;

/* What a class's open says. */
enum pane_open_result {
    PANE_SHOWN,   /* in front now */
    PANE_PENDING, /* it shows itself later with pane_show (after a confirmation, say) */
    PANE_REFUSED, /* not for this process; the class set a status message */
};

#define PANE_KEY_UNHANDLED (~0u) /* a class's key function: not one of its keys */

struct pane_class {
    const char *name;      /* what it shows, e.g. "stack" */
    const char *keys_help; /* the class's own keys, for the bottom bar; may be NULL */
    size_t state_size;     /* bytes of the class's state, zeroed at creation, kept until exit */
    /* The key that opens it was pressed on this row (not NULL). */
    enum pane_open_result (*open)(struct tui *t, struct pane *p, const struct proc_row *row);
    unsigned (*key)(struct tui *t, struct pane *p, int key); /* effects, or PANE_KEY_UNHANDLED; may be NULL */
    unsigned (*reload)(struct tui *t, struct pane *p);       /* r: read or capture again; may be NULL */
    void (*tick)(struct tui *t, struct pane *p);             /* after each refresh of the table, in front; may be NULL */
    void (*filter)(struct tui *t, struct pane *p, const char *text); /* each keystroke of the \ prompt; may be NULL */
    /* A descriptor to wait on, or -1; NULL: the descriptor of the pane's job (struct pane's job), if any. */
    int (*fd)(const struct pane *p);
    void (*ready)(struct tui *t, struct pane *p);            /* that descriptor became readable */
    void (*progress)(const struct pane *p, char *buf, size_t n); /* the busy line; NULL: the text of pane_set_busy */
    void (*cancel)(struct tui *t, struct pane *p); /* the pane closes or diagtop quits: stop work in flight; may be NULL */
    /* Esc in a view of the pane's own (callers of a function, say): goes back and returns 1, the pane stays;
     * 0: Esc closes the pane. May be NULL. */
    int (*back)(struct tui *t, struct pane *p);
    /* Rows can be chosen: Up/Down/PgUp/PgDn/Home/End move a highlighted cursor line (p->cursor) within
     * [cursor_first, lines), and Enter goes to key() with the cursor on the row. */
    int has_cursor;
    /* At exit, after cancel: frees what the state holds. Returns -1 when a worker that would not stop still uses
     * the state: it is then left as it is (diagtop is exiting). May be NULL. */
    int (*destroy)(struct pane *p);
};

enum pane_input { PANE_KEYS, PANE_SEARCH, PANE_SAVE, PANE_FILTER };

struct job;

struct pane {
    const struct pane_class *cls;
    void *state;     /* the class's, cls->state_size bytes */
    struct job *job; /* the class's worker (in its state), set by open; the loop waits on its descriptor */
    char title[256];
    struct text_lines lines;
    long top;
    long match; /* line of the last search hit, -1 */
    long cursor, cursor_first; /* has_cursor: the chosen line, and the first line that can be chosen */
    char search[128];
    enum pane_input input;
    char input_text[256];
    int busy;
    char busy_text[160];
    double busy_since;
    char save_name[160]; /* proposed file name for S */
};

#define PANES_MAX 16

struct pane_list {
    struct pane *items[PANES_MAX]; /* one per class opened so far */
    int n;
    struct pane *front;            /* the one shown, NULL in the table */
};

/* The key for cls was pressed on row: creates the class's instance if needed, resets the view and opens it. */
unsigned pane_open(struct tui *t, const struct pane_class *cls, const struct proc_row *row);
/* Brings p to the front (a class whose open said PANE_PENDING). */
void pane_show(struct tui *t, struct pane *p);
/* Esc: cancels its work and goes back to the table. */
void pane_close(struct tui *t);
/* At exit: cancels every pane's work and frees every pane. */
void pane_destroy_all(struct tui *t);

/* Replaces the content (takes ownership of lines), keeping the scroll position when possible; ends busy. */
void pane_set_lines(struct pane *p, struct text_lines *lines);
void pane_set_busy(struct pane *p, const char *text, double now);
void pane_set_title(struct pane *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The descriptor the loop waits on for p: the class's fd, else its job's; -1 for none. */
int pane_fd(const struct pane *p);
/* Opens the \ filter prompt (classes with a filter function). */
void pane_start_filter(struct pane *p, const char *current);

unsigned pane_key(struct tui *t, int key);
/* Draws the front pane from screen line y0 to the line above the bottom bar, and the bottom bar. */
void pane_draw(const struct tui *t, int y0, double now);
/* The earliest time the front pane needs drawing again on its own (its progress line ticks), or 0 for never. */
double pane_next_redraw(const struct tui *t, double last_draw);
#endif
