/* heap_analysis: what a JVM heap dump (HPROF) says, read offline: the class histogram with retained sizes, the
 * biggest dominators, a class's instances, the merged shortest paths from GC roots that keep them alive, leak
 * suspects, an object's fields. The API room offline/ shows the front ends; results are plain data. */
#ifndef DIAGTOP_HEAP_ANALYSIS_H
#define DIAGTOP_HEAP_ANALYSIS_H
#include <stddef.h>
#include <stdint.h>

struct heap_analysis;

struct heap_analysis_opts {
    const char *tmpdir;      /* for a .gz's inflated copy; NULL: $TMPDIR or /tmp */
    const char *layout;      /* "compressed", "uncompressed", "uncompressed-class"; NULL: inferred */
    uint64_t max_memory;     /* refuse when the index would need more; 0: half of MemAvailable */
    int histogram_only;      /* no graph: counts and shallow sizes (what --diff needs of the older dump) */
    /* called now and then; nonzero cancels (Esc in the TUI) */
    int (*progress)(void *arg, const char *phase, uint64_t done, uint64_t total);
    void *progress_arg;
};

struct heap_summary {
    uint64_t file_bytes, dump_bytes; /* on disk, and inflated */
    int gzipped;
    unsigned id_size;
    const char *layout;
    unsigned layout_matched, layout_tried;
    uint64_t timestamp_ms;
    uint64_t objects, classes, roots, shallow_bytes;
    uint64_t reachable, reachable_bytes;        /* through strong references from GC roots and classes */
    uint64_t weak_only, weak_only_bytes;        /* the rest: only weak, soft or phantom references hold them */
    uint64_t index_bytes;                       /* what this analysis holds in memory */
};

struct heap_class_row {
    const char *name;
    uint64_t count, shallow, retained; /* retained: what freeing every instance gives back at least (dominators) */
};

struct heap_object_row {
    uint64_t id;
    const char *class_name; /* for a class object, the class it is (is_class set) */
    int is_class;
    uint64_t shallow, retained;
    int reachable;
};

/* A node of the merged paths: one step from its parent (a field, an array slot, a static), the objects there of
 * one class, and how many of the instances asked about go through it. */
struct heap_path_node {
    char *label;           /* "KEEP (static)", "table", "[]", or for a top node the root: "class Retention" */
    const char *class_name;
    uint64_t object;       /* the object there when it is one object (single), else the first seen */
    int single;
    uint64_t object_retained; /* that object's retained size, when single */
    uint64_t instances, retained; /* the instances asked about below it, and their retained bytes */
    uint32_t parent, first_child, next_sibling; /* HEAP_NO_NODE where none */
};
#define HEAP_NO_NODE UINT32_MAX

struct heap_paths {
    char *what;                /* "instances of BarLeakedThing" or "object 0x..." */
    uint64_t asked, reached, weak_only; /* the instances looked at; with a path; held only through weak refs */
    uint64_t retained;
    struct heap_path_node *nodes;
    size_t nnodes;             /* nodes[0..] in creation order: parents before children */
};

struct heap_suspect {
    uint64_t id;
    const char *class_name; /* for a class object, the class it is (is_class set) */
    int is_class;
    uint64_t retained;
    char *path;                /* from its GC root: "class Retention" */
    uint64_t accumulation_id;  /* where the retained bytes spread out over many objects */
    const char *accumulation_class;
    uint64_t accumulation_retained, accumulation_children;
    const char *children_class; /* the class most of those children are, and how many */
    uint64_t children_class_count, children_class_retained;
};

struct heap_field {
    char *name;                /* "id", "payload", "[3]", "static KEEP" */
    const char *type;          /* "int", "object" ... */
    char *value;               /* the value as text; for a reference its id, class and, for a String, the text */
    uint64_t ref;              /* a reference's id, 0 otherwise */
};

/* One class's change between two dumps. */
struct heap_diff_row {
    const char *name;
    uint64_t count, shallow;   /* in the newer dump */
    int64_t dcount, dshallow;  /* newer minus older */
};

/* What to ask of a dump: NULL or 0 where not asked; none of cls, paths, object, diff and share: the default
 * report (histogram and the biggest dominators). */
struct heap_query {
    const char *cls, *paths, *object, *diff; /* --class, --paths, --object, --diff OLD */
    size_t count;           /* instances listed or followed, array elements shown; 0: each one's default */
    double share;           /* --suspects: this share of the reachable heap or more */
    int histogram;          /* the histogram even with other questions (JSON always has it) */
    const struct heap_analysis_opts *diff_opts; /* how to open the older dump (its histogram only) */
};

/* Everything asked, as the renderers take it, owning what it points at (heap_report_free). */
struct heap_report {
    const char *path;
    struct heap_summary summary;
    struct heap_class_row *histogram; size_t nhistogram;
    struct heap_object_row *dominators; size_t ndominators;
    const char *instances_of; struct heap_object_row *instances; size_t ninstances; uint64_t instances_total;
    struct heap_paths *paths;
    struct heap_suspect *suspects; size_t nsuspects; double suspect_share;
    struct heap_object_row *object; struct heap_field *fields; size_t nfields;
    const char *diff_path; struct heap_diff_row *diff; size_t ndiff;
    size_t limit; /* rows shown of the histogram and the diff (JSON has them all) */
    /* owned, not rendered */
    struct heap_paths paths_store;
    struct heap_object_row object_store;
    struct heap_class_row *old_histogram;
    struct heap_analysis *older;
};

/* Answers q from a into r (zeroed first; path and limit are the caller's to set after). Returns 0, or -1 with err
 * set (an unknown class or object, an older dump that does not open, memory); r is then freed. */
int heap_report_build(struct heap_analysis *a, const struct heap_query *q, struct heap_report *r, char *err,
                      size_t errlen);
void heap_report_free(struct heap_report *r);

int heap_analysis_open(struct heap_analysis **out, const char *path, const struct heap_analysis_opts *o, char *err,
                       size_t errlen);
void heap_analysis_close(struct heap_analysis *a);

void heap_analysis_summary(const struct heap_analysis *a, struct heap_summary *s);
/* Every class with instances, biggest retained first (shallow first without a graph). Freed with free(). */
int heap_analysis_histogram(const struct heap_analysis *a, struct heap_class_row **rows, size_t *n);
/* The objects only the super-root dominates (GC roots and classes, or what only they hold), biggest first. */
int heap_analysis_dominators(const struct heap_analysis *a, size_t limit, struct heap_object_row **rows, size_t *n);
/* A class's instances (exact name, or a unique suffix such as "HashMap$Node"), biggest retained first; *total
 * counts them all. Returns 0, or -1 with err set (no such class, or several match). */
int heap_analysis_instances(const struct heap_analysis *a, const char *cls, size_t limit, struct heap_object_row **rows,
                            size_t *n, uint64_t *total, char *err, size_t errlen);
/* The shortest paths from GC roots to up to count instances (biggest retained first) of a class, or to one
 * object given as 0xID, merged by step and class. */
int heap_analysis_paths(struct heap_analysis *a, const char *what, size_t count, struct heap_paths *p, char *err,
                        size_t errlen);
void heap_paths_free(struct heap_paths *p);
/* The path of a leaf in one line: "Retention.KEEP (static) -> java.util.HashMap.table -> ...". Freed with free(). */
char *heap_paths_chain(const struct heap_paths *p, uint32_t leaf);
/* Objects retaining at least share (0..1) of the reachable heap, each with its path and accumulation point. */
int heap_analysis_suspects(struct heap_analysis *a, double share, struct heap_suspect **s, size_t *n);
void heap_suspects_free(struct heap_suspect *s, size_t n);
/* An object's fields (an array's first elements: at most limit). */
int heap_analysis_fields(const struct heap_analysis *a, const char *id, size_t limit, struct heap_field **f, size_t *n,
                         struct heap_object_row *self, char *err, size_t errlen);
void heap_fields_free(struct heap_field *f, size_t n);
/* Class by class (by name), the newer histogram against the older, biggest growth in bytes first; classes gone
 * from the newer are rows with count 0. Freed with free(). */
int heap_histogram_diff(const struct heap_class_row *newer, size_t nn, const struct heap_class_row *older, size_t no,
                        struct heap_diff_row **rows, size_t *n);
#endif
