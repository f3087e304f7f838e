/* hprof_text: the analysis of a heap dump as text. */
#include "hprof_text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"

/* An untrusted name for the terminal. */
static const char *clean(const char *s, char *buf, size_t n)
{
    text_sanitize_display(buf, n, s ? s : "?", s ? strlen(s) : 1);
    return buf;
}

/* The same for a text of any length (a path in one line): a malloc'd copy, NULL when out of memory. Sanitizing
 * never lengthens a text. */
static char *clean_dup(const char *s)
{
    size_t n = strlen(s);
    char *c = malloc(n + 1);
    if (c) text_sanitize_display(c, n + 1, s, n);
    return c;
}

static const char *size(uint64_t v, char *buf, size_t n)
{
    text_format_bytes(buf, n, (long long)v);
    return buf;
}

static int summary(const struct heap_report *r, struct text_lines *o)
{
    const struct heap_summary *s = &r->summary;
    char a[32], b[32], c[32], p[1024];
    int rc = text_lines_add(o, "%s: %llu objects of %llu classes, %s in the JVM; a %s%s dump, %u-byte ids",
                            clean(r->path, p, sizeof p), (unsigned long long)s->objects, (unsigned long long)s->classes,
                            size(s->shallow_bytes, a, sizeof a), size(s->dump_bytes, b, sizeof b),
                            s->gzipped ? " (gzipped)" : "", s->id_size);
    rc |= text_lines_add(o, "layout: %s (explains %u of %u neighbouring objects' distances)", s->layout,
                         s->layout_matched, s->layout_tried);
    if (s->reachable || s->weak_only)
        rc |= text_lines_add(o, "reachable from GC roots: %llu objects, %s; only through weak or soft references: "
                                "%llu objects, %s",
                             (unsigned long long)s->reachable, size(s->reachable_bytes, a, sizeof a),
                             (unsigned long long)s->weak_only, size(s->weak_only_bytes, c, sizeof c));
    return rc;
}

static int histogram(const struct heap_report *r, struct text_lines *o)
{
    size_t n = r->limit && r->limit < r->nhistogram ? r->limit : r->nhistogram;
    int rc = text_lines_add(o, "%s", "");
    rc |= text_lines_add(o, "%12s %12s %12s  %s", "COUNT", "SHALLOW", "RETAINED", "CLASS");
    for (size_t i = 0; i < n; i++) {
        const struct heap_class_row *x = &r->histogram[i];
        char a[32], b[32], nm[1024];
        rc |= text_lines_add(o, "%12llu %12s %12s  %s", (unsigned long long)x->count, size(x->shallow, a, sizeof a),
                             r->summary.reachable ? size(x->retained, b, sizeof b) : "-", clean(x->name, nm, sizeof nm));
    }
    if (n < r->nhistogram) rc |= text_lines_add(o, "(%zu more classes; --limit 0 shows all)", r->nhistogram - n);
    return rc;
}

static int objects(const char *title, const struct heap_object_row *x, size_t n, uint64_t total, uint64_t heap,
                   struct text_lines *o)
{
    int rc = text_lines_add(o, "%s", "");
    rc |= text_lines_add(o, "%s", title);
    rc |= text_lines_add(o, "%20s %12s %12s %6s  %s", "OBJECT", "SHALLOW", "RETAINED", "%HEAP", "CLASS");
    for (size_t i = 0; i < n; i++) {
        char a[32], b[32], nm[1024];
        rc |= text_lines_add(o, "%#20llx %12s %12s %5.1f%%  %s%s%s", (unsigned long long)x[i].id,
                             size(x[i].shallow, a, sizeof a), size(x[i].retained, b, sizeof b),
                             heap ? 100.0 * (double)x[i].retained / (double)heap : 0.0, x[i].is_class ? "class " : "",
                             clean(x[i].class_name, nm, sizeof nm), x[i].reachable ? "" : "  (only weakly held)");
    }
    if (total > n) rc |= text_lines_add(o, "(%llu more; --count N shows more)", (unsigned long long)(total - n));
    return rc;
}

/* The merged tree, depth first with an explicit stack of (node, depth), then each leaf's whole path in one line. */
static int paths(const struct heap_paths *p, struct text_lines *o)
{
    char a[32], b[32], nm[1024], lb[1024];
    int rc = text_lines_add(o, "%s", "");
    rc |= text_lines_add(o, "Shortest paths from GC roots to %llu %s: %llu held through strong references, retaining "
                            "%s; %llu only through weak or soft references",
                         (unsigned long long)p->asked, clean(p->what, nm, sizeof nm), (unsigned long long)p->reached,
                         size(p->retained, a, sizeof a), (unsigned long long)p->weak_only);
    if (!p->nnodes) return rc;
    rc |= text_lines_add(o, "%10s %12s  %s", "INSTANCES", "RETAINED", "PATH (a step, then the class there)");
    uint32_t *stack = malloc(p->nnodes * 2 * sizeof *stack);
    if (!stack) return -ENOMEM;
    size_t depth = 0;
    for (uint32_t t = 0; t != HEAP_NO_NODE; t = p->nodes[t].next_sibling) {
        stack[depth++] = t;
        stack[depth++] = 0;
        while (depth) {
            uint32_t lvl = stack[--depth], v = stack[--depth];
            const struct heap_path_node *nd = &p->nodes[v];
            char obj[64] = "";
            if (nd->single) snprintf(obj, sizeof obj, " @%#llx retains %s", (unsigned long long)nd->object,
                                     size(nd->object_retained, b, sizeof b));
            /* a top node is its root ("class Retention", "thread main: java.lang.Thread") */
            int root_is_class = !lvl && strncmp(nd->label, "class ", 6) == 0;
            char deep[32] = ""; /* past 32 steps the indent stays, and the depth is said */
            if (lvl > 32) snprintf(deep, sizeof deep, "[%u] ", lvl);
            rc |= text_lines_add(o, "%10llu %12s  %*s%s%s%s%s%s%s", (unsigned long long)nd->instances,
                                 size(nd->retained, a, sizeof a), (int)(2 * (lvl > 32 ? 32 : lvl)), "", deep,
                                 lvl ? "\u2514 " : "",
                                 clean(nd->label, lb, sizeof lb), root_is_class ? "" : lvl ? " \u2192 " : ": ",
                                 root_is_class ? "" : clean(nd->class_name, nm, sizeof nm), obj);
            /* children pushed last first, so they print in order */
            size_t first = depth;
            for (uint32_t c = nd->first_child; c != HEAP_NO_NODE; c = p->nodes[c].next_sibling) {
                stack[depth++] = c;
                stack[depth++] = lvl + 1;
            }
            for (size_t i = first, j = depth - 2; depth > first && i < j; i += 2, j -= 2) {
                uint32_t t0 = stack[i], t1 = stack[i + 1];
                stack[i] = stack[j];
                stack[i + 1] = stack[j + 1];
                stack[j] = t0;
                stack[j + 1] = t1;
            }
        }
    }
    free(stack);
    rc |= text_lines_add(o, "%s", "");
    for (size_t i = 0; i < p->nnodes; i++) {
        if (p->nodes[i].first_child != HEAP_NO_NODE) continue;
        char *chain = heap_paths_chain(p, (uint32_t)i);
        char *c = chain ? clean_dup(chain) : NULL;
        rc |= text_lines_add(o, "%llu held, retaining %s: %s", (unsigned long long)p->nodes[i].instances,
                             size(p->nodes[i].retained, a, sizeof a), c ? c : "?");
        free(c);
        free(chain);
    }
    return rc;
}

static int suspects(const struct heap_report *r, struct text_lines *o)
{
    char a[32], b[32], nm[1024], nm2[1024];
    int rc = text_lines_add(o, "%s", "");
    rc |= text_lines_add(o, "Leak suspects (retaining %.0f%% of the reachable heap or more): %zu",
                         100.0 * r->suspect_share, r->nsuspects);
    for (size_t i = 0; i < r->nsuspects; i++) {
        const struct heap_suspect *s = &r->suspects[i];
        double share = r->summary.reachable_bytes ? 100.0 * (double)s->retained / (double)r->summary.reachable_bytes : 0;
        rc |= text_lines_add(o, "%zu. %s%s @%#llx retains %s (%.1f%%)", i + 1, s->is_class ? "class " : "",
                             clean(s->class_name, nm, sizeof nm),
                             (unsigned long long)s->id, size(s->retained, a, sizeof a), share);
        if (s->path) {
            char *c = clean_dup(s->path);
            rc |= text_lines_add(o, "   held by: %s%s", c ? c : "?", strstr(s->path, "\u2192") ? "" : " (a GC root)");
            free(c);
        }
        rc |= text_lines_add(o, "   accumulated in %s @%#llx (retaining %s), over %llu objects",
                             clean(s->accumulation_class, nm, sizeof nm), (unsigned long long)s->accumulation_id,
                             size(s->accumulation_retained, a, sizeof a), (unsigned long long)s->accumulation_children);
        if (s->children_class)
            rc |= text_lines_add(o, "   %llu of them %s, retaining %s", (unsigned long long)s->children_class_count,
                                 clean(s->children_class, nm2, sizeof nm2), size(s->children_class_retained, b, sizeof b));
    }
    return rc;
}

static int fields(const struct heap_report *r, struct text_lines *o)
{
    char a[32], b[32], nm[1024], v[1024];
    const struct heap_object_row *x = r->object;
    int rc = text_lines_add(o, "%s", "");
    rc |= text_lines_add(o, "%s @%#llx: shallow %s, retains %s%s", clean(x->class_name, nm, sizeof nm),
                         (unsigned long long)x->id, size(x->shallow, a, sizeof a), size(x->retained, b, sizeof b),
                         x->reachable ? "" : " (only weakly held)");
    for (size_t i = 0; i < r->nfields; i++)
        rc |= text_lines_add(o, "  %-24s %-8s %s", clean(r->fields[i].name, nm, sizeof nm), r->fields[i].type,
                             clean(r->fields[i].value, v, sizeof v));
    return rc;
}

static int diff(const struct heap_report *r, struct text_lines *o)
{
    char a[32], b[32], nm[1024];
    size_t n = r->limit && r->limit < r->ndiff ? r->limit : r->ndiff;
    int rc = text_lines_add(o, "%s", "");
    rc |= text_lines_add(o, "Since %s:", clean(r->diff_path, nm, sizeof nm));
    rc |= text_lines_add(o, "%12s %12s %12s %12s  %s", "COUNT", "\u0394COUNT", "SHALLOW", "\u0394SHALLOW", "CLASS");
    for (size_t i = 0; i < n; i++) {
        const struct heap_diff_row *d = &r->diff[i];
        int64_t ds = d->dshallow;
        text_format_bytes(b, sizeof b, ds < 0 ? -ds : ds);
        rc |= text_lines_add(o, "%12llu %+12lld %12s %c%11s  %s", (unsigned long long)d->count, (long long)d->dcount,
                             size(d->shallow, a, sizeof a), ds < 0 ? '-' : '+', b, clean(d->name, nm, sizeof nm));
    }
    return rc;
}

int hprof_text_report(const struct heap_report *r, struct text_lines *out)
{
    /* the answers first, the tables after */
    int rc = summary(r, out);
    if (r->suspect_share > 0) rc |= suspects(r, out);
    if (r->paths) rc |= paths(r->paths, out);
    if (r->instances_of) {
        char t[1100], nm[1024];
        snprintf(t, sizeof t, "Instances of %s: %llu", clean(r->instances_of, nm, sizeof nm),
                 (unsigned long long)r->instances_total);
        rc |= objects(t, r->instances, r->ninstances, r->instances_total, r->summary.reachable_bytes, out);
    }
    if (r->object) rc |= fields(r, out);
    if (r->diff) rc |= diff(r, out);
    if (r->histogram) rc |= histogram(r, out);
    if (r->dominators) rc |= objects("Biggest objects by retained size (the dominator tree's top):", r->dominators,
                                     r->ndominators, r->ndominators, r->summary.reachable_bytes, out);
    return rc ? -ENOMEM : 0;
}
