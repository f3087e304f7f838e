#include "tui_state.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/clock.h"

#define STATUS_SECONDS 4.0   /* a one-line message */
#define STATUS_CHARS_PER_S 40 /* then one more second per 40 characters past 80: time to read a long one */

void tui_set_status(struct tui *t, int error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->status, sizeof t->status, fmt, ap);
    va_end(ap);
    t->status_error = error;
    size_t len = strlen(t->status);
    double extra = len > 80 ? (double)(len - 80) / STATUS_CHARS_PER_S : 0;
    t->status_until = clock_monotonic_seconds() + STATUS_SECONDS + extra;
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

int tui_tag_index(const struct tui *t, int pid)
{
    for (int i = 0; i < t->ntags; i++)
        if (t->tags[i].pid == pid) return i;
    return -1;
}

int tui_is_tagged(const struct tui *t, int pid) { return tui_tag_index(t, pid) >= 0; }
