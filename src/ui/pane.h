/* pane: the result panes over the table area (stack, details, dump, gc, runtime profile, heap, cpu profile) behind
 * one interface. A pane class is a const table of functions, like htop's Panel classes; the event loop and the key
 * map know panes only through it. Every pane shows text lines that scroll, search with /, refresh with r, save
 * with S and close with Esc; while its class's work runs it shows a progress line and Esc cancels the work.
 *
 * The work runs as the pane's job (one worker at a time per pane): the class starts it with pane_start_job, the
 * loop waits on its descriptor and calls the class back when it ended, and closing the pane cancels it, waiting up
 * to PANE_CANCEL_SECONDS. A job that would not stop in that time is left running with the class's state (ready
 * comes when it ends); at exit it is left to the kernel, which detaches its tracees and ends it.
 *
 * Each class has one instance, created the first time it is opened and kept until diagtop exits, so that what it
 * learned of a process (unwind tables, symbols) serves the next opening. At most one pane is in front. */
#ifndef DIAGTOP_PANE_H
#define DIAGTOP_PANE_H
#include <stddef.h>

#include "render/text_lines.h"
#include "util/job.h"

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
/* How long closing a pane (or quitting) waits for its job to stop. A worker sees its cancel flag at its next step
 * and usually stops at once; this bounds one blocked in a system call or a slow write. Long enough for a dump to
 * remove its partial file and a capture to detach, so that a job is left running only when it is stuck. */
#define PANE_CANCEL_SECONDS 5.0

struct pane_class {
    const char *name;      /* what it shows, e.g. "stack" */
    /* The class's own keys for the bottom bar, "KEY label" items two spaces apart, each with an optional
     * "|brief" form for narrow screens (keybar.h); may be NULL. */
    const char *keys_help;
    size_t state_size;     /* bytes of the class's state, zeroed at creation, kept until exit */
    /* The key that opens it was pressed on this row (not NULL). */
    enum pane_open_result (*open)(struct tui *t, struct pane *p, const struct proc_row *row);
    unsigned (*key)(struct tui *t, struct pane *p, int key); /* effects, or PANE_KEY_UNHANDLED; may be NULL */
    unsigned (*reload)(struct tui *t, struct pane *p);       /* r: read or capture again; may be NULL */
    void (*tick)(struct tui *t, struct pane *p);             /* after each refresh of the table, in front; may be NULL */
    void (*filter)(struct tui *t, struct pane *p, const char *text); /* each keystroke of the \ prompt; may be NULL */
    void (*ready)(struct tui *t, struct pane *p);    /* the pane's job ended (it is joined); p->job is free again */
    void (*notified)(struct tui *t, struct pane *p); /* the job called job_notify (a partial result); may be NULL */
    void (*progress)(const struct pane *p, char *buf, size_t n); /* the busy line; NULL: the text of pane_set_busy */
    /* The pane closes or diagtop quits, after its job was cancelled: drops what is not kept for the next opening.
     * stopped: a job was in flight, so what it was filling is partial. Not called while a job that would not stop
     * still uses the state. May be NULL. */
    void (*closed)(struct pane *p, int stopped);
    /* Esc in a view of the pane's own (callers of a function, say): goes back and returns 1, the pane stays;
     * 0: Esc closes the pane. May be NULL. */
    int (*back)(struct tui *t, struct pane *p);
    /* Rows can be chosen: Up/Down/PgUp/PgDn/Home/End move a highlighted cursor line (p->cursor) within
     * [cursor_first, lines), and Enter goes to key() with the cursor on the row. */
    int has_cursor;
    /* Every line wraps, tables too (Left/Right are the class's own keys). Otherwise a line laid out in columns
     * (two blanks between fields) is cut at the width with a marker and Left/Right scroll it sideways, and any
     * other line (a message, a hint) wraps. */
    int wrap_lines;
    /* The title line fitted to width columns (a tab bar that scrolls, say); NULL: p->title, clipped. */
    void (*title_fit)(const struct pane *p, int width, char *buf, size_t n);
    /* At exit, after closed: frees what the state holds. Not called while a job that would not stop still uses the
     * state: it is then left as it is (diagtop is exiting). May be NULL. */
    void (*destroy)(struct pane *p);
};

enum pane_input { PANE_KEYS, PANE_SEARCH, PANE_SAVE, PANE_FILTER };

struct pane {
    const struct pane_class *cls;
    void *state;    /* the class's, cls->state_size bytes */
    struct job job; /* the class's worker (pane_start_job); job.running while it runs, job.cancel once asked to stop */
    char title[256];
    struct text_lines lines;
    long top;
    int hscroll; /* characters of the lines laid out in columns scrolled off to the left (Left/Right) */
    long match; /* line of the last search hit, -1 */
    long cursor, cursor_first; /* has_cursor: the chosen line, and the first line that can be chosen */
    char search[128];
    enum pane_input input;
    char input_text[256];
    size_t input_cursor; /* byte offset of the cursor in input_text (line_edit) */
    char input_before[256]; /* the filter when the \ key opened its prompt: Esc restores it */
    int busy;
    char busy_text[160];
    double busy_since;
    char save_name[160]; /* proposed file name for S */
    char proc_name[48];  /* the process's short name for titles ("python3 leak.py", collect/procname), set at open */
};

#define PANES_MAX 16

struct pane_list {
    struct pane *items[PANES_MAX]; /* one per class opened so far */
    int n;
    struct pane *front;            /* the one shown, NULL in the table */
};

/* The key for cls was pressed on row: creates the class's instance if needed, resets the view, names the process
 * (proc_name) and opens it. */
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
/* Starts run in p's job (not running), with the class's state as the job's arg. Returns 0 or -errno. */
int pane_start_job(struct pane *p, void (*run)(struct job *j));
/* Asks p's job to stop and waits up to PANE_CANCEL_SECONDS. Returns 0 when no job runs (any more), -ETIMEDOUT when
 * it is left running. Closing the pane does this; a class calls it only to retry before reusing its state. */
int pane_cancel_job(struct pane *p);
/* The descriptor the loop waits on for p: its job's while it runs, else -1. */
int pane_fd(const struct pane *p);
/* The loop saw pane_fd(p) readable: joins an ended job and calls the class's notified and ready. */
void pane_job_ready(struct tui *t, struct pane *p);
/* Opens the \ filter prompt (classes with a filter function). */
void pane_start_filter(struct pane *p, const char *current);

unsigned pane_key(struct tui *t, int key);
/* Draws the front pane from screen line y0 to the line above the bottom bar, and the bottom bar. */
void pane_draw(const struct tui *t, int y0, double now);
/* The earliest time the front pane needs drawing again on its own (its progress line ticks), or 0 for never. */
double pane_next_redraw(const struct tui *t, double last_draw);
#endif
