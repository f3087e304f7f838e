/* heap_paths: the shortest paths from GC roots to objects (breadth first over strong references from the
 * super-root), merged into one tree by step and class, as MAT's "merge shortest paths to GC roots" shows them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap_state.h"
#include "util/big_alloc.h"

int heap_ensure_bfs(struct heap_analysis *a)
{
    if (a->bfs_parent) return 0;
    const struct heap_graph *g = &a->g;
    uint32_t nv = g->n + 1;
    size_t bytes = (size_t)nv * sizeof(uint32_t);
    uint32_t *parent = big_alloc(bytes), *queue = big_alloc(bytes);
    if (!parent || !queue) {
        big_free(parent, bytes);
        big_free(queue, bytes);
        return -ENOMEM;
    }
    for (uint32_t v = 0; v < nv; v++) parent[v] = HPROF_NONE;
    uint32_t head = 0, tail = 0;
    parent[g->n] = g->n;
    queue[tail++] = g->n;
    while (head < tail) {
        uint32_t v = queue[head++];
        for (uint64_t i = g->out_start[v]; i < g->out_start[v + 1]; i++) {
            uint32_t w = g->out[i];
            if (parent[w] != HPROF_NONE) continue;
            parent[w] = v;
            queue[tail++] = w;
        }
    }
    big_free(queue, bytes);
    a->bfs_parent = parent;
    return 0;
}

const char *heap_display_class(const struct hprof *h, uint32_t v)
{
    uint32_t k = hprof_class_of_object(h, v);
    return h->classes[k != HPROF_NONE ? k : h->obj_class[v]].name;
}

/* Thread objects' names, for roots in their frames. */
struct name_find {
    const struct hprof *h;
    uint64_t id;
};

static int find_name_field(void *arg, const struct hprof_field *f)
{
    struct name_find *nf = arg;
    if (f->type == HPROF_OBJECT && hprof_field_is(nf->h, f, "name")) {
        nf->id = hprof_id_at(nf->h, f->value);
        return 1;
    }
    return 0;
}

static void thread_name(const struct hprof *h, uint32_t thread, char *buf, size_t n)
{
    struct name_find nf = {h, 0};
    uint32_t s;
    snprintf(buf, n, "?");
    if (thread != HPROF_NONE && hprof_instance_fields(h, thread, find_name_field, &nf) && nf.id &&
        (s = hprof_find(h, nf.id)) != HPROF_NONE)
        heap_string_text(h, s, buf, n);
}

void heap_root_label(const struct hprof *h, uint32_t v, char *buf, size_t n)
{
    const struct hprof_root *best = NULL;
    for (uint32_t r = 0; r < h->nroots; r++) {
        const struct hprof_root *x = &h->roots[r];
        if (x->object != v) continue;
        if (!best || x->kind == ROOT_THREAD_OBJECT || (best->kind == ROOT_STICKY_CLASS && x->kind != ROOT_THREAD_OBJECT))
            best = x;
    }
    char name[128];
    if (h->obj_kind[v] == HPROF_OBJ_CLASS && (!best || best->kind == ROOT_STICKY_CLASS)) {
        snprintf(buf, n, "class %s", heap_display_class(h, v));
    } else if (best && best->kind == ROOT_THREAD_OBJECT) {
        thread_name(h, v, name, sizeof name);
        snprintf(buf, n, "thread %s", name);
    } else if (best && (best->kind == ROOT_JAVA_FRAME || best->kind == ROOT_JNI_LOCAL)) {
        uint32_t t = best->thread_serial < h->nthreads ? h->thread_objects[best->thread_serial] : HPROF_NONE;
        thread_name(h, t, name, sizeof name);
        snprintf(buf, n, "%s of thread %s", best->kind == ROOT_JAVA_FRAME ? "local" : "JNI local", name);
    } else {
        snprintf(buf, n, "%s", best ? hprof_root_names[best->kind] : "root");
    }
}

/* Which field of an instance, or which static of a class, holds an id. */
struct field_of {
    const struct hprof *h;
    uint64_t id;
    char *buf;
    size_t n;
    int is_static;
};

static int match_field(void *arg, const struct hprof_field *f)
{
    struct field_of *fo = arg;
    if (f->type != HPROF_OBJECT || hprof_id_at(fo->h, f->value) != fo->id) return 0;
    uint32_t len;
    const char *name = hprof_field_name(fo->h, f, &len);
    snprintf(fo->buf, fo->n, "%.*s%s", name ? (int)len : 1, name ? name : "?",
             fo->is_static ? " (static)" : "");
    return 1;
}

void heap_edge_label(const struct hprof *h, uint32_t from, uint32_t to, char *buf, size_t n)
{
    struct field_of fo = {h, h->obj_id[to], buf, n, 0};
    switch (h->obj_kind[from]) {
    case HPROF_OBJ_ARRAY: snprintf(buf, n, "[]"); return;
    case HPROF_OBJ_INSTANCE:
        if (hprof_instance_fields(h, from, match_field, &fo)) return;
        break;
    case HPROF_OBJ_CLASS: {
        uint32_t k = hprof_class_of_object(h, from);
        fo.is_static = 1;
        if (k != HPROF_NONE && hprof_class_statics(h, k, match_field, &fo)) return;
        const unsigned char *p = h->file.bytes + h->obj_off[from] + h->id_size + 4;
        static const char *const slots[] = {"<superclass>", "<class loader>", "<signers>", "<protection domain>"};
        for (int i = 0; i < 4; i++)
            if (hprof_id_at(h, p + (size_t)i * h->id_size) == h->obj_id[to]) {
                snprintf(buf, n, "%s", slots[i]);
                return;
            }
        snprintf(buf, n, "<constant pool>");
        return;
    }
    default: break;
    }
    snprintf(buf, n, h->obj_kind[to] == HPROF_OBJ_CLASS ? "<class>" : "?");
}

/* The tree being merged. */
struct tree {
    struct heap_paths *p;
    size_t cap;
};

static uint32_t node_add(struct tree *t, uint32_t parent, const char *label, const char *cls, uint64_t obj)
{
    struct heap_paths *p = t->p;
    if (p->nnodes == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        struct heap_path_node *v = realloc(p->nodes, cap * sizeof *v);
        if (!v) return HEAP_NO_NODE;
        p->nodes = v;
        t->cap = cap;
    }
    struct heap_path_node *nd = &p->nodes[p->nnodes];
    memset(nd, 0, sizeof *nd);
    if (!(nd->label = strdup(label))) return HEAP_NO_NODE;
    nd->class_name = cls;
    nd->object = obj;
    nd->single = 1;
    nd->parent = parent;
    nd->first_child = nd->next_sibling = HEAP_NO_NODE;
    uint32_t id = (uint32_t)p->nnodes++;
    if (parent != HEAP_NO_NODE || id > 0) { /* appended last among its siblings: the order is the order seen */
        uint32_t *link = parent != HEAP_NO_NODE ? &p->nodes[parent].first_child : &p->nodes[0].next_sibling;
        while (*link != HEAP_NO_NODE) link = &p->nodes[*link].next_sibling;
        *link = id;
    }
    return id;
}

/* The child of parent for this step, made if new. */
static uint32_t node_step(struct tree *t, uint32_t parent, const char *label, const char *cls, uint64_t obj)
{
    struct heap_paths *p = t->p;
    for (uint32_t c = p->nodes[parent].first_child; c != HEAP_NO_NODE; c = p->nodes[c].next_sibling) {
        const struct heap_path_node *nd = &p->nodes[c];
        if (nd->class_name == cls && strcmp(nd->label, label) == 0) return c;
    }
    return node_add(t, parent, label, cls, obj);
}

/* One instance's path, root first, merged in. */
static int merge_path(struct heap_analysis *a, struct tree *t, uint32_t v, uint32_t **chain, size_t *cap)
{
    const struct hprof *h = &a->h;
    size_t len = 0;
    for (uint32_t x = v; x != a->g.n; x = a->bfs_parent[x]) {
        if (len == *cap) {
            size_t c = *cap ? *cap * 2 : 64;
            uint32_t *nc = realloc(*chain, c * sizeof *nc);
            if (!nc) return -ENOMEM;
            *chain = nc;
            *cap = c;
        }
        (*chain)[len++] = x;
        if (len > a->g.n) break; /* cannot happen: BFS parents form a tree */
    }
    uint32_t node = HEAP_NO_NODE;
    char label[256];
    for (size_t i = len; i-- > 0;) {
        uint32_t x = (*chain)[i], next = HEAP_NO_NODE;
        if (i == len - 1) { /* a root seen before keeps its node: its label (a scan of the roots) is made once */
            for (uint32_t c = t->p->nnodes ? 0 : HEAP_NO_NODE; c != HEAP_NO_NODE && next == HEAP_NO_NODE;
                 c = t->p->nodes[c].next_sibling)
                if (t->p->nodes[c].object == h->obj_id[x]) next = c;
            if (next == HEAP_NO_NODE) {
                heap_root_label(h, x, label, sizeof label);
                next = node_add(t, HEAP_NO_NODE, label, heap_display_class(h, x), h->obj_id[x]);
            }
        } else {
            heap_edge_label(h, (*chain)[i + 1], x, label, sizeof label);
            next = node_step(t, node, label, h->classes[h->obj_class[x]].name, h->obj_id[x]);
        }
        if (next == HEAP_NO_NODE) return -ENOMEM;
        node = next;
        struct heap_path_node *nd = &t->p->nodes[node];
        if (nd->object != h->obj_id[x]) nd->single = 0;
        if (nd->single) nd->object_retained = a->g.retained[x];
        nd->instances++;
        nd->retained += a->g.retained[v];
    }
    return 0;
}

static int cmp_retained_desc(const void *x, const void *y, void *arg)
{
    const uint64_t *r = arg;
    uint64_t a = r[*(const uint32_t *)x], b = r[*(const uint32_t *)y];
    return a < b ? 1 : a > b ? -1 : 0;
}

/* The objects asked about: one 0xID, or a class's instances. */
static int pick_objects(struct heap_analysis *a, const char *what, uint32_t **objs, size_t *n, char **desc, char *err,
                        size_t errlen);

int heap_analysis_paths(struct heap_analysis *a, const char *what, size_t count, struct heap_paths *p, char *err,
                        size_t errlen)
{
    memset(p, 0, sizeof *p);
    if (!a->has_graph) {
        snprintf(err, errlen, "paths need the reference graph");
        return -1;
    }
    uint32_t *objs = NULL;
    size_t n = 0;
    if (pick_objects(a, what, &objs, &n, &p->what, err, errlen) < 0) return -1;
    if (heap_ensure_bfs(a) < 0) goto nomem;
    if (n) qsort_r(objs, n, sizeof *objs, cmp_retained_desc, a->g.retained); /* a class with no instance: none */
    struct tree t = {p, 0};
    uint32_t *chain = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < n && p->asked < count; i++) {
        uint32_t v = objs[i];
        p->asked++;
        if (a->bfs_parent[v] == HPROF_NONE) {
            p->weak_only++;
            continue;
        }
        p->reached++;
        p->retained += a->g.retained[v];
        if (merge_path(a, &t, v, &chain, &cap) < 0) {
            free(chain);
            goto nomem;
        }
    }
    free(chain);
    free(objs);
    return 0;
nomem:
    free(objs);
    heap_paths_free(p);
    snprintf(err, errlen, "out of memory merging paths");
    return -1;
}

static int pick_objects(struct heap_analysis *a, const char *what, uint32_t **objs, size_t *n, char **desc, char *err,
                        size_t errlen)
{
    const struct hprof *h = &a->h;
    char buf[512];
    if (what[0] == '0' && (what[1] == 'x' || what[1] == 'X')) {
        uint32_t v = heap_object_named(h, what);
        if (v == HPROF_NONE) {
            snprintf(err, errlen, "no object %s in this dump", what);
            return -1;
        }
        if (!(*objs = malloc(sizeof **objs))) return -1;
        **objs = v;
        *n = 1;
        snprintf(buf, sizeof buf, "object 0x%llx (%s)", (unsigned long long)h->obj_id[v], heap_display_class(h, v));
    } else {
        if (heap_class_objects(a, what, objs, n, err, errlen) < 0) return -1;
        snprintf(buf, sizeof buf, "instances of %s", *n ? h->classes[h->obj_class[(*objs)[0]]].name : what);
    }
    if (!(*desc = strdup(buf))) {
        free(*objs);
        return -1;
    }
    return 0;
}

void heap_paths_free(struct heap_paths *p)
{
    for (size_t i = 0; i < p->nnodes; i++) free(p->nodes[i].label);
    free(p->nodes);
    free(p->what);
    memset(p, 0, sizeof *p);
}

/* "A.f -> B[] -> B.g -> C": each node's class, with the step taken from it unless that is an array slot. A top
 * node that is a class reads as the class itself; another root reads "thread main: java.lang.Thread". */
static int chain_append(char **s, size_t *len, const char *piece)
{
    size_t n = strlen(piece);
    char *ns = realloc(*s, *len + n + 1);
    if (!ns) return -1;
    memcpy(ns + *len, piece, n + 1);
    *s = ns;
    *len += n;
    return 0;
}

char *heap_paths_chain(const struct heap_paths *p, uint32_t leaf)
{
    uint32_t path[4096];
    size_t depth = 0;
    uint32_t x = leaf;
    for (; x != HEAP_NO_NODE && depth < sizeof path / sizeof path[0]; x = p->nodes[x].parent) path[depth++] = x;
    char *s = NULL;
    size_t len = 0;
    if (x != HEAP_NO_NODE && chain_append(&s, &len, "\u2026 \u2192 ") < 0) return NULL; /* the last 4096 steps */
    for (size_t i = depth; i-- > 0;) {
        const struct heap_path_node *nd = &p->nodes[path[i]];
        char piece[640];
        const char *next = i > 0 ? p->nodes[path[i - 1]].label : NULL;
        const char *step = next && strcmp(next, "[]") != 0 ? next : NULL;
        int top = i == depth - 1 && nd->parent == HEAP_NO_NODE;
        if (depth == 1 && top)
            snprintf(piece, sizeof piece, "%s", nd->label);
        else if (top && strncmp(nd->label, "class ", 6) == 0)
            snprintf(piece, sizeof piece, "%s%s%s", nd->label + 6, step ? "." : "", step ? step : "");
        else if (top)
            snprintf(piece, sizeof piece, "%s: %s%s%s", nd->label, nd->class_name, step ? "." : "", step ? step : "");
        else
            snprintf(piece, sizeof piece, "%s%s%s", nd->class_name, step ? "." : "", step ? step : "");
        if (chain_append(&s, &len, piece) < 0 || (i > 0 && chain_append(&s, &len, " \u2192 ") < 0)) {
            free(s);
            return NULL;
        }
    }
    return s ? s : strdup("");
}

char *heap_object_chain(struct heap_analysis *a, uint32_t v)
{
    if (heap_ensure_bfs(a) < 0 || a->bfs_parent[v] == HPROF_NONE) return NULL;
    struct heap_paths p;
    memset(&p, 0, sizeof p);
    struct tree t = {&p, 0};
    uint32_t *chain = NULL;
    size_t cap = 0;
    char *s = NULL;
    if (merge_path(a, &t, v, &chain, &cap) == 0 && p.nnodes) s = heap_paths_chain(&p, (uint32_t)p.nnodes - 1);
    free(chain);
    heap_paths_free(&p);
    return s;
}
