#include "watch_pane.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "model/watch_spec.h"
#include "util/dump_path.h"
#include "util/text.h"
#include "tui_state.h"

/* The monitor's watches are changed only through the set's own locked calls; reading counts for a const view
 * still takes its lock. */
static struct watch_set *set_of(const struct tui *t) { return (struct watch_set *)&t->watches; }

void watch_pane_form_label(char *buf, size_t n, int pid, const char *comm)
{
    char name[32];
    text_sanitize_display(name, sizeof name, comm, strlen(comm));
    snprintf(buf, n,
             "Watch %d (%s) when: cpu PCT[:S] | cpu-below PCT[:S] | rss SIZE | rss-growth SIZE/min | threads N | "
             "fds N, then dump|stack|profile[:S]|heap, count N, every S: ",
             pid, name);
}

void watch_pane_arm(struct tui *t, int pid, const char *text)
{
    struct watch_config c;
    memset(&c, 0, sizeof c);
    watch_spec_defaults(&c);
    c.pid = pid;
    char err[512], dir[4096], id[WATCH_SET_ID];
    if (watch_spec_parse(&c, text, err, sizeof err) < 0) {
        tui_set_status(t, 1, "watch: %s", err);
        return;
    }
    for (int i = 0; i < c.nactions; i++)
        if (c.actions[i].kind == WATCH_DO_EXEC) {
            tui_set_status(t, 1, "watch: exec's output would write over the screen: run diagtop watch --then exec:... "
                                 "in a shell");
            return;
        }
    if (dump_directory(NULL, t->s->dump_dir, dir, sizeof dir, err, sizeof err) < 0) {
        tui_set_status(t, 1, "watch: %s", err);
        return;
    }
    if (watch_set_arm(&t->watches, &c, text, dir, NULL, id, err, sizeof err) < 0) {
        tui_set_status(t, 1, "watch: %s", err);
        return;
    }
    tui_set_status(t, 0, "watch %s armed on %d: %s; files go to %s (w lists the watches)", id, pid, text, dir);
}

int watch_pane_armed(const struct tui *t)
{
    int armed;
    unsigned long long firings, captures, failed;
    watch_set_counts(set_of(t), &armed, &firings, &captures, &failed);
    return armed;
}

void watch_pane_summary(const struct tui *t, char *buf, size_t n)
{
    int armed;
    unsigned long long firings, captures, failed;
    watch_set_counts(set_of(t), &armed, &firings, &captures, &failed);
    buf[0] = '\0';
    if (!t->watches.next_seq) return; /* nothing was ever armed: the header stays as it was */
    size_t used = (size_t)snprintf(buf, n, "%d armed, %llu capture%s", armed, captures, captures == 1 ? "" : "s");
    if (failed && used < n) snprintf(buf + used, n - used, ", %llu failed", failed);
}

int watch_pane_marked(const struct tui *t, int *pids, int max)
{
    struct watch_set *set = set_of(t);
    int n = 0, running = 0;
    watch_set_lock(set);
    for (int i = 0; i < WATCH_SET_MAX; i++) {
        const struct watch_set_entry *w = set->w[i];
        if (!w || !w->running) continue;
        running = 1;
        for (int k = 0; k < w->npids && n < max; k++) pids[n++] = w->pids[k];
    }
    watch_set_unlock(set);
    return running ? n : -1;
}

/* An event as one line: its time, what happened, and its detail. */
static void event_line(char *buf, size_t n, const struct watch_set_event *k)
{
    char when[16], comm[32], detail[1200] = "";
    time_t tt = (time_t)k->wall;
    struct tm tm;
    strftime(when, sizeof when, "%H:%M:%S", localtime_r(&tt, &tm));
    text_sanitize_display(comm, sizeof comm, k->comm, strlen(k->comm));
    switch (k->kind) {
    case WATCH_EV_TRIGGER: snprintf(detail, sizeof detail, "%s: %s", k->trigger_text, k->value_text); break;
    case WATCH_EV_CAPTURE:
        if (k->pause_ms >= 0)
            snprintf(detail, sizeof detail, "%s  %s  %.1f MiB, paused %.1f ms", k->action, k->path,
                     k->bytes / 1048576.0, k->pause_ms);
        else snprintf(detail, sizeof detail, "%s  %s  %.1f KiB", k->action, k->path, k->bytes / 1024.0);
        break;
    default: {
        char msg[300];
        text_sanitize_display(msg, sizeof msg, k->msg, strlen(k->msg));
        snprintf(detail, sizeof detail, "%s%s%s", k->action, k->action[0] && msg[0] ? "  " : "", msg);
    }
    }
    snprintf(buf, n, "    %s  %-9s %d %s  %s", when, watch_event_name(k->kind), k->pid, comm, detail);
}

/* The capture or failure newest in the set, said once. */
void watch_pane_notice(struct tui *t)
{
    struct watch_set *set = &t->watches;
    watch_set_lock(set);
    unsigned long long seen = set->captures_total + set->failed_total;
    const struct watch_set_event *newest = NULL;
    const struct watch_set_entry *of = NULL;
    if (seen != t->watch_seen) {
        for (int i = 0; i < WATCH_SET_MAX; i++) {
            const struct watch_set_entry *w = set->w[i];
            for (int k = 0; w && k < watch_set_nevents(w); k++) {
                const struct watch_set_event *e = watch_set_event_at(w, k);
                if ((e->kind == WATCH_EV_CAPTURE || e->kind == WATCH_EV_FAILED) && (!newest || e->wall >= newest->wall))
                    newest = e, of = w;
            }
        }
    }
    char line[1400] = "";
    if (newest) event_line(line, sizeof line, newest);
    int failed = newest && newest->kind == WATCH_EV_FAILED;
    char id[WATCH_SET_ID] = "";
    if (of) snprintf(id, sizeof id, "%s", of->id);
    t->watch_seen = seen;
    watch_set_unlock(set);
    if (newest) tui_set_status(t, failed, "watch %s:%s", id, line + 3);
}

/* ---- the pane ---- */

struct watch_pane {
    char ids[WATCH_SET_MAX][WATCH_SET_ID]; /* the watches as listed, */
    long line_of[WATCH_SET_MAX];           /* and the line each starts on */
    int n;
};

static void entry_state(char *buf, size_t n, const struct watch_set_entry *w)
{
    char err[300];
    text_sanitize_display(err, sizeof err, w->error, strlen(w->error));
    const char *state = w->running ? "armed" : w->result < 0 ? "failed" : w->result == 1 ? "ended: the process is gone"
                                                                                         : "ended";
    snprintf(buf, n, "%s%s%s, %d firing%s, %d of %d capture%s%s", state, err[0] ? ": " : "", err, w->firings,
             w->firings == 1 ? "" : "s", w->captures, w->c.count, w->c.count == 1 ? "" : "s",
             w->failures ? ", failures" : "");
}

static void render(struct tui *t, struct pane *p)
{
    struct watch_pane *wp = p->state;
    struct watch_set *set = &t->watches;
    struct text_lines tl = {0};
    char summary[128];
    watch_pane_summary(t, summary, sizeof summary);
    text_lines_add(&tl, "Watches: %s. x on a watch disarms it (a capture in flight is cancelled).",
                   summary[0] ? summary : "none yet: W on a process arms one");
    text_lines_add(&tl, "%s", "");
    p->cursor_first = (long)tl.n;
    wp->n = 0;
    watch_set_lock(set);
    for (int i = 0; i < WATCH_SET_MAX; i++) {
        const struct watch_set_entry *w = set->w[i];
        if (!w) continue;
        char spec[1100], state[512];
        text_sanitize_display(spec, sizeof spec, w->spec, strlen(w->spec));
        entry_state(state, sizeof state, w);
        snprintf(wp->ids[wp->n], sizeof wp->ids[0], "%s", w->id);
        wp->line_of[wp->n++] = (long)tl.n;
        text_lines_add(&tl, "#%s  pid %d  %s  -- %s", w->id, w->c.pid, spec, state);
        for (int k = 0; k < watch_set_nevents(w); k++) {
            char line[1400];
            event_line(line, sizeof line, watch_set_event_at(w, k));
            text_lines_add(&tl, "%s", line);
        }
    }
    watch_set_unlock(set);
    pane_set_lines(p, &tl);
    if (p->cursor < p->cursor_first) p->cursor = p->cursor_first;
}

static enum pane_open_result open_pane(struct tui *t, struct pane *p, const struct proc_row *row)
{
    (void)row; /* every watch, whichever row */
    pane_set_title(p, "Watches");
    render(t, p);
    return PANE_SHOWN;
}

static void tick(struct tui *t, struct pane *p) { render(t, p); }

static unsigned reload(struct tui *t, struct pane *p)
{
    render(t, p);
    return 0;
}

/* x: the watch whose lines hold the cursor is disarmed and forgotten. */
static unsigned key(struct tui *t, struct pane *p, int k)
{
    struct watch_pane *wp = p->state;
    if (k != 'x') return PANE_KEY_UNHANDLED;
    int at = -1;
    for (int i = 0; i < wp->n; i++)
        if (p->cursor >= wp->line_of[i]) at = i;
    if (at < 0) return 0;
    char id[WATCH_SET_ID];
    snprintf(id, sizeof id, "%s", wp->ids[at]);
    if (watch_set_disarm(&t->watches, id) == 0) tui_set_status(t, 0, "watch %s disarmed", id);
    render(t, p);
    return 0;
}

const struct pane_class watch_pane_class = {
    .name = "watch",
    .keys_help = "x disarm",
    .state_size = sizeof(struct watch_pane),
    .open = open_pane,
    .key = key,
    .reload = reload,
    .tick = tick,
    .has_cursor = 1,
};
