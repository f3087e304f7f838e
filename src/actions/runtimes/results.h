/* results: the plain structs a runtime's answers come back in, whichever provider gave them (gops for Go, HotSpot
 * attach for Java, /proc and ptrace for any process, later diagtop's own agent). Renderers, panes and the CLI read
 * only these. Strings are malloc'd and owned by the struct; every struct has its _free. Untrusted bytes from an
 * agent are kept as they came (sanitized where they are shown). */
#ifndef DIAGTOP_RESULTS_H
#define DIAGTOP_RESULTS_H
#include <stddef.h>

/* ---- stacks as a runtime tells them: goroutines, Java threads (already named, no PCs) ---- */

struct rt_frame {
    char *function; /* "main.spinLeaf", "java.lang.Thread.sleep" */
    char *file;     /* NULL when unknown */
    int line;       /* 0 when unknown */
};

/* A Java monitor or java.util.concurrent lock, as a thread dump names it. */
struct rt_lock {
    char *address;    /* "0x000000069ec1a960"; NULL: none */
    char *class_name; /* "java.lang.Object", "java.util.concurrent.locks.ReentrantLock$NonfairSync" */
};

struct rt_thread {
    long long id;            /* goroutine id, Java thread's "#N"; -1 unknown */
    char *name;              /* Java thread name; NULL for goroutines */
    char *state;             /* "chan receive", "running", "TIMED_WAITING (sleeping)" */
    long long wait_seconds;  /* how long it has been blocked (Go says it in minutes from one minute on); -1 */
    int os_tid;              /* the OS thread (Java nid); 0 unknown */
    int daemon;              /* Java daemon thread */
    struct rt_frame *frames; /* innermost first */
    int nframes;
    char *created_by;        /* Go: "main.main in /src/main.go:12"; NULL */
    /* Java (the dump's lock lines): */
    double cpu_ms, elapsed_s; /* the header's cpu= and elapsed=; -1 unknown */
    char *wait_how;          /* "waiting to lock", "parking to wait for", "waiting on", "waiting to re-lock in wait()" */
    struct rt_lock waits_for;
    int held_by;             /* index in threads of the one holding waits_for; -1 none or unknown */
    struct rt_lock *holds;   /* monitors it holds ("- locked"), then ownable synchronizers (-l) */
    int nholds;
};

/* A cycle of threads each waiting for a lock the next holds, as the JVM reports it ("Found one Java-level
 * deadlock"). */
struct rt_deadlock_edge {
    char *thread;     /* the thread's name */
    char *how;        /* "waiting to lock monitor", "waiting for ownable synchronizer" */
    struct rt_lock lock;
    char *held_by;    /* the next thread's name */
};

struct rt_deadlock {
    struct rt_deadlock_edge *edges;
    int n;
};

struct rt_stack {
    char provider[16]; /* who answered: "gops", "hotspot" */
    int pid;
    struct rt_thread *threads;
    int n;
    double ms; /* the request's round trip */
    double stopped_ms; /* go-memory: how long its threads were stopped; 0 when nothing was stopped */
    struct rt_deadlock *deadlocks; /* Java: the cycles the JVM found */
    int ndeadlocks;
    int lock_holders;              /* Java: ownable synchronizers were asked for (-l): a j.u.c lock's holder is known */
};

void rt_stack_free(struct rt_stack *s);
void rt_lock_free(struct rt_lock *l);

/* ---- named values with units: memstats, runtime stats, heap info ---- */

/* RT_TIME: nanoseconds since the epoch (a moment, not a duration). */
enum rt_unit { RT_BYTES, RT_COUNT, RT_NANOSECONDS, RT_TIME, RT_RATIO, RT_BOOL, RT_TEXT };

struct rt_field {
    char *section; /* "memstats", "runtime", "heap" */
    char *label;   /* the runtime's own name, shown in text only: "heap-alloc", "OS threads" */
    char *key;     /* stable snake_case, for JSON and lookups: text_snake_key of the label ("os_threads") */
    enum rt_unit unit;
    int is_double;
    unsigned long long u; /* exact integers (bytes, counts, ns, bools) */
    double d;             /* ratios and floats */
    char *text;           /* RT_TEXT, or the value as the runtime wrote it when it could not be parsed */
};

struct rt_fields {
    char provider[16];
    struct rt_field *f;
    int n, cap;
};

/* Appends a field under the runtime's label (copies the strings); its key is text_snake_key of the label, with
 * "_2", "_3"... when another label already gave that key, so that keys stay unique. Returns 0 or -ENOMEM. */
int rt_fields_add_u64(struct rt_fields *fs, const char *section, const char *label, enum rt_unit unit,
                      unsigned long long v);
int rt_fields_add_double(struct rt_fields *fs, const char *section, const char *label, double v);
int rt_fields_add_text(struct rt_fields *fs, const char *section, const char *label, const char *text);
/* The field with this (snake_case) key, or NULL. */
const struct rt_field *rt_fields_find(const struct rt_fields *fs, const char *key);
void rt_fields_free(struct rt_fields *fs);

/* ---- a GC on request ---- */

struct rt_gc {
    char provider[16];
    long long heap_before, heap_after; /* bytes in use before and after; -1 when unknown */
    double ms;                         /* how long the request took */
    char *message;                     /* the runtime's own words ("New GC percent set to 50. ...") */
};

void rt_gc_free(struct rt_gc *g);

/* ---- what occupies the heap: classes (Java) or allocation sites (Go, native) ---- */

struct rt_heap_row {
    char *name;              /* class name, or the site's innermost function */
    struct rt_frame *stack;  /* allocation sites: the whole stack, innermost first; NULL for classes */
    int nstack;
    long long count, bytes;             /* live (in use) */
    long long alloc_count, alloc_bytes; /* allocated since start (sites); -1 */
};

struct rt_heap {
    char provider[16];
    char kind[32];     /* "class histogram", "heap profile" */
    int pid;
    double taken_at;   /* wall clock, seconds since the epoch */
    struct rt_heap_row *rows; /* by bytes, largest first */
    int n;
    long long total_count, total_bytes;
    char *saved_path;  /* where the raw profile was saved (.pb.gz), or NULL */
};

void rt_heap_free(struct rt_heap *h);

/* How a row changed since an older snapshot: rows are the same when their name and stack are. */
struct rt_heap_change {
    long long count, bytes; /* cur - old (a row absent from old grew from nothing) */
    int is_new;
};
/* One change per row of cur, into out (cur->n entries). Returns 0 or -ENOMEM. */
int rt_heap_changes(const struct rt_heap *old, const struct rt_heap *cur, struct rt_heap_change *out);
/* Sorts rows by bytes (largest first, ties by name) and fills the totals. */
void rt_heap_finish(struct rt_heap *h);

/* ---- a CPU profile ---- */

struct rt_profile_row {
    char *function;
    char *file;
    long long flat, cum; /* in the profile's unit (samples or nanoseconds) */
};

struct rt_profile {
    char provider[16];
    char format[16];   /* of the saved file: "pprof", "jfr" */
    char unit[32];     /* of flat/cum: "nanoseconds", "samples" */
    double seconds;    /* how long it sampled */
    struct rt_profile_row *rows; /* by flat, largest first */
    int n;
    long long total;
    char *saved_path;
    char note[256];    /* why rows is empty: no samples, or the saved file could not be decoded ("" otherwise) */
};

void rt_profile_free(struct rt_profile *p);

struct cpu_report;
/* The top functions of a CPU report into out's rows and total (flat: samples whose innermost frame is the function;
 * cum: those with it anywhere on the stack, once a stack; counted in samples, else in the report's cpu_ns), by
 * flat, largest first. Leaves the other fields alone. Returns 0 or -ENOMEM (the rows made so far stay for
 * rt_profile_free). */
int rt_profile_from_report(const struct cpu_report *r, int samples, struct rt_profile *out);
/* A frame's function as rows show it, malloc'd: the symbol, else module+offset, else the address. */
char *rt_frame_label(const char *function, const char *module, unsigned long long offset, unsigned long long pc);

/* ---- a file the runtime wrote for us (heap dump) ---- */

struct rt_file {
    char provider[16];
    char *path;
    unsigned long long bytes;
    double ms;
};

void rt_file_free(struct rt_file *f);

/* Deep copy of n frames (NULL on out of memory). */
struct rt_frame *rt_frames_dup(const struct rt_frame *f, int n);
void rt_frames_free(struct rt_frame *f, int n);
#endif
