#include "tui.h"

#include <curses.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "../util/clock.h"
#include "header_view.h"
#include "keymap.h"
#include "overlay_view.h"
#include "pane.h"
#include "dump_pane.h"
#include "info_pane.h"
#include "stack_pane.h"
#include "table_view.h"
#include "tui_state.h"

#define INITIAL_SAMPLE_SECONDS 0.2
#define STATUS_SECONDS 4.0

void tui_set_status(struct tui *t, int error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->status, sizeof t->status, fmt, ap);
    va_end(ap);
    t->status_error = error;
    t->status_until = clock_monotonic_seconds() + STATUS_SECONDS;
}

void tui_select_index(struct tui *t, long idx)
{
    long n = (long)t->mon.view.n;
    if (idx >= n) idx = n - 1;
    if (idx < 0) idx = 0;
    t->selected = n ? idx : -1;
    t->selected_pid = n ? t->mon.view.rows[idx].row->pid : 0;
    if (t->selected < t->top) t->top = t->selected;
    if (t->table_rows > 0 && t->selected >= t->top + t->table_rows) t->top = t->selected - t->table_rows + 1;
    if (t->top < 0) t->top = 0;
}

static void layout(struct tui *t)
{
    t->header_lines = header_view_height(t);
    t->table_y = t->header_lines + 2; /* a blank line, then the titles */
    if (LINES < 8) t->table_y = t->header_lines + 1;
    t->table_rows = LINES - t->table_y - 1;
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
    } else if (t->mode == MODE_PANE) {
        header_view_draw(t); /* the meters keep refreshing above the pane */
        pane_draw(t, t->table_y - 1, clock_monotonic_seconds());
        refresh();
        return;
    } else {
        header_view_draw(t);
        if (t->table_rows > 0 || t->table_y - 1 < LINES - 1) table_view_draw(t);
        if (t->mode == MODE_MENU) overlay_view_menu(t);
    }
    overlay_view_bottom(t, clock_monotonic_seconds());
    refresh();
}

static void save_settings(struct tui *t)
{
    if (!t->cfg->config_path) return;
    char err[256];
    if (settings_save(t->s, t->cfg->config_path, err, sizeof err) < 0) tui_set_status(t, 1, "%s", err);
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

/* Reads every pending key; returns the effects asked for. */
static unsigned read_keys(struct tui *t)
{
    unsigned effects = 0;
    wint_t wc;
    int rc;
    while ((rc = get_wch(&wc)) != ERR) {
        int key;
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
    if (t->pane.open && t->pane.owner->tick) t->pane.owner->tick(t); /* live panes follow the table's refresh */
    return 0;
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
    layout(t);
    resample(t);
    double next = clock_monotonic_seconds() + INITIAL_SAMPLE_SECONDS; /* first frame: a short sample, like top */
    int status = 0;
    while (!t->quit && !screen_quit_requested()) {
        double now = clock_monotonic_seconds();
        if (!t->paused && now >= next) {
            resample(t);
            next = now + t->s->delay;
        }
        draw(t);
        double wait = t->paused ? 1.0 : next - clock_monotonic_seconds();
        if (t->status[0] && t->status_until - now < wait) wait = t->status_until - now + 0.01;
        if (t->pane.busy && wait > 0.1) wait = 0.1; /* progress: the elapsed time ticks */
        if (dump_pane_fd(t) >= 0 && wait > 0.1) wait = 0.1;
        struct pollfd pfd[3] = {{STDIN_FILENO, POLLIN, 0}, {stack_pane_fd(t), POLLIN, 0}, {dump_pane_fd(t), POLLIN, 0}};
        int pr = poll(pfd, 3, wait > 0 ? (int)(wait * 1000) + 1 : 0);
        if (pr < 0 && errno != EINTR) {
            status = 1;
            break;
        }
        if (pr > 0 && (pfd[0].revents & (POLLHUP | POLLERR))) break; /* the terminal went away */
        if (pr > 0 && (pfd[1].revents & POLLIN)) stack_pane_done(t);
        if (pr > 0 && (pfd[2].revents & POLLIN)) dump_pane_done(t);
        unsigned fx = read_keys(t);
        if (fx & EFFECT_SAVE) save_settings(t);
        if (fx & EFFECT_RESAMPLE) {
            resample(t);
            next = clock_monotonic_seconds() + t->s->delay;
        } else if (fx & EFFECT_REBUILD) {
            monitor_rebuild(&t->mon, &t->vo);
            follow_selection(t);
        }
    }
    stack_pane_shutdown(t); /* a capture in flight detaches before the terminal is restored */
    info_pane_shutdown(t);
    dump_pane_shutdown(t); /* a dump in flight is cancelled: no partial file, the process runs on */
    text_lines_free(&t->pane.lines);
    screen_close();
    monitor_destroy(&t->mon);
    free(t);
    return status;
}
