#include "keymap.h"

#include <curses.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/capture/capture.h"
#include "actions/target/process_control.h"
#include "util/text.h"
#include "cpu_pane.h"
#include "dump_pane.h"
#include "heap_pane.h"
#include "info_pane.h"
#include "line_edit.h"
#include "pane.h"
#include "runtime_pane.h"
#include "stack_pane.h"
#include "watch_pane.h"

#define F(k) (KEY_FUNC_FLAG | (k))
#define CTRL(c) ((c) & 0x1f)

/* ---- selection and movement ---- */

static long page_rows(const struct tui *t) { return t->table_rows > 1 ? t->table_rows - 1 : 1; }

static unsigned key_move(struct tui *t, int key)
{
    long n = (long)t->mon.view.n;
    long to = t->selected;
    switch (key) {
    case F(KEY_UP): to--; break;
    case F(KEY_DOWN): to++; break;
    case F(KEY_PPAGE): to -= page_rows(t); break;
    case F(KEY_NPAGE): to += page_rows(t); break;
    case F(KEY_HOME): to = 0; break;
    case F(KEY_END): to = n - 1; break;
    }
    tui_select_index(t, to);
    return EFFECT_NONE;
}

/* Left/Right: scroll long command lines sideways. */
static unsigned key_hscroll(struct tui *t, int key)
{
    t->hscroll += key == F(KEY_RIGHT) ? 8 : -8;
    if (t->hscroll < 0) t->hscroll = 0;
    if (t->hscroll > 4000) t->hscroll = 4000;
    return EFFECT_NONE;
}

/* ---- sorting ---- */

static unsigned sort_by(struct tui *t, enum column_id id)
{
    if (t->vo.sort == id) return EFFECT_NONE;
    t->vo.sort = t->s->sort = id;
    t->vo.reverse = t->s->reverse = 0;
    tui_set_status(t, 0, "sorted by %s", columns_table[id].title);
    return EFFECT_REBUILD | EFFECT_SAVE;
}

static unsigned key_sort_cpu(struct tui *t, int key) { (void)key; return sort_by(t, COL_CPU); }
static unsigned key_sort_mem(struct tui *t, int key) { (void)key; return sort_by(t, COL_RES); }
static unsigned key_sort_time(struct tui *t, int key) { (void)key; return sort_by(t, COL_TIME); }
static unsigned key_sort_pid(struct tui *t, int key) { (void)key; return sort_by(t, COL_PID); }

static unsigned key_invert(struct tui *t, int key)
{
    (void)key;
    t->vo.reverse = t->s->reverse = !t->vo.reverse;
    return EFFECT_REBUILD | EFFECT_SAVE;
}

/* < and >: the previous or next shown column. */
static unsigned key_sort_step(struct tui *t, int key)
{
    int cur = 0;
    for (int i = 0; i < t->s->ncols; i++)
        if (t->s->cols[i] == t->vo.sort) cur = i;
    int next = key == '<' || key == ',' ? cur - 1 : cur + 1;
    if (next < 0) next = t->s->ncols - 1;
    if (next >= t->s->ncols) next = 0;
    return sort_by(t, t->s->cols[next]);
}

static void menu_open(struct tui *t, enum menu_kind kind, const char *title)
{
    memset(&t->menu, 0, sizeof t->menu);
    t->menu.kind = kind;
    snprintf(t->menu.title, sizeof t->menu.title, "%s", title);
    t->mode = MODE_MENU;
}

static void menu_add(struct menu *m, const char *label, long value, int checked)
{
    if (m->n >= TUI_MENU_MAX) return;
    snprintf(m->labels[m->n], sizeof m->labels[m->n], "%.*s", TUI_MENU_LABEL - 1, label);
    m->values[m->n] = value;
    m->checked[m->n] = checked;
    m->n++;
}

/* A column as a menu line: its title, then what it shows; IO% says when this kernel cannot fill it. */
static void menu_add_column(struct menu *m, const struct column *c, int checked, int delayacct)
{
    char label[TUI_MENU_LABEL];
    snprintf(label, sizeof label, "%-8s %s", c->title,
             c->id == COL_IO_WAIT && !delayacct ? "off here (shows -): needs sysctl kernel.task_delayacct=1"
                                                : c->description);
    menu_add(m, label, c->id, checked);
}

static unsigned key_sort_menu(struct tui *t, int key)
{
    (void)key;
    menu_open(t, MENU_SORT, "Sort by");
    int delayacct = proctable_delayacct(t->mon.table);
    for (int i = 0; i < COL_COUNT; i++) {
        menu_add_column(&t->menu, &columns_table[i], 0, delayacct);
        if ((int)t->vo.sort == i) t->menu.cursor = i;
    }
    return EFFECT_NONE;
}

/* ---- search, filter, user ---- */

static void prompt_open(struct tui *t, enum prompt_kind kind, const char *label, const char *initial)
{
    memset(&t->prompt, 0, sizeof t->prompt);
    t->prompt.kind = kind;
    snprintf(t->prompt.label, sizeof t->prompt.label, "%s", label);
    snprintf(t->prompt.text, sizeof t->prompt.text, "%s", initial ? initial : "");
    snprintf(t->prompt.before, sizeof t->prompt.before, "%s", t->prompt.text);
    t->prompt.cursor = strlen(t->prompt.text); /* at the end, to go on typing */
    t->mode = MODE_PROMPT;
}

void keymap_ask(struct tui *t, const char *question, const char *answers,
                unsigned (*on_answer)(struct tui *t, void *arg, int key), void *arg, const char *no_message)
{
    prompt_open(t, PROMPT_CONFIRM, question, "");
    snprintf(t->prompt.answers, sizeof t->prompt.answers, "%s", answers);
    t->prompt.on_answer = on_answer;
    t->prompt.on_answer_arg = arg;
    snprintf(t->prompt.no_message, sizeof t->prompt.no_message, "%s", no_message);
}

static unsigned key_search(struct tui *t, int key)
{
    (void)key;
    t->search_origin = t->selected;
    prompt_open(t, PROMPT_SEARCH, "Search: ", "");
    return EFFECT_NONE;
}

static unsigned key_filter(struct tui *t, int key)
{
    (void)key;
    prompt_open(t, PROMPT_FILTER, "Filter: ", t->filter);
    return EFFECT_NONE;
}

static int compare_names(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

static unsigned key_user_menu(struct tui *t, int key)
{
    (void)key;
    menu_open(t, MENU_USER, "Show processes of");
    menu_add(&t->menu, "All users", -1, 0);
    /* The users that own a process right now, sorted by name. */
    char names[TUI_MENU_MAX][64];
    uid_t uids[TUI_MENU_MAX];
    int n = 0;
    size_t nrows;
    struct proc_row **rows = proctable_rows(t->mon.table, &nrows);
    for (size_t i = 0; i < nrows && n < TUI_MENU_MAX - 1; i++) {
        if (!rows[i]->uid_known) continue;
        int seen = 0;
        for (int k = 0; k < n && !seen; k++) seen = uids[k] == rows[i]->uid;
        if (seen) continue;
        uids[n] = rows[i]->uid;
        snprintf(names[n], sizeof names[n], "%s", users_name(t->mon.users, rows[i]->uid));
        n++;
    }
    qsort(names, (size_t)n, sizeof names[0], compare_names);
    for (int i = 0; i < n; i++) {
        uid_t uid;
        if (users_lookup(names[i], &uid) == 0) menu_add(&t->menu, names[i], (long)uid, 0);
        if (t->vo.user_set && uid == t->vo.user) t->menu.cursor = t->menu.n - 1;
    }
    return EFFECT_NONE;
}

/* ---- view toggles ---- */

static unsigned key_tree(struct tui *t, int key)
{
    (void)key;
    t->vo.tree = t->s->tree = !t->vo.tree;
    return EFFECT_REBUILD | EFFECT_SAVE;
}

static unsigned key_threads(struct tui *t, int key)
{
    (void)key;
    t->vo.show_threads = t->s->show_threads = !t->vo.show_threads;
    tui_set_status(t, 0, "threads %s", t->vo.show_threads ? "shown" : "hidden");
    return EFFECT_RESAMPLE | EFFECT_SAVE;
}

static unsigned key_pause(struct tui *t, int key)
{
    (void)key;
    t->paused = !t->paused;
    tui_set_status(t, 0, "updates %s", t->paused ? "paused (Z resumes)" : "resumed");
    return t->paused ? EFFECT_NONE : EFFECT_RESAMPLE;
}

static unsigned key_delay(struct tui *t, int key)
{
    (void)key;
    char cur[32];
    snprintf(cur, sizeof cur, "%g", t->s->delay);
    prompt_open(t, PROMPT_DELAY, "Delay in seconds: ", cur);
    return EFFECT_NONE;
}

/* ---- tags, signals, nice ---- */

static struct proc_row *selected_row(struct tui *t)
{
    return t->selected >= 0 && t->selected < (long)t->mon.view.n ? t->mon.view.rows[t->selected].row : NULL;
}

static unsigned key_tag(struct tui *t, int key)
{
    (void)key;
    struct proc_row *r = selected_row(t);
    if (!r) return EFFECT_NONE;
    int i = tui_tag_index(t, r->pid);
    if (i >= 0) t->tags[i] = t->tags[--t->ntags];
    else if (t->ntags < TUI_MAX_TAGS) t->tags[t->ntags++] = (struct tag){r->pid, r->start_ticks};
    tui_select_index(t, t->selected + 1);
    return EFFECT_NONE;
}

static unsigned key_untag_all(struct tui *t, int key)
{
    (void)key;
    t->ntags = 0;
    return EFFECT_NONE;
}

/* The processes an action applies to: the tagged ones, else the selected one. */
static int action_targets(struct tui *t, struct tag *out, int max)
{
    if (t->ntags > 0) {
        int n = t->ntags < max ? t->ntags : max;
        memcpy(out, t->tags, (size_t)n * sizeof *out);
        return n;
    }
    struct proc_row *r = selected_row(t);
    if (!r || max < 1) return 0;
    out[0] = (struct tag){r->pid, r->start_ticks};
    return 1;
}

static unsigned key_signal_menu(struct tui *t, int key)
{
    (void)key;
    if (!selected_row(t) && t->ntags == 0) return EFFECT_NONE;
    menu_open(t, MENU_SIGNAL, t->ntags ? "Send signal to tagged processes" : "Send signal");
    for (int sig = 1; sig < 32; sig++) {
        const char *abbrev = sigabbrev_np(sig);
        if (!abbrev) continue;
        char label[64];
        snprintf(label, sizeof label, "%2d SIG%s", sig, abbrev);
        menu_add(&t->menu, label, sig, 0);
        if (sig == SIGTERM) t->menu.cursor = t->menu.n - 1;
    }
    return EFFECT_NONE;
}

/* Applies op (process_signal or process_renice) to the action's targets; returns how many succeeded, with the
 * last error in err. */
static int apply_to_targets(struct tui *t, int (*op)(int, unsigned long long, int, char *, size_t), int arg,
                            int *n, char *err, size_t errlen)
{
    struct tag targets[TUI_MAX_TAGS];
    int ok = 0;
    *n = action_targets(t, targets, TUI_MAX_TAGS);
    for (int i = 0; i < *n; i++)
        if (op(targets[i].pid, targets[i].start_ticks, arg, err, errlen) == 0) ok++;
    return ok;
}

static void send_signal_now(struct tui *t, int sig)
{
    char err[256] = "";
    int n, ok = apply_to_targets(t, process_signal, sig, &n, err, sizeof err);
    if (ok == n) tui_set_status(t, 0, "sent SIG%s to %d process%s", sigabbrev_np(sig), n, n == 1 ? "" : "es");
    else tui_set_status(t, 1, "%s (%d of %d sent)", err, ok, n);
    if (ok) t->ntags = 0;
}

static unsigned confirm_signal(struct tui *t, void *arg, int key)
{
    (void)arg, (void)key;
    send_signal_now(t, t->pending_signal);
    return EFFECT_RESAMPLE;
}

static unsigned renice(struct tui *t, int delta)
{
    char err[256] = "";
    int n, ok = apply_to_targets(t, process_renice, delta, &n, err, sizeof err);
    if (n && ok == n) tui_set_status(t, 0, "nice %+d applied to %d process%s", delta, n, n == 1 ? "" : "es");
    else if (n) tui_set_status(t, 1, "%s", err);
    return EFFECT_RESAMPLE;
}

static unsigned key_nice_minus(struct tui *t, int key) { (void)key; return renice(t, -1); }
static unsigned key_nice_plus(struct tui *t, int key) { (void)key; return renice(t, +1); }

/* ---- columns, help, quit, reserved actions ---- */

static void columns_menu_fill(struct tui *t)
{
    int cursor = t->menu.cursor;
    menu_open(t, MENU_COLUMNS, "Columns: Space shows/hides, - and + move, Esc done");
    int delayacct = proctable_delayacct(t->mon.table);
    for (int i = 0; i < t->s->ncols; i++) menu_add_column(&t->menu, &columns_table[t->s->cols[i]], 1, delayacct);
    for (int id = 0; id < COL_COUNT; id++) {
        int shown = 0;
        for (int i = 0; i < t->s->ncols; i++) shown |= (int)t->s->cols[i] == id;
        if (!shown) menu_add_column(&t->menu, &columns_table[id], 0, delayacct);
    }
    t->menu.cursor = cursor < t->menu.n ? cursor : 0;
}

static unsigned key_columns(struct tui *t, int key)
{
    (void)key;
    t->menu.cursor = 0;
    columns_menu_fill(t);
    return EFFECT_NONE;
}

static unsigned key_help(struct tui *t, int key)
{
    (void)key;
    t->mode = MODE_HELP;
    t->help_top = 0;
    return EFFECT_NONE;
}

static unsigned confirm_quit(struct tui *t, void *arg, int key)
{
    (void)arg, (void)key;
    t->quit = 1;
    return EFFECT_NONE;
}

/* q: at once, unless watches are armed: they end with diagtop, so it asks first. */
static unsigned key_quit(struct tui *t, int key)
{
    int armed = watch_pane_armed(t);
    if (!armed) return confirm_quit(t, NULL, key);
    char question[128];
    snprintf(question, sizeof question, "%d watch%s armed: quit and disarm %s? [y/N] ", armed,
             armed == 1 ? " is" : "es are", armed == 1 ? "it" : "them");
    keymap_ask(t, question, "y", confirm_quit, NULL, "still watching (w lists the watches)");
    return EFFECT_NONE;
}

/* W: the form that arms a watch of the selected process. */
static unsigned key_watch(struct tui *t, int key)
{
    (void)key;
    struct proc_row *r = selected_row(t);
    if (!r) return EFFECT_NONE;
    if (r->is_kernel) {
        tui_set_status(t, 1, "a kernel thread is not watched: it has no memory to dump");
        return EFFECT_NONE;
    }
    char label[512];
    watch_pane_form_label(label, sizeof label, r->tgid, r->comm);
    prompt_open(t, PROMPT_WATCH, label, WATCH_FORM_DEFAULT);
    t->prompt.pid = r->tgid;
    return EFFECT_NONE;
}

static unsigned key_redraw(struct tui *t, int key)
{
    (void)t;
    (void)key;
    clearok(curscr, TRUE);
    return EFFECT_NONE;
}

/* C: the runtime's own profiler where there is one (Go's pprof; Java's JFR, live in the sampler's pane), else
 * diagtop's live sampler. */
static unsigned key_profile(struct tui *t, int key)
{
    (void)key;
    struct proc_row *r = selected_row(t);
    if (!r) return EFFECT_NONE;
    struct capture_profile_options o;
    capture_profile_options_default(&o);
    o.want_live = 1; /* a JVM's JFR comes live: into the sampler's pane, with its views */
    struct capture_who w = {.from = CAPTURE_NATIVE};
    if (!r->is_kernel) capture_profile_who(r->tgid, &o, &w);
    return pane_open(t, w.from == CAPTURE_RUNTIME && !w.is_report ? &profile_pane_class : &cpu_pane_class, r);
}

/* g: the header's meters as bars or as graphs of their recent past (kept in both modes). */
static unsigned key_meters(struct tui *t, int key)
{
    (void)key;
    t->s->meters_graph = !t->s->meters_graph;
    tui_set_status(t, 0, "header meters: %s", t->s->meters_graph ? "graphs of the last minutes" : "bars");
    return EFFECT_SAVE;
}

const struct key_binding keymap_table[] = {
    {{F(KEY_UP), F(KEY_DOWN)}, "Up Down", "move the selection", key_move, NULL},
    {{F(KEY_PPAGE), F(KEY_NPAGE)}, "PgUp PgDn", "move by a page", key_move, NULL},
    {{F(KEY_HOME), F(KEY_END)}, "Home End", "first / last row", key_move, NULL},
    {{F(KEY_LEFT), F(KEY_RIGHT)}, "Left Right", "scroll long command lines sideways", key_hscroll, NULL},
    {{'P'}, "P", "sort by CPU%", key_sort_cpu, NULL},
    {{'M'}, "M", "sort by memory (RES)", key_sort_mem, NULL},
    {{'T'}, "T", "sort by CPU time", key_sort_time, NULL},
    {{'N'}, "N", "sort by PID", key_sort_pid, NULL},
    {{F(KEY_F(6))}, "F6", "choose the sort column", key_sort_menu, NULL},
    {{'<', '>'}, "< >", "sort by the previous / next column", key_sort_step, NULL},
    {{'I'}, "I", "invert the sort order", key_invert, NULL},
    {{F(KEY_F(3)), '/'}, "F3 /", "search (incremental; F3 or Down for the next match)", key_search, NULL},
    {{F(KEY_F(4)), '\\'}, "F4 \\", "filter rows by command (in the prompt Ctrl-U clears, Esc cancels)", key_filter,
     NULL},
    {{'u'}, "u", "show one user's processes", key_user_menu, NULL},
    {{F(KEY_F(5)), 't'}, "F5 t", "tree view", key_tree, NULL},
    {{'H'}, "H", "show / hide threads", key_threads, NULL},
    {{' '}, "Space", "tag the process (signals and nice apply to tagged ones)", key_tag, NULL},
    {{'U'}, "U", "untag all", key_untag_all, NULL},
    {{F(KEY_F(9)), 'k'}, "F9 k", "send a signal (default SIGTERM, asks to confirm)", key_signal_menu, NULL},
    {{F(KEY_F(7)), ']'}, "F7 ]", "nice - (higher priority; needs privilege)", key_nice_minus, NULL},
    {{F(KEY_F(8)), '['}, "F8 [", "nice + (lower priority)", key_nice_plus, NULL},
    {{F(KEY_F(2))}, "F2", "choose and order the columns", key_columns, NULL},
    {{'d'}, "d", "set the refresh delay (decimal seconds)", key_delay, NULL},
    {{'Z'}, "Z", "pause / resume updates", key_pause, NULL},
    {{'g'}, "g", "header meters: bars / graphs of their recent past", key_meters, NULL},
    {{F('\n'), '\n', '\r'}, "Enter", "process details: general, memory, modules, fds, threads, env, I/O, history", NULL,
     &info_pane_class},
    {{'b'}, "b", "stack of every thread of the process (pane: / search, r refresh, S save, g group, Esc)", NULL,
     &stack_pane_class},
    {{'D'}, "D", "write a core dump of the process (asks first; Esc in the pane cancels)", NULL, &dump_pane_class},
    {{'G'}, "G", "ask the runtime for a GC (Go: gops; Java: HotSpot attach, asks first naming the heap)", NULL, &gc_pane_class},
    {{'C'}, "C", "CPU profile: live top functions by diagtop's sampler (Go: the runtime's 30 s pprof; Java: JFR, live)",
     key_profile, NULL},
    {{'A'}, "A", "heap by class or allocation site, growth since the first snapshot (the leak view)", NULL,
     &heap_pane_class},
    {{'W'}, "W", "watch the process: when a condition holds (cpu, rss, rss-growth...), dump, stack or profile it",
     key_watch, NULL},
    {{'w'}, "w", "the watches armed with W and their events (x disarms)", NULL, &watch_pane_class},
    {{CTRL('l')}, "Ctrl-L", "redraw the screen", key_redraw, NULL},
    {{F(KEY_F(1)), '?', 'h'}, "F1 ? h", "this help", key_help, NULL},
    {{F(KEY_F(10)), 'q'}, "F10 q", "quit", key_quit, NULL},
};
const int keymap_count = (int)(sizeof keymap_table / sizeof keymap_table[0]);

/* ---- modes ---- */

/* A key that opens a pane applies to the selected row. */
static unsigned open_pane(struct tui *t, const struct pane_class *cls)
{
    struct proc_row *r = selected_row(t);
    return r ? pane_open(t, cls, r) : EFFECT_NONE;
}

static unsigned dispatch_table(struct tui *t, int key)
{
    if (key == F(KEY_ENTER)) key = '\n';
    for (int i = 0; i < keymap_count; i++) {
        const struct key_binding *b = &keymap_table[i];
        for (int k = 0; k < KEYMAP_MAX_KEYS && b->keys[k]; k++)
            if (b->keys[k] == key) return b->pane ? open_pane(t, b->pane) : b->handler(t, key);
    }
    return EFFECT_NONE;
}

static unsigned menu_choose(struct tui *t)
{
    struct menu *m = &t->menu;
    long v = m->values[m->cursor];
    t->mode = MODE_TABLE;
    switch (m->kind) {
    case MENU_SORT: return sort_by(t, (enum column_id)v);
    case MENU_USER:
        t->vo.user_set = v >= 0;
        t->vo.user = (uid_t)(v >= 0 ? v : 0);
        tui_set_status(t, 0, "%s", v >= 0 ? "showing one user's processes (u to change)" : "showing all users");
        return EFFECT_REBUILD;
    case MENU_SIGNAL: {
        struct tag targets[1];
        int n = t->ntags ? t->ntags : action_targets(t, targets, 1);
        char label[128];
        if (t->ntags) snprintf(label, sizeof label, "Send SIG%s to %d tagged processes? [y/N] ", sigabbrev_np((int)v), n);
        else {
            struct proc_row *r = selected_row(t);
            char name[32];
            text_sanitize_display(name, sizeof name, r ? r->comm : "", r ? strlen(r->comm) : 0);
            snprintf(label, sizeof label, "Send SIG%s to %d (%s)? [y/N] ", sigabbrev_np((int)v), r ? r->pid : 0, name);
        }
        t->pending_signal = (int)v;
        keymap_ask(t, label, "y", confirm_signal, NULL, "no signal sent");
        return EFFECT_NONE;
    }
    case MENU_COLUMNS: return EFFECT_NONE;
    }
    return EFFECT_NONE;
}

/* Columns menu: Space toggles, - and + move; the settings follow at once. */
static unsigned columns_menu_key(struct tui *t, int key)
{
    struct menu *m = &t->menu;
    int c = m->cursor;
    if (key == ' ') {
        if (m->checked[c] && t->s->ncols == 1) return EFFECT_NONE; /* keep at least one */
        m->checked[c] = !m->checked[c];
    } else if ((key == '-' || key == '+' || key == '=') && m->checked[c]) {
        int to = key == '-' ? c - 1 : c + 1;
        if (to < 0 || to >= m->n || !m->checked[to]) return EFFECT_NONE;
        char label[TUI_MENU_LABEL];
        long v = m->values[c];
        memcpy(label, m->labels[c], sizeof label);
        memcpy(m->labels[c], m->labels[to], sizeof label);
        m->values[c] = m->values[to];
        memcpy(m->labels[to], label, sizeof label);
        m->values[to] = v;
        m->cursor = to;
    } else {
        return EFFECT_NONE;
    }
    t->s->ncols = 0;
    for (int i = 0; i < m->n; i++)
        if (m->checked[i]) t->s->cols[t->s->ncols++] = (enum column_id)m->values[i];
    /* Refilling lists shown columns first; the cursor stays on the same line. */
    columns_menu_fill(t);
    return EFFECT_REBUILD | EFFECT_SAVE;
}

static unsigned menu_key(struct tui *t, int key)
{
    struct menu *m = &t->menu;
    int visible = LINES - 6 > 3 ? LINES - 6 : 3;
    switch (key) {
    case F(KEY_UP): if (m->cursor > 0) m->cursor--; break;
    case F(KEY_DOWN): if (m->cursor + 1 < m->n) m->cursor++; break;
    case F(KEY_PPAGE): m->cursor = m->cursor > visible ? m->cursor - visible : 0; break;
    case F(KEY_NPAGE): m->cursor = m->cursor + visible < m->n ? m->cursor + visible : m->n - 1; break;
    case F(KEY_HOME): m->cursor = 0; break;
    case F(KEY_END): m->cursor = m->n - 1; break;
    case 27: case 'q': case F(KEY_F(10)): t->mode = MODE_TABLE; break;
    case '\n': case '\r': case F(KEY_ENTER):
        if (m->kind == MENU_COLUMNS) t->mode = MODE_TABLE;
        else return menu_choose(t);
        break;
    default:
        if (m->kind == MENU_COLUMNS) return columns_menu_key(t, key);
    }
    return EFFECT_NONE;
}

/* Next row at or after from (wrapping) whose command matches the search text. */
static long search_from(struct tui *t, long from)
{
    long n = (long)t->mon.view.n;
    if (n == 0 || !t->prompt.text[0]) return -1;
    if (from < 0) from = 0;
    for (long k = 0; k < n; k++) {
        long i = (from + k) % n;
        struct proc_row *r = t->mon.view.rows[i].row;
        proctable_fill(t->mon.table, &r, 1, PROC_NEED_CMDLINE);
        if (procview_matches(r, t->prompt.text)) return i;
    }
    return -1;
}

static unsigned prompt_changed(struct tui *t)
{
    struct prompt *p = &t->prompt;
    if (p->kind == PROMPT_SEARCH) {
        long hit = search_from(t, t->search_origin);
        p->failed = p->text[0] && hit < 0;
        if (hit >= 0) tui_select_index(t, hit);
    } else if (p->kind == PROMPT_FILTER) {
        snprintf(t->filter, sizeof t->filter, "%s", p->text);
        t->vo.filter = t->filter[0] ? t->filter : NULL;
        return EFFECT_REBUILD;
    }
    return EFFECT_NONE;
}

static unsigned prompt_accept(struct tui *t)
{
    struct prompt *p = &t->prompt;
    t->mode = MODE_TABLE;
    if (p->kind == PROMPT_DELAY) {
        double d;
        if (text_parse_seconds(p->text, &d) < 0 || d < 0.1) {
            tui_set_status(t, 1, "delay: '%s' is not a number of seconds >= 0.1", p->text);
            return EFFECT_NONE;
        }
        t->s->delay = d;
        tui_set_status(t, 0, "refreshing every %g s", d);
        return EFFECT_RESAMPLE | EFFECT_SAVE;
    }
    if (p->kind == PROMPT_WATCH) watch_pane_arm(t, p->pid, p->text);
    if (p->kind == PROMPT_FILTER && !t->filter[0] && p->before[0]) tui_set_status(t, 0, "filter removed");
    return EFFECT_NONE;
}

/* Esc or Ctrl-G: the edit is cancelled. A filter goes back to what held before F4 (Ctrl-U Enter removes it); a
 * search leaves the selection where it is, as htop's does. */
static unsigned prompt_cancel(struct tui *t)
{
    struct prompt *p = &t->prompt;
    t->mode = MODE_TABLE;
    if (p->kind != PROMPT_FILTER) return EFFECT_NONE;
    snprintf(p->text, sizeof p->text, "%s", p->before);
    return prompt_changed(t);
}

static unsigned prompt_key(struct tui *t, int key)
{
    struct prompt *p = &t->prompt;
    if (p->kind == PROMPT_CONFIRM) {
        t->mode = MODE_TABLE;
        int k = key >= 'A' && key <= 'Z' ? key - 'A' + 'a' : key;
        if (k > 0 && k < 0x80 && strchr(p->answers, k)) return p->on_answer(t, p->on_answer_arg, k);
        tui_set_status(t, 0, "%s", p->no_message);
        return EFFECT_NONE;
    }
    switch (line_edit_key(p->text, sizeof p->text, &p->cursor, key)) {
    case LINE_EDIT_CHANGED: return prompt_changed(t);
    case LINE_EDIT_ACCEPT: return prompt_accept(t);
    case LINE_EDIT_CANCEL: return prompt_cancel(t);
    case LINE_EDIT_SAME: return EFFECT_NONE;
    case LINE_EDIT_OTHER: break;
    }
    if (p->kind == PROMPT_SEARCH && (key == F(KEY_F(3)) || key == F(KEY_DOWN))) {
        long hit = search_from(t, t->selected + 1);
        if (hit >= 0) tui_select_index(t, hit);
    }
    return EFFECT_NONE;
}

static unsigned help_key(struct tui *t, int key)
{
    if (key == F(KEY_DOWN) || key == F(KEY_NPAGE)) t->help_top += key == F(KEY_DOWN) ? 1 : 10;
    else if (key == F(KEY_UP) || key == F(KEY_PPAGE)) t->help_top -= key == F(KEY_UP) ? 1 : 10;
    else t->mode = MODE_TABLE;
    if (t->help_top < 0) t->help_top = 0;
    if (t->help_top > keymap_count) t->help_top = keymap_count;
    return EFFECT_NONE;
}

unsigned keymap_dispatch(struct tui *t, int key)
{
    switch (t->mode) {
    case MODE_HELP: return help_key(t, key);
    case MODE_MENU: return menu_key(t, key);
    case MODE_PROMPT: return prompt_key(t, key);
    case MODE_PANE: return pane_key(t, key);
    default: return dispatch_table(t, key);
    }
}
