#include "monitor.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int monitor_init(struct monitor *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->table = proctable_new();
    m->sys = systotals_new();
    m->users = users_new();
    if (!m->table || !m->sys || !m->users) {
        snprintf(err, errlen, "cannot open /proc: %s", strerror(errno ? errno : ENOMEM));
        monitor_destroy(m);
        return -ENOMEM;
    }
    m->ctx.users = m->users;
    m->ctx.hertz = sysconf(_SC_CLK_TCK);
    return 0;
}

void monitor_destroy(struct monitor *m)
{
    proctable_free(m->table);
    systotals_free(m->sys);
    users_free(m->users);
    procview_free(&m->view);
    memset(m, 0, sizeof *m);
}

int monitor_rebuild(struct monitor *m, const struct procview_opts *o)
{
    size_t n;
    struct proc_row **rows = proctable_rows(m->table, &n);
    unsigned needs = procview_needs(o);
    if (needs) proctable_fill(m->table, rows, n, needs);
    return procview_build(&m->view, rows, n, o, &m->ctx);
}

int monitor_refresh(struct monitor *m, const struct procview_opts *o, char *err, size_t errlen)
{
    int rc = systotals_refresh(m->sys, err, errlen);
    if (rc < 0) return rc;
    rc = proctable_refresh(m->table, o->show_threads, err, errlen);
    if (rc < 0) return rc;
    m->counts = proctable_counts(m->table);
    rc = monitor_rebuild(m, o);
    if (rc < 0) snprintf(err, errlen, "out of memory");
    return rc;
}

void monitor_fill_rows(struct monitor *m, size_t first, size_t count, unsigned needs)
{
    if (first >= m->view.n || !needs) return;
    if (count > m->view.n - first) count = m->view.n - first;
    struct proc_row *rows[256];
    while (count > 0) {
        size_t k = count < 256 ? count : 256;
        for (size_t i = 0; i < k; i++) rows[i] = m->view.rows[first + i].row;
        proctable_fill(m->table, rows, k, needs);
        first += k;
        count -= k;
    }
}

unsigned monitor_needs_of(const enum column_id *cols, int ncols)
{
    unsigned needs = 0;
    for (int i = 0; i < ncols; i++) needs |= columns_table[cols[i]].needs;
    return needs;
}
