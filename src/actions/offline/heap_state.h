/* heap_state: what an open heap analysis holds, shared by heap_analysis.c (histogram, dominators, suspects,
 * fields) and heap_paths.c (paths from GC roots). Not seen outside offline/. */
#ifndef DIAGTOP_HEAP_STATE_H
#define DIAGTOP_HEAP_STATE_H
#include <stddef.h>

#include "heap_analysis.h"
#include "heap_graph.h"
#include "hprof_read.h"

struct heap_analysis {
    struct hprof h;
    struct heap_graph g;
    int has_graph;
    struct heap_domtree dt;   /* built on first use */
    uint32_t *bfs_parent;     /* shortest-path parents, built on first use (n: the super-root) */
};

/* The text of a java.lang.String object (UTF-8, at most n - 1 bytes, shortened with "..."), or -1 if it is none. */
int heap_string_text(const struct hprof *h, uint32_t obj, char *buf, size_t n);
/* How a GC root or class at object v is named: "class Retention", "thread main", "JNI global". */
void heap_root_label(const struct hprof *h, uint32_t v, char *buf, size_t n);
/* The step from one object to another it refers to: "table", "[]", "KEEP (static)", "<class loader>". */
void heap_edge_label(const struct hprof *h, uint32_t from, uint32_t to, char *buf, size_t n);
/* A class object's class's name, else its own class's. */
const char *heap_display_class(const struct hprof *h, uint32_t v);
int heap_ensure_bfs(struct heap_analysis *a);
int heap_ensure_domtree(struct heap_analysis *a);
/* The object a "0x..." text names, or HPROF_NONE (not such a text, or no such object). */
uint32_t heap_object_named(const struct hprof *h, const char *text);
/* Every instance of a class (a name as heap_analysis_instances takes it), in the file's order, malloc'd. Returns
 * 0, or -1 with err set. */
int heap_class_objects(const struct heap_analysis *a, const char *cls, uint32_t **objs, size_t *n, char *err,
                       size_t errlen);
/* A one-object path from its root, as heap_paths_chain writes it. */
char *heap_object_chain(struct heap_analysis *a, uint32_t v);
#endif
