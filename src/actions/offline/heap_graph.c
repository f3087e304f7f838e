/* heap_graph: the reference graph of a dump (compressed rows of object indices) and its dominators by the
 * Semi-NCA algorithm (Georgiadis; Lengauer-Tarjan's semidominators, then nearest common ancestors in the DFS
 * tree), with an explicit stack everywhere: a heap may hold a linked list millions long. */
#include "heap_graph.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/big_alloc.h"
#include "util/bytes.h"

/* The edges, reserved for the dump's reference slots (an upper bound: nulls are no edge), grown if a hostile
 * file holds more. The ids they name are looked up in batches (hprof_find_many): an id waits in ids[] with the
 * object holding it until the batch is full. */
enum { BATCH = 4096 };
struct edges {
    uint32_t *v;
    size_t n, cap;
    uint32_t *start;  /* the graph's rows: start[w] set once w's edges are next */
    uint32_t next;    /* the first object whose row start is not set yet */
    uint64_t ids[BATCH];
    uint32_t owner[BATCH], found[BATCH];
    size_t nids;
    int err; /* the first failure (-ENOMEM, -EOVERFLOW), sticky: every step after it does nothing */
};

static int edge_add(struct edges *e, uint32_t to)
{
    if (e->err) return e->err;
    if (e->n >= UINT32_MAX - 1) return e->err = -EOVERFLOW; /* rows are 32-bit offsets */
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 1 << 16;
        uint32_t *v = big_grow(e->v, e->cap * sizeof *v, cap * sizeof *v);
        if (!v) return e->err = -ENOMEM;
        e->v = v;
        e->cap = cap;
    }
    e->v[e->n++] = to;
    return 0;
}

/* Resolves the waiting ids and appends their edges, in order: a null, dangling or self reference is no edge. */
static int edges_flush(struct edges *e, const struct hprof *h)
{
    hprof_find_many(h, e->ids, e->found, e->nids);
    for (size_t i = 0; i < e->nids; i++) {
        while (e->next <= e->owner[i]) e->start[e->next++] = (uint32_t)e->n;
        if (e->found[i] != HPROF_NONE && e->found[i] != e->owner[i] && edge_add(e, e->found[i]) < 0) return e->err;
    }
    e->nids = 0;
    return 0;
}

/* An edge from self to the object an id names, once the batch is looked up. */
static int edge_id(struct edges *e, const struct hprof *h, uint64_t id, uint32_t self)
{
    if (!id || e->err) return e->err;
    e->ids[e->nids] = id;
    e->owner[e->nids++] = self;
    return e->nids == BATCH ? edges_flush(e, h) : 0;
}

uint64_t heap_graph_slots(const struct hprof *h)
{
    uint64_t slots = h->nroots;
    for (uint32_t v = 0; v < h->nobjects; v++) {
        const struct hprof_class *k = &h->classes[h->obj_class[v]];
        if (h->obj_kind[v] == HPROF_OBJ_INSTANCE) slots += k->ref_count + 1;
        else if (h->obj_kind[v] == HPROF_OBJ_ARRAY) slots += hprof_shallow(h, v) / h->layout.ref + 1;
        else if (h->obj_kind[v] == HPROF_OBJ_CLASS) slots += 6 + k->nstatics;
    }
    return slots;
}

/* A class's static references, as edges from its class object. */
struct static_edges {
    struct edges *e;
    const struct hprof *h;
    uint32_t obj;
};

static int static_edge(void *arg, const struct hprof_field *f)
{
    struct static_edges *se = arg;
    if (f->type == HPROF_OBJECT) edge_id(se->e, se->h, hprof_id_at(se->h, f->value), se->obj);
    return se->e->err;
}

/* A class object's references: superclass, loader, signers, protection domain, the constant pool's and statics'
 * objects. */
static int class_edges(struct edges *e, const struct hprof *h, uint32_t obj)
{
    unsigned id = h->id_size;
    const unsigned char *p = h->file.bytes + h->obj_off[obj];
    edge_id(e, h, bytes_be(p + id + 4, id), obj);     /* super */
    edge_id(e, h, bytes_be(p + 2 * id + 4, id), obj); /* loader */
    edge_id(e, h, bytes_be(p + 3 * id + 4, id), obj); /* signers */
    edge_id(e, h, bytes_be(p + 4 * id + 4, id), obj); /* protection domain */
    p += 7 * id + 8;
    unsigned ncp = (unsigned)bytes_be(p, 2);
    p += 2;
    for (unsigned i = 0; i < ncp; i++) {
        unsigned type = p[2];
        if (type == HPROF_OBJECT) edge_id(e, h, bytes_be(p + 3, id), obj);
        p += 3 + hprof_type_size(h, type);
    }
    uint32_t k = hprof_class_of_object(h, obj);
    struct static_edges se = {e, h, obj};
    if (k != HPROF_NONE) hprof_class_statics(h, k, static_edge, &se);
    return e->err;
}

static int object_edges(struct edges *e, const struct hprof *h, uint32_t obj)
{
    const struct hprof_class *k = &h->classes[h->obj_class[obj]];
    uint32_t len;
    switch (h->obj_kind[obj]) {
    case HPROF_OBJ_INSTANCE: {
        const unsigned char *d = hprof_instance_data(h, obj, &len);
        for (uint32_t i = 0; i < k->ref_count; i++) {
            uint32_t off = h->ref_offs[k->ref_first + i];
            if (off + h->id_size <= len) edge_id(e, h, hprof_id_at(h, d + off), obj);
        }
        break;
    }
    case HPROF_OBJ_ARRAY: {
        const unsigned char *d = hprof_array_elems(h, obj, &len);
        for (uint32_t i = 0; i < len; i++) edge_id(e, h, hprof_id_at(h, d + (size_t)i * h->id_size), obj);
        break;
    }
    case HPROF_OBJ_CLASS: return class_edges(e, h, obj);
    default: return 0;
    }
    /* an object holds its class, as MAT counts it */
    if (k->object != HPROF_NONE) edge_id(e, h, h->obj_id[k->object], obj);
    return e->err;
}

/* One thread's share of the rows: objects [from, to), their file pages dropped behind it as it goes. */
struct edge_job {
    const struct hprof *h;
    struct edges *e;
    uint32_t from, to;
    int (*progress)(void *, uint64_t, uint64_t); /* the first job's only */
    void *arg;
    volatile int *stop;
    int rc;
};

static void *edge_job_run(void *arg)
{
    struct edge_job *j = arg;
    const struct hprof *h = j->h;
    uint64_t released = j->from < h->nobjects ? h->obj_off[j->from] : 0, first = released;
    j->e->next = j->from;
    for (uint32_t v = j->from; v < j->to && j->rc == 0; v++) {
        j->rc = object_edges(j->e, h, v);
        if (h->obj_off[v] > released + (16u << 20)) {
            hprof_file_release(&h->file, first, h->obj_off[v] - (1u << 20));
            released = h->obj_off[v];
            if (*j->stop || (j->progress && j->progress(j->arg, v, h->nobjects))) {
                *j->stop = 1;
                j->rc = -ECANCELED;
            }
        }
    }
    if (j->rc == 0) j->rc = edges_flush(j->e, h);
    while (j->rc == 0 && j->e->next < j->to) j->e->start[j->e->next++] = (uint32_t)j->e->n;
    return NULL;
}

static void edges_free(struct edges *e)
{
    if (e) big_free(e->v, e->cap * sizeof *e->v);
    free(e);
}

/* The rows, built by two threads over the two halves of the objects (the second's rows then moved after the
 * first's), then the super-root's: every GC root and every class. */
static int build_edges(struct heap_graph *g, const struct hprof *h,
                       int (*progress)(void *, uint64_t, uint64_t), void *arg)
{
    uint32_t n = h->nobjects, mid = n / 2;
    struct edges *e = calloc(1, sizeof *e), *e2 = calloc(1, sizeof *e2);
    int rc = -ENOMEM;
    volatile int stop = 0;
    if (!e || !e2 || !(g->out_start = big_alloc(((size_t)n + 2) * sizeof *g->out_start))) goto out;
    e->cap = e2->cap = heap_graph_slots(h) + 16; /* reservations: only what is written is ever touched */
    if (!(e->v = big_alloc(e->cap * sizeof *e->v)) || !(e2->v = big_alloc(e2->cap * sizeof *e2->v))) goto out;
    e->start = e2->start = g->out_start;
    struct edge_job j1 = {h, e, 0, mid, progress, arg, &stop, 0}, j2 = {h, e2, mid, n, NULL, NULL, &stop, 0};
    pthread_t t;
    int threaded = n > 100000 && pthread_create(&t, NULL, edge_job_run, &j2) == 0;
    edge_job_run(&j1);
    if (threaded) pthread_join(t, NULL);
    else edge_job_run(&j2);
    rc = j1.rc ? j1.rc : j2.rc;
    if (rc < 0) goto out;
    for (uint32_t v = mid; v < n; v++) g->out_start[v] += (uint32_t)e->n;
    for (size_t i = 0; i < e2->n && rc == 0; i++) rc = edge_add(e, e2->v[i]);
    g->out_start[n] = (uint32_t)e->n;
    for (uint32_t r = 0; r < h->nroots && rc == 0; r++) rc = edge_add(e, h->roots[r].object);
    for (uint32_t v = 0; v < n && rc == 0; v++)
        if (h->obj_kind[v] == HPROF_OBJ_CLASS) rc = edge_add(e, v);
    if (rc < 0) goto out;
    g->out_start[n + 1] = (uint32_t)e->n;
    g->out = e->v;
    g->out_cap = e->cap;
    e->v = NULL;
out:
    edges_free(e);
    edges_free(e2);
    return rc;
}

/* Predecessors, as rows like the forward ones. */
static int build_preds(const struct heap_graph *g, uint32_t **pstart, uint32_t **pred)
{
    size_t nv = (size_t)g->n + 1, ne = g->out_start[nv];
    uint32_t *start = big_alloc((nv + 1) * sizeof *start);
    uint32_t *p = big_alloc(ne * sizeof *p);
    if (!start || !p) {
        big_free(start, (nv + 1) * sizeof *start);
        big_free(p, ne * sizeof *p);
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
                    uint32_t *next)
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
    size_t nv = (size_t)g->n + 1, ne = g->out_start[nv], w4 = nv * 4;
    uint32_t *pstart = NULL, *next = big_alloc(nv * sizeof *next);
    uint32_t *pred = NULL;
    uint32_t *pre = big_alloc(w4), *vertex = big_alloc(w4), *parent = big_alloc(w4);
    uint32_t *semi = big_alloc(w4), *label = big_alloc(w4), *ancestor = big_alloc(w4);
    uint32_t *stack = big_alloc(w4);
    int rc = -ENOMEM;
    if (!next || !pre || !vertex || !parent || !semi || !label || !ancestor || !stack) goto out;
    uint32_t count = dfs(g, pre, vertex, parent, stack, next);
    big_free(next, nv * sizeof *next);
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
    big_free(pstart, (nv + 1) * sizeof *pstart);
    big_free(pred, ne * sizeof *pred);
    pstart = NULL;
    pred = NULL;
    /* idom by numbers: the nearest ancestor of w's DFS parent at or above its semidominator */
    uint32_t *idom = ancestor; /* no longer needed as the forest */
    idom[0] = 0;
    for (uint32_t w = 1; w < count; w++) {
        uint32_t d = parent[w];
        while (d > semi[w]) d = idom[d];
        idom[w] = d;
    }
    if (!(g->idom = big_alloc(w4)) || !(g->retained = big_alloc(nv * sizeof *g->retained))) goto out;
    memset(g->idom, 0xff, w4); /* HPROF_NONE: unreachable */
    for (uint32_t w = 1; w < count; w++) {
        uint32_t v = vertex[w];
        g->idom[v] = vertex[idom[w]];
        g->retained[v] = hprof_shallow(h, v);
    }
    for (uint32_t w = count - 1; w > 0; w--) g->retained[vertex[idom[w]]] += g->retained[vertex[w]];
    g->reachable = count - 1;
    g->reachable_bytes = g->retained[g->n];
    rc = 0;
out:
    big_free(next, nv * sizeof *next);
    big_free(pstart, (nv + 1) * sizeof *pstart);
    big_free(pred, ne * sizeof *pred);
    big_free(pre, w4);
    big_free(vertex, w4);
    big_free(parent, w4);
    big_free(semi, w4);
    big_free(label, w4);
    big_free(ancestor, w4);
    big_free(stack, w4);
    return rc;
}

int heap_graph_build(struct heap_graph *g, const struct hprof *h,
                     int (*progress)(void *arg, uint64_t done, uint64_t total), void *arg)
{
    memset(g, 0, sizeof *g);
    g->n = h->nobjects;
    int rc = build_edges(g, h, progress, arg);
    if (rc == 0) {
        hprof_file_release(&h->file, 0, h->file.size); /* the rows hold what the dominators need */
        rc = dominators(g, h);
    }
    if (rc < 0) heap_graph_free(g);
    return rc;
}

void heap_graph_free(struct heap_graph *g)
{
    size_t nv = (size_t)g->n + 1;
    big_free(g->out_start, (nv + 1) * sizeof *g->out_start);
    big_free(g->out, g->out_cap * sizeof *g->out);
    big_free(g->idom, nv * sizeof *g->idom);
    big_free(g->retained, nv * sizeof *g->retained);
    memset(g, 0, sizeof *g);
}

int heap_domtree_build(struct heap_domtree *t, const struct heap_graph *g)
{
    size_t nv = (size_t)g->n + 1;
    t->n = g->n;
    t->start = big_alloc((nv + 1) * sizeof *t->start);
    t->child = big_alloc(nv * sizeof *t->child);
    uint32_t *fill = big_alloc(nv * sizeof *fill);
    if (!t->start || !t->child || !fill) {
        big_free(fill, nv * sizeof *fill);
        heap_domtree_free(t);
        return -ENOMEM;
    }
    for (uint32_t v = 0; v < g->n; v++)
        if (g->idom[v] != HPROF_NONE) t->start[g->idom[v] + 1]++;
    for (size_t v = 0; v < nv; v++) t->start[v + 1] += t->start[v];
    memcpy(fill, t->start, nv * sizeof *fill);
    for (uint32_t v = 0; v < g->n; v++)
        if (g->idom[v] != HPROF_NONE) t->child[fill[g->idom[v]]++] = v;
    big_free(fill, nv * sizeof *fill);
    return 0;
}

void heap_domtree_free(struct heap_domtree *t)
{
    size_t nv = (size_t)t->n + 1;
    big_free(t->start, (nv + 1) * sizeof *t->start);
    big_free(t->child, nv * sizeof *t->child);
    t->start = t->child = NULL;
}
