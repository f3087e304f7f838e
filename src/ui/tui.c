#include "tui.h"

#include <curses.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "util/clock.h"
#include "header_view.h"
#include "keymap.h"
#include "line_edit.h"
#include "message_view.h"
#include "overlay_view.h"
#include "pane.h"
#include "table_view.h"
#include "watch_pane.h"
#include "tui_state.h"

#define INITIAL_SAMPLE_SECONDS 0.2

static void layout(struct tui *t)
{
    t->header_lines = header_view_height(t);
    t->table_y = t->header_lines + 2; /* a blank line, then the titles */
    if (LINES < 8) t->table_y = t->header_lines + 1;
    int msg = message_view_height(t);
    t->bottom_lines = msg > 1 ? msg : 1; /* a long message takes lines from the bottom of the table while shown */
    t->table_rows = LINES - t->table_y - t->bottom_lines;
    if (t->table_rows < 0) t->table_rows = 0;
}

/* After the view changed: find the selected process again (it may have moved), keep it visible. */
static void follow_selection(struct tui *t)
{
    long idx = t->selected_pid ? procview_find(&t->mon.view, t->selected_pid) : -1;
    tui_select_index(t, idx >= 0 ? idx : t->selected);
}

static void fill_visible(struct tui *t)
{
    if (t->top < 0) t->top = 0;
    monitor_fill_rows(&t->mon, (size_t)t->top, (size_t)(t->table_rows > 0 ? t->table_rows : 0),
                      monitor_needs_of(t->s->cols, t->s->ncols));
}

static void draw(struct tui *t)
{
    erase();
    layout(t);
    tui_select_index(t, t->selected);
    fill_visible(t);
    if (t->mode == MODE_HELP) {
        overlay_view_help(t);
    } else if (t->mode == MODE_PANE && t->panes.front) {
        header_view_draw(t); /* the meters keep refreshing above the pane */
        pane_draw(t, t->table_y - 1, clock_monotonic_seconds());
        message_view_place_cursor(t);
        refresh();
        return;
    } else {
        header_view_draw(t);
        if (t->table_rows > 0 || t->table_y - 1 < LINES - 1) table_view_draw(t);
        if (t->mode == MODE_MENU) overlay_view_menu(t);
    }
    overlay_view_bottom(t);
    message_view_place_cursor(t);
    refresh();
}

static void save_settings(struct tui *t)
{
    char err[256];
    if (t->cfg->save_settings && t->cfg->save_settings(t->s, err, sizeof err) < 0) tui_set_status(t, 1, "%s", err);
}

/* A click on the titles sorts (again inverts); on a row selects it; the wheel scrolls. */
static unsigned handle_mouse(struct tui *t)
{
    MEVENT ev;
    if (getmouse(&ev) != OK || t->mode != MODE_TABLE) return EFFECT_NONE;
    if (ev.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
        tui_select_index(t, t->selected + ((ev.bstate & BUTTON4_PRESSED) ? -3 : 3));
        return EFFECT_NONE;
    }
    if (ev.y == t->table_y - 1) {
        int col = table_view_column_at(t, ev.x);
        if (col < 0) return EFFECT_NONE;
        enum column_id id = (enum column_id)col;
        if (t->vo.sort == id) t->vo.reverse = t->s->reverse = !t->vo.reverse;
        else {
            t->vo.sort = t->s->sort = id;
            t->vo.reverse = t->s->reverse = 0;
        }
        return EFFECT_REBUILD | EFFECT_SAVE;
    }
    if (ev.y >= t->table_y && ev.y < t->table_y + t->table_rows) tui_select_index(t, t->top + (ev.y - t->table_y));
    return EFFECT_NONE;
}

/* A line editor has the keys: a prompt that is typed into, or a pane's search, filter or file name. */
static int editing(const struct tui *t)
{
    if (t->mode == MODE_PROMPT) return t->prompt.kind != PROMPT_CONFIRM;
    return t->mode == MODE_PANE && t->panes.front && t->panes.front->input != PANE_KEYS;
}

/* Reads every pending key; returns the effects asked for, and in *any whether a key (or a resize) came. */
static unsigned read_keys(struct tui *t, int *any)
{
    unsigned effects = 0;
    wint_t wc;
    int rc;
    while ((rc = get_wch(&wc)) != ERR) {
        int key;
        *any = 1;
        if (rc == KEY_CODE_YES) {
            if (wc == KEY_RESIZE) continue; /* the next draw lays out for the new size */
            if (wc == KEY_MOUSE) {
                effects |= handle_mouse(t);
                continue;
            }
            key = KEY_FUNC_FLAG | (int)wc;
        } else {
            key = (int)wc;
        }
        if (key == 27 && editing(t)) { /* Alt-B/F/D come as Esc and the letter, together */
            wint_t next;
            int nrc = get_wch(&next);
            if (nrc == OK && next < 0x80 && strchr("bfdBFD", (int)next)) key = LINE_EDIT_ALT | (int)next;
            else if (nrc == KEY_CODE_YES) ungetch((int)next); /* Esc, then a key of its own */
            else if (nrc == OK) unget_wch(next);
        }
        effects |= keymap_dispatch(t, key);
        if (t->quit) break;
    }
    return effects;
}

static int resample(struct tui *t)
{
    char err[256];
    if (monitor_refresh(&t->mon, &t->vo, err, sizeof err) < 0) {
        tui_set_status(t, 1, "%s", err);
        return -1;
    }
    follow_selection(t);
    header_graph_add(&t->graph, t->mon.sys); /* out of memory: the graph mode stays blank */
    watch_pane_notice(t);
    struct pane *p = t->panes.front;
    if (p && p->cls->tick) p->cls->tick(t, p); /* live panes follow the table's refresh */
    return 0;
}

/* The loop's wake-ups: the next refresh, the status line's expiry, a busy pane's progress line; -1: none. */
static double next_deadline(const struct tui *t, double next_refresh, double last_draw)
{
    double due = t->paused ? -1 : next_refresh;
    if (t->status[0] && (due < 0 || t->status_until < due)) due = t->status_until;
    double progress = pane_next_redraw(t, last_draw);
    if (progress > 0 && (due < 0 || progress < due)) due = progress;
    return due;
}

/* Milliseconds until due for poll(): never negative (a past deadline is handled before sleeping), -1 forever. */
static int poll_timeout(double due, double now)
{
    if (due < 0) return -1;
    double ms = (due - now) * 1000.0;
    return ms <= 0 ? 0 : ms > 3600e3 ? 3600000 : (int)ms + 1;
}

/* Waits for the terminal, the panes' workers or the deadline; handles what came. Returns 1 when something needs
 * a redraw, 0 when nothing happened, -1 when the terminal went away, -2 when poll failed. */
static int wait_and_handle(struct tui *t, double due, double *next_refresh)
{
    struct pollfd pfd[1 + PANES_MAX];
    struct pane *owner[1 + PANES_MAX];
    int n = 0;
    pfd[n++] = (struct pollfd){STDIN_FILENO, POLLIN, 0};
    for (int i = 0; i < t->panes.n; i++) {
        struct pane *p = t->panes.items[i];
        int fd = pane_fd(p);
        if (fd < 0) continue;
        owner[n] = p;
        pfd[n++] = (struct pollfd){fd, POLLIN, 0};
    }
    int pr = poll(pfd, (nfds_t)n, poll_timeout(due, clock_monotonic_seconds()));
    if (pr < 0) return errno == EINTR ? 1 : -2; /* a signal: SIGWINCH (resize) or a quit request */
    if (pr > 0 && (pfd[0].revents & (POLLHUP | POLLERR))) return -1;
    int changed = 0;
    for (int i = 1; i < n; i++) {
        if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        pane_job_ready(t, owner[i]);
        changed = 1;
    }
    unsigned fx = read_keys(t, &changed);
    if (fx & EFFECT_SAVE) save_settings(t);
    if (fx & EFFECT_RESAMPLE) {
        resample(t);
        *next_refresh = clock_monotonic_seconds() + t->s->delay;
    } else if (fx & EFFECT_REBUILD) {
        monitor_rebuild(&t->mon, &t->vo);
        follow_selection(t);
    }
    return changed;
}

int tui_run(const struct tui_config *cfg)
{
    struct tui *t = calloc(1, sizeof *t); /* large (tags, menu): not on the stack */
    if (!t) return 1;
    t->cfg = cfg;
    t->s = cfg->settings;
    t->vo = *cfg->view;
    t->selected = -1;
    char err[256];
    if (monitor_init(&t->mon, err, sizeof err) < 0) {
        fprintf(stderr, "diagtop: %s\n", err);
        free(t);
        return 1;
    }
    if (screen_open(&t->scr, cfg->no_color) < 0) {
        monitor_destroy(&t->mon);
        free(t);
        return 1;
    }
    t->vo.ascii = t->scr.glyphs == GLYPHS_ASCII || t->scr.glyphs == GLYPHS_ACS;
    watch_set_init(&t->watches, NULL, NULL);
    layout(t);
    resample(t);
    /* The first frame comes after a short sample, like top; then one refresh per delay. The loop sleeps in poll()
     * until a key, a worker, the next refresh or a visible timer (status expiry, a progress line) is due, and
     * draws only when one of them changed something. */
    double next_refresh = clock_monotonic_seconds() + INITIAL_SAMPLE_SECONDS, last_draw = 0;
    int status = 0, redraw = 1;
    while (!t->quit && !screen_quit_requested()) {
        double now = clock_monotonic_seconds();
        if (!t->paused && now >= next_refresh) {
            resample(t);
            next_refresh = now + t->s->delay;
            redraw = 1;
        }
        if (t->status[0] && now >= t->status_until) { /* the message has been shown long enough */
            t->status[0] = '\0';
            redraw = 1;
        }
        double progress = pane_next_redraw(t, last_draw);
        if (progress > 0 && now >= progress) redraw = 1;
        if (redraw) {
            draw(t);
            last_draw = now;
            redraw = 0;
        }
        int r = wait_and_handle(t, next_deadline(t, next_refresh, last_draw), &next_refresh);
        if (r < 0) {
            status = r == -2;
            break;
        }
        redraw = r;
    }
    watch_set_shutdown(&t->watches); /* a watch's capture in flight is cancelled, its partial file removed */
    pane_destroy_all(t); /* work in flight ends first: a capture detaches, a dump removes its partial file */
    screen_close();
    monitor_destroy(&t->mon);
    header_graph_free(&t->graph);
    free(t);
    return status;
}
