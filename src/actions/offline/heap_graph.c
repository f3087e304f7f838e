/* heap_graph: the reference graph of a dump (compressed rows of object indices) and its dominators by the
 * Semi-NCA algorithm (Georgiadis; Lengauer-Tarjan's semidominators, then nearest common ancestors in the DFS
 * tree), with an explicit stack everywhere: a heap may hold a linked list millions long. */
#include "heap_graph.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/bytes.h"

struct edges {
    uint32_t *v;
    size_t n, cap;
};

static int edge_add(struct edges *e, uint32_t to)
{
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 1 << 16;
        uint32_t *v = realloc(e->v, cap * sizeof *v);
        if (!v) return -ENOMEM;
        e->v = v;
        e->cap = cap;
    }
    e->v[e->n++] = to;
    return 0;
}

/* An edge to the object an id names, if the dump holds it (a null or a dangling id is no edge). */
static int edge_id(struct edges *e, const struct hprof *h, uint64_t id, uint32_t self)
{
    if (!id) return 0;
    uint32_t to = hprof_find(h, id);
    return to == HPROF_NONE || to == self ? 0 : edge_add(e, to);
}

/* A class object's references: superclass, loader, signers, protection domain, the constant pool's and statics'
 * objects. */
static int class_edges(struct edges *e, const struct hprof *h, uint32_t obj)
{
    unsigned id = h->id_size;
    const unsigned char *p = h->file.bytes + h->obj_off[obj];
    int rc = 0;
    rc |= edge_id(e, h, bytes_be(p + id + 4, id), obj);         /* super */
    rc |= edge_id(e, h, bytes_be(p + 2 * id + 4, id), obj);     /* loader */
    rc |= edge_id(e, h, bytes_be(p + 3 * id + 4, id), obj);     /* signers */
    rc |= edge_id(e, h, bytes_be(p + 4 * id + 4, id), obj);     /* protection domain */
    p += 7 * id + 8;
    unsigned ncp = (unsigned)bytes_be(p, 2);
    p += 2;
    for (unsigned i = 0; i < ncp; i++) {
        unsigned type = p[2];
        if (type == HPROF_OBJECT) rc |= edge_id(e, h, bytes_be(p + 3, id), obj);
        p += 3 + hprof_type_size(h, type);
    }
    uint32_t k = hprof_class_of_object(h, obj);
    if (k == HPROF_NONE) return rc;
    p = h->file.bytes + h->classes[k].statics_off;
    for (unsigned i = 0; i < h->classes[k].nstatics; i++) {
        unsigned type = p[id];
        if (type == HPROF_OBJECT) rc |= edge_id(e, h, bytes_be(p + id + 1, id), obj);
        p += id + 1 + hprof_type_size(h, type);
    }
    return rc;
}

static int object_edges(struct edges *e, const struct hprof *h, uint32_t obj)
{
    const struct hprof_class *k = &h->classes[h->obj_class[obj]];
    int rc = 0;
    uint32_t len;
    switch (h->obj_kind[obj]) {
    case HPROF_OBJ_INSTANCE: {
        const unsigned char *d = hprof_instance_data(h, obj, &len);
        for (uint32_t i = 0; i < k->ref_count; i++) {
            uint32_t off = h->ref_offs[k->ref_first + i];
            if (off + h->id_size <= len) rc |= edge_id(e, h, hprof_id_at(h, d + off), obj);
        }
        break;
    }
    case HPROF_OBJ_ARRAY: {
        const unsigned char *d = hprof_array_elems(h, obj, &len);
        for (uint32_t i = 0; i < len; i++) rc |= edge_id(e, h, hprof_id_at(h, d + (size_t)i * h->id_size), obj);
        break;
    }
    case HPROF_OBJ_CLASS: return class_edges(e, h, obj);
    default: return 0;
    }
    /* an object holds its class, as MAT counts it */
    if (k->object != HPROF_NONE && k->object != obj) rc |= edge_add(e, k->object);
    return rc;
}

/* The forward rows: each object's references, then the super-root's. */
static int build_edges(struct heap_graph *g, const struct hprof *h,
                       int (*progress)(void *, uint64_t, uint64_t), void *arg)
{
    uint32_t n = h->nobjects;
    struct edges e = {0};
    if (!(g->out_start = malloc(((size_t)n + 2) * sizeof *g->out_start))) return -ENOMEM;
    for (uint32_t v = 0; v < n; v++) {
        g->out_start[v] = e.n;
        if (object_edges(&e, h, v) < 0) goto nomem;
        if ((v & 0xfffff) == 0xfffff && progress && progress(arg, v, n)) {
            free(e.v);
            return -ECANCELED;
        }
    }
    g->out_start[n] = e.n;
    for (uint32_t r = 0; r < h->nroots; r++)
        if (edge_add(&e, h->roots[r].object) < 0) goto nomem;
    for (uint32_t v = 0; v < n; v++)
        if (h->obj_kind[v] == HPROF_OBJ_CLASS && edge_add(&e, v) < 0) goto nomem;
    g->out_start[n + 1] = e.n;
    g->out = e.v ? e.v : malloc(sizeof *g->out);
    return g->out ? 0 : -ENOMEM;
nomem:
    free(e.v);
    return -ENOMEM;
}

/* Predecessors, as rows like the forward ones. */
static int build_preds(const struct heap_graph *g, uint64_t **pstart, uint32_t **pred)
{
    size_t nv = (size_t)g->n + 1, ne = g->out_start[nv];
    uint64_t *start = calloc(nv + 1, sizeof *start);
    uint32_t *p = malloc((ne ? ne : 1) * sizeof *p);
    if (!start || !p) {
        free(start);
        free(p);
        return -ENOMEM;
    }
    for (size_t i = 0; i < ne; i++) start[g->out[i] + 1]++;
    for (size_t v = 0; v < nv; v++) start[v + 1] += start[v];
    for (size_t v = 0; v < nv; v++)
        for (uint64_t i = g->out_start[v]; i < g->out_start[v + 1]; i++) p[start[g->out[i]]++] = (uint32_t)v;
    for (size_t v = nv; v > 0; v--) start[v] = start[v - 1];
    start[0] = 0;
    *pstart = start;
    *pred = p;
    return 0;
}

/* Depth-first preorder from the super-root: pre[v] (HPROF_NONE if unreached), vertex[number], and each number's
 * DFS parent as a number. Returns the count reached. */
static uint32_t dfs(const struct heap_graph *g, uint32_t *pre, uint32_t *vertex, uint32_t *parent, uint32_t *stack,
                    uint64_t *next)
{
    uint32_t nv = g->n + 1, count = 0, depth = 0;
    for (uint32_t v = 0; v < nv; v++) pre[v] = HPROF_NONE;
    pre[g->n] = count;
    vertex[count] = g->n;
    parent[count++] = 0;
    stack[depth] = g->n;
    next[depth++] = g->out_start[g->n];
    while (depth) {
        uint32_t v = stack[depth - 1];
        if (next[depth - 1] == g->out_start[v + 1]) {
            depth--;
            continue;
        }
        uint32_t w = g->out[next[depth - 1]++];
        if (pre[w] != HPROF_NONE) continue;
        pre[w] = count;
        vertex[count] = w;
        parent[count++] = pre[v];
        stack[depth] = w;
        next[depth++] = g->out_start[w];
    }
    return count;
}

/* eval of the link-eval forest, path compression done with an explicit stack. */
static uint32_t eval(uint32_t v, uint32_t *ancestor, uint32_t *label, const uint32_t *semi, uint32_t *stack)
{
    if (ancestor[v] == HPROF_NONE) return v;
    uint32_t depth = 0, x = v;
    while (ancestor[ancestor[x]] != HPROF_NONE) {
        stack[depth++] = x;
        x = ancestor[x];
    }
    while (depth) {
        uint32_t y = stack[--depth], a = ancestor[y];
        if (semi[label[a]] < semi[label[y]]) label[y] = label[a];
        ancestor[y] = ancestor[a];
    }
    return label[v];
}

static int dominators(struct heap_graph *g, const struct hprof *h)
{
    uint32_t nv = g->n + 1;
    uint64_t *pstart = NULL, *next = malloc((size_t)nv * sizeof *next);
    uint32_t *pred = NULL;
    uint32_t *pre = malloc((size_t)nv * 4), *vertex = malloc((size_t)nv * 4), *parent = malloc((size_t)nv * 4);
    uint32_t *semi = malloc((size_t)nv * 4), *label = malloc((size_t)nv * 4), *ancestor = malloc((size_t)nv * 4);
    uint32_t *stack = malloc((size_t)nv * 4);
    int rc = -ENOMEM;
    if (!next || !pre || !vertex || !parent || !semi || !label || !ancestor || !stack) goto out;
    uint32_t count = dfs(g, pre, vertex, parent, stack, next);
    free(next);
    next = NULL;
    if (build_preds(g, &pstart, &pred) < 0) goto out;
    for (uint32_t i = 0; i < count; i++) {
        semi[i] = label[i] = i;
        ancestor[i] = HPROF_NONE;
    }
    for (uint32_t w = count - 1; w > 0; w--) {
        uint32_t v = vertex[w];
        for (uint64_t i = pstart[v]; i < pstart[v + 1]; i++) {
            uint32_t u = pre[pred[i]];
            if (u == HPROF_NONE) continue;
            uint32_t s = semi[eval(u, ancestor, label, semi, stack)];
            if (s < semi[w]) semi[w] = s;
        }
        ancestor[w] = parent[w];
    }
    /* idom by numbers: the nearest ancestor of w's DFS parent at or above its semidominator */
    uint32_t *idom = ancestor; /* no longer needed as the forest */
    idom[0] = 0;
    for (uint32_t w = 1; w < count; w++) {
        uint32_t d = parent[w];
        while (d > semi[w]) d = idom[d];
        idom[w] = d;
    }
    if (!(g->idom = malloc((size_t)nv * sizeof *g->idom)) || !(g->retained = calloc(nv, sizeof *g->retained)))
        goto out;
    for (uint32_t v = 0; v < nv; v++) g->idom[v] = HPROF_NONE;
    for (uint32_t w = 1; w < count; w++) {
        uint32_t v = vertex[w];
        g->idom[v] = vertex[idom[w]];
        g->retained[v] = h->obj_shallow[v];
    }
    for (uint32_t w = count - 1; w > 0; w--) g->retained[vertex[idom[w]]] += g->retained[vertex[w]];
    g->reachable = count - 1;
    g->reachable_bytes = g->retained[g->n];
    rc = 0;
out:
    free(next);
    free(pstart);
    free(pred);
    free(pre);
    free(vertex);
    free(parent);
    free(semi);
    free(label);
    free(ancestor);
    free(stack);
    return rc;
}

int heap_graph_build(struct heap_graph *g, const struct hprof *h,
                     int (*progress)(void *arg, uint64_t done, uint64_t total), void *arg)
{
    memset(g, 0, sizeof *g);
    g->n = h->nobjects;
    int rc = build_edges(g, h, progress, arg);
    if (rc == 0) {
        hprof_file_release(&h->file, h->file.size); /* the rows hold what the dominators need */
        rc = dominators(g, h);
    }
    if (rc < 0) heap_graph_free(g);
    return rc;
}

void heap_graph_free(struct heap_graph *g)
{
    free(g->out_start);
    free(g->out);
    free(g->idom);
    free(g->retained);
    memset(g, 0, sizeof *g);
}

int heap_domtree_build(struct heap_domtree *t, const struct heap_graph *g)
{
    uint32_t nv = g->n + 1;
    t->start = calloc((size_t)nv + 1, sizeof *t->start);
    t->child = malloc((size_t)nv * sizeof *t->child);
    if (!t->start || !t->child) {
        heap_domtree_free(t);
        return -ENOMEM;
    }
    for (uint32_t v = 0; v < g->n; v++)
        if (g->idom[v] != HPROF_NONE) t->start[g->idom[v] + 1]++;
    for (uint32_t v = 0; v < nv; v++) t->start[v + 1] += t->start[v];
    uint32_t *fill = malloc((size_t)nv * sizeof *fill);
    if (!fill) {
        heap_domtree_free(t);
        return -ENOMEM;
    }
    memcpy(fill, t->start, (size_t)nv * sizeof *fill);
    for (uint32_t v = 0; v < g->n; v++)
        if (g->idom[v] != HPROF_NONE) t->child[fill[g->idom[v]]++] = v;
    free(fill);
    return 0;
}

void heap_domtree_free(struct heap_domtree *t)
{
    free(t->start);
    free(t->child);
    t->start = t->child = NULL;
}
