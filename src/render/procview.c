#include "procview.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/text.h"

unsigned procview_needs(const struct procview_opts *o)
{
    unsigned needs = columns_table[o->sort].needs;
    if (o->filter && *o->filter) needs |= PROC_NEED_CMDLINE;
    return needs;
}

int procview_matches(const struct proc_row *r, const char *text)
{
    if (!text || !*text) return 1;
    char pid[16];
    snprintf(pid, sizeof pid, "%d", r->pid);
    if (strcmp(pid, text) == 0 || text_contains_nocase(r->comm, text)) return 1;
    if (!r->cmdline) return 0;
    /* Arguments are NUL-separated: match across them as a space-joined line. */
    char line[4096];
    size_t n = r->cmdline_len < sizeof line - 1 ? r->cmdline_len : sizeof line - 1;
    for (size_t i = 0; i < n; i++) line[i] = r->cmdline[i] ? r->cmdline[i] : ' ';
    line[n] = '\0';
    return text_contains_nocase(line, text);
}

static int row_selected(const struct proc_row *r, const struct procview_opts *o)
{
    if (r->is_thread && !o->show_threads) return 0;
    if (o->user_set && (!r->uid_known || r->uid != o->user)) return 0;
    if (o->npids) {
        int hit = 0;
        for (int i = 0; i < o->npids && !hit; i++) hit = o->pids[i] == r->tgid || o->pids[i] == r->pid;
        if (!hit) return 0;
    }
    return procview_matches(r, o->filter);
}

/* qsort has no context argument: sort an array of (row, ctx) pairs instead of a global. */
struct sort_item {
    struct proc_row *row;
    const struct procview_opts *o;
    const struct column_ctx *ctx;
};

static int compare_items(const void *pa, const void *pb)
{
    const struct sort_item *a = pa, *b = pb;
    const struct column *c = &columns_table[a->o->sort];
    int r = c->compare(a->row, b->row, a->ctx);
    if (c->sort_descending) r = -r;
    if (a->o->reverse) r = -r;
    if (r == 0) r = a->row->pid < b->row->pid ? -1 : a->row->pid > b->row->pid; /* stable across refreshes */
    return r;
}

static int push(struct procview *v, struct proc_row *row, const char *prefix)
{
    if (GROW(v->rows, v->cap, v->n, 1024) < 0) return -ENOMEM;
    v->rows[v->n].row = row;
    snprintf(v->rows[v->n].prefix, sizeof v->rows[v->n].prefix, "%s", prefix);
    v->n++;
    return 0;
}

/* Tree: children are found by ppid (threads hang under their process); roots are rows whose parent is not shown. */
struct tree {
    struct sort_item *items;
    size_t n;
    size_t *first_child; /* index range into by_parent for each item */
    size_t *nchildren;
    size_t *by_parent;   /* item indexes grouped by parent item */
};

struct pid_index {
    int pid;
    size_t item;
};

static int compare_pid_index(const void *pa, const void *pb)
{
    const struct pid_index *a = pa, *b = pb;
    return (a->pid > b->pid) - (a->pid < b->pid);
}

/* The item index of a row's parent (its process for a thread), or -1 when the parent is not shown. */
static long tree_parent_of(const struct proc_row *r, const struct pid_index *index, size_t n)
{
    struct pid_index key = {r->is_thread ? r->tgid : r->ppid, 0};
    if (key.pid <= 0 || key.pid == r->pid) return -1;
    const struct pid_index *hit = bsearch(&key, index, n, sizeof *index, compare_pid_index);
    return hit ? (long)hit->item : -1;
}

static int walk(struct procview *v, const struct tree *t, size_t i, char *lead, size_t leadlen, int last, int depth,
                int ascii)
{
    char prefix[PROCVIEW_PREFIX_MAX];
    if (depth == 0) prefix[0] = '\0';
    else snprintf(prefix, sizeof prefix, "%s%s", lead, last ? (ascii ? "`- " : "└─ ") : (ascii ? "|- " : "├─ "));
    if (push(v, t->items[i].row, prefix) < 0) return -ENOMEM;
    size_t added = 0;
    if (depth > 0) {
        const char *more = last ? "   " : (ascii ? "|  " : "│  ");
        added = strlen(more);
        if (leadlen + added >= PROCVIEW_PREFIX_MAX - 8) added = 0; /* very deep trees stop indenting */
        else memcpy(lead + leadlen, more, added + 1);
    }
    for (size_t k = 0; k < t->nchildren[i]; k++) {
        size_t child = t->by_parent[t->first_child[i] + k];
        if (walk(v, t, child, lead, leadlen + added, k + 1 == t->nchildren[i], depth + 1, ascii) < 0)
            return -ENOMEM;
    }
    lead[leadlen] = '\0';
    return 0;
}

static int build_tree(struct procview *v, struct sort_item *items, size_t n, int ascii)
{
    struct pid_index *index = malloc((n ? n : 1) * sizeof *index);
    long *parent = malloc(n * sizeof *parent);
    struct tree t = {items, n, calloc(n, sizeof(size_t)), calloc(n, sizeof(size_t)), malloc(n * sizeof(size_t))};
    int rc = -ENOMEM;
    if (!index || !parent || !t.first_child || !t.nchildren || !t.by_parent) goto out;
    for (size_t i = 0; i < n; i++) index[i] = (struct pid_index){items[i].row->pid, i};
    qsort(index, n, sizeof *index, compare_pid_index);
    for (size_t i = 0; i < n; i++) {
        parent[i] = tree_parent_of(items[i].row, index, n);
        if (parent[i] >= 0) t.nchildren[parent[i]]++;
    }
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        t.first_child[i] = pos;
        pos += t.nchildren[i];
        t.nchildren[i] = 0;
    }
    /* items are already sorted, so children land in sorted order. */
    for (size_t i = 0; i < n; i++)
        if (parent[i] >= 0) t.by_parent[t.first_child[parent[i]] + t.nchildren[parent[i]]++] = i;
    char lead[PROCVIEW_PREFIX_MAX] = "";
    rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        if (parent[i] < 0) rc = walk(v, &t, i, lead, 0, 1, 0, ascii);
out:
    free(index);
    free(parent);
    free(t.first_child);
    free(t.nchildren);
    free(t.by_parent);
    return rc;
}

int procview_build(struct procview *v, struct proc_row **rows, size_t n, const struct procview_opts *o,
                   const struct column_ctx *ctx)
{
    v->n = 0;
    struct sort_item *items = malloc((n ? n : 1) * sizeof *items);
    if (!items) return -ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (row_selected(rows[i], o)) items[m++] = (struct sort_item){rows[i], o, ctx};
    qsort(items, m, sizeof *items, compare_items);
    int rc = 0;
    if (o->tree) rc = build_tree(v, items, m, o->ascii);
    else
        for (size_t i = 0; i < m && rc == 0; i++) rc = push(v, items[i].row, "");
    free(items);
    return rc;
}

long procview_find(const struct procview *v, int pid)
{
    for (size_t i = 0; i < v->n; i++)
        if (v->rows[i].row->pid == pid) return (long)i;
    return -1;
}

void procview_free(struct procview *v)
{
    free(v->rows);
    v->rows = NULL;
    v->n = v->cap = 0;
}
