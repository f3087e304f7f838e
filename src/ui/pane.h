/* pane: a scrollable, searchable result pane over the table area (stack now; details, memstats, heap, profile
 * later). It shows text lines, scrolls, searches with /, refreshes with r, saves its text with S and closes with
 * Esc. While its owner's job runs it shows progress and Esc cancels the job. */
#ifndef DIAGTOP_PANE_H
#define DIAGTOP_PANE_H
#include <stddef.h>

#include "../render/text_lines.h"

struct tui;

enum pane_input { PANE_KEYS, PANE_SEARCH, PANE_SAVE, PANE_FILTER };

struct pane_owner { /* what the pane's content comes from */
    const char *keys_help;               /* extra keys shown in the bottom bar, e.g. "g group" */
    unsigned (*recapture)(struct tui *t); /* r: start a new capture */
    unsigned (*key)(struct tui *t, int key); /* owner-specific keys; returns effects, or ~0u if not handled */
    void (*close)(struct tui *t);        /* the pane closes: stop work in flight, free what it needs no more */
    void (*tick)(struct tui *t);         /* after each refresh of the table (live panes), or NULL */
    void (*filter)(struct tui *t, const char *text); /* \ filter prompt, on each keystroke, or NULL */
    void (*progress_text)(const struct tui *t, char *buf, size_t n); /* the busy line, or NULL for busy_text */
};

struct pane {
    int open;
    const struct pane_owner *owner;
    char title[160];
    struct text_lines lines;
    long top;
    long match; /* line of the last search hit, -1 */
    char search[128];
    enum pane_input input;
    char input_text[256];
    int busy;
    char busy_text[160];
    double busy_since;
    char save_name[160]; /* proposed file name for S */
};

void pane_open(struct tui *t, const struct pane_owner *owner, const char *title, const char *save_name);
void pane_close(struct tui *t);
/* Replaces the content (takes ownership of lines), keeping the scroll position when possible. */
void pane_set_lines(struct tui *t, struct text_lines *lines);
void pane_set_busy(struct tui *t, const char *text);
unsigned pane_key(struct tui *t, int key);
/* Opens the filter prompt (owners with a filter callback). */
void pane_start_filter(struct tui *t, const char *current);
/* Draws the pane from screen line y0 to the line above the bottom bar, and the bottom bar. */
void pane_draw(const struct tui *t, int y0, double now);
#endif
