/* hprof_read: an HPROF 1.0.2 heap dump (HotSpot's GC.heap_dump, jmap -dump) read into compact arrays: one entry
 * per object in the file's order with a hash from id to index, a class table, the GC roots, and the strings the names need. Every length is checked
 * against the record holding it; a bad file gives one error naming the offset and the record. */
#ifndef DIAGTOP_HPROF_READ_H
#define DIAGTOP_HPROF_READ_H
#include <stddef.h>
#include <stdint.h>

#include "hprof_file.h"

#define HPROF_NONE UINT32_MAX

/* HPROF basic types (the u1 in field descriptors and primitive arrays). */
enum hprof_type {
    HPROF_OBJECT = 2, HPROF_BOOLEAN = 4, HPROF_CHAR = 5, HPROF_FLOAT = 6, HPROF_DOUBLE = 7,
    HPROF_BYTE = 8, HPROF_SHORT = 9, HPROF_INT = 10, HPROF_LONG = 11,
};

enum hprof_class_kind { HPROF_CLASS_INSTANCE, HPROF_CLASS_OBJ_ARRAY, HPROF_CLASS_PRIM_ARRAY };

/* What kind of object an entry is: the sub-record that wrote it. */
enum hprof_obj_kind { HPROF_OBJ_INSTANCE, HPROF_OBJ_ARRAY, HPROF_OBJ_PRIM_ARRAY, HPROF_OBJ_CLASS };

/* How the JVM lays objects out, which HPROF does not say: inferred from the addresses of objects written one
 * after another (their distance is the first one's size), or told. */
struct hprof_layout {
    unsigned header;       /* an instance's header: 12 with compressed class pointers, else 16 */
    unsigned array_header; /* an array's, its length included: 16 or 24 */
    unsigned ref;          /* a reference field or element: 4 with compressed oops, else 8 */
    const char *name;
    unsigned matched, tried; /* of the distances looked at, how many this layout explains */
};

struct hprof_class {
    uint64_t id;          /* the class object's id (0 for the synthetic primitive-array classes) */
    uint64_t super_id, loader_id;
    uint32_t super;       /* class index, or HPROF_NONE */
    uint32_t object;      /* the class object's object index, or HPROF_NONE */
    char *name;           /* as Java writes it: java.util.HashMap$Node[] */
    uint8_t kind;         /* enum hprof_class_kind */
    uint8_t elem_type;    /* for primitive arrays */
    uint8_t is_reference; /* java.lang.ref.Reference or a subclass: its referent is not a strong reference */
    uint32_t instance_bytes; /* the instance's field bytes as HPROF writes them (ids at id size) */
    uint32_t nrefs_all;      /* reference fields of an instance, the superclasses' included */
    uint32_t ref_first, ref_count; /* this class's strong reference fields: offsets in hprof->ref_offs */
    uint64_t statics_off;    /* file offset of its CLASS DUMP's static fields (after their u2 count), 0 if none */
    uint64_t fields_off;     /* and of its instance field descriptors (after their u2 count) */
    uint16_t nstatics, nfields;
    uint32_t statics_bytes;  /* the static fields' bytes in the JVM's layout */
};

/* GC root kinds, as HPROF names them. */
enum hprof_root_kind {
    ROOT_UNKNOWN, ROOT_JNI_GLOBAL, ROOT_JNI_LOCAL, ROOT_JAVA_FRAME, ROOT_NATIVE_STACK, ROOT_STICKY_CLASS,
    ROOT_THREAD_BLOCK, ROOT_MONITOR_USED, ROOT_THREAD_OBJECT, ROOT_OTHER, ROOT_KINDS
};
extern const char *const hprof_root_names[ROOT_KINDS];

struct hprof_root {
    uint32_t object;
    uint8_t kind;
    uint32_t thread_serial; /* for frame, local and thread roots; 0 otherwise */
};

struct hprof_string {
    uint64_t id;
    uint64_t off;
    uint32_t len;
};

struct hprof {
    struct hprof_file file;
    unsigned id_size;
    uint64_t timestamp_ms;
    struct hprof_layout layout;

    /* one entry per object, in the file's order (HotSpot's is the heap's, region by region); with counts_only,
     * only the first ones (enough to infer the layout) */
    uint32_t nobjects;
    uint64_t objects_seen;     /* every object in the file */
    uint64_t *class_count, *class_shallow; /* per class index: its instances and their bytes in the JVM */
    size_t obj_cap;     /* the arrays' room: as many objects as the file could hold */
    uint64_t *obj_id;
    uint64_t *obj_off;  /* file offset of the sub-record's body (its id) */
    uint32_t *obj_class;
    uint8_t *obj_kind;
    uint32_t *obj_shallow8; /* bytes in the JVM, by the layout, in 8-byte units (every size is a multiple): 32 GiB
                             * at most, twice HotSpot's biggest array; hprof_shallow() has bytes */

    uint32_t nclasses, nreal_classes; /* the real ones first, sorted by id; then synthetic ones */
    struct hprof_class *classes;
    uint32_t class_object; /* java.lang.Class's index (every class object's class), or HPROF_NONE */
    uint32_t *ref_offs;    /* byte offsets of strong reference fields inside instance data */
    size_t nref_offs;

    uint32_t nroots;
    struct hprof_root *roots;
    uint32_t *thread_objects; /* by thread serial: the thread object, HPROF_NONE */
    uint32_t nthreads;

    size_t nstrings;
    struct hprof_string *strings; /* sorted by id */

    /* lookup of an id: open addressing, each slot an object index + 1 (0: empty) */
    uint32_t *hash;
    uint64_t hash_mask;
};

struct hprof_read_opts {
    const char *tmpdir;
    const struct hprof_layout *layout; /* NULL: infer it */
    int counts_only; /* per class counts and bytes, no index of objects (a histogram in one streaming pass) */
    int (*progress)(void *arg, uint64_t done, uint64_t total); /* nonzero: stop (cancelled) */
    void *progress_arg;
};

/* Reads the dump at path. Returns 0, or -1 with err set; -2 when progress cancelled. */
int hprof_read(struct hprof *h, const char *path, const struct hprof_read_opts *o, char *err, size_t errlen);
void hprof_free(struct hprof *h);

static inline uint64_t hprof_shallow(const struct hprof *h, uint32_t obj) { return (uint64_t)h->obj_shallow8[obj] << 3; }
/* A JVM class name as Java writes it (java/util/HashMap$Node or java.util.HashMap$Node -> java.util.HashMap$Node,
 * [[I -> int[][], [Ljava.lang.String; -> java.lang.String[]), malloc'd; NULL when out of memory. */
char *hprof_java_name(const char *s, uint32_t n);
/* The object index of id, or HPROF_NONE. */
uint32_t hprof_find(const struct hprof *h, uint64_t id);
/* The same for n ids at once, the table's and the ids' cache lines fetched ahead: three times the lookups per
 * second of one at a time, where the index is larger than the caches. */
void hprof_find_many(const struct hprof *h, const uint64_t *ids, uint32_t *out, size_t n);
/* A string's bytes (modified UTF-8, not terminated) and length; NULL if the id names none. */
const char *hprof_string(const struct hprof *h, uint64_t id, uint32_t *len);
/* An id read at p (the caller checked bounds). */
uint64_t hprof_id_at(const struct hprof *h, const unsigned char *p);
/* A basic type's size in the file, 0 for an unknown type. */
unsigned hprof_type_size(const struct hprof *h, unsigned type);
/* An instance's field data, its length in *len; NULL for other kinds. */
const unsigned char *hprof_instance_data(const struct hprof *h, uint32_t obj, uint32_t *len);
/* An object array's element count and first element; NULL for other kinds. */
const unsigned char *hprof_array_elems(const struct hprof *h, uint32_t obj, uint32_t *count);
/* The class index of a class object, or HPROF_NONE. */
uint32_t hprof_class_of_object(const struct hprof *h, uint32_t obj);
/* One field of an instance (its superclasses' included) or one static of a class. */
struct hprof_field {
    uint64_t name_id; /* its name's string id: hprof_field_name, looked up only when wanted */
    unsigned type;
    const unsigned char *value; /* hprof_type_size(type) bytes, big-endian */
    uint32_t declared_in;       /* the class index declaring it */
};
/* Calls fn on each field of instance obj, own class first, then up; stops at fn's first nonzero return and
 * returns it. A field whose value would lie past the instance's data ends the walk. */
int hprof_instance_fields(const struct hprof *h, uint32_t obj, int (*fn)(void *arg, const struct hprof_field *f),
                          void *arg);
/* The same over a class's statics. */
int hprof_class_statics(const struct hprof *h, uint32_t cls, int (*fn)(void *arg, const struct hprof_field *f),
                        void *arg);
/* A field's name (modified UTF-8, not terminated) and length; NULL when the dump lacks the string. */
const char *hprof_field_name(const struct hprof *h, const struct hprof_field *f, uint32_t *len);
/* Whether a field is named name. */
int hprof_field_is(const struct hprof *h, const struct hprof_field *f, const char *name);
/* A field's value as an integer (sign-extended for signed types), or its id for a reference. */
int64_t hprof_field_int(const struct hprof *h, const struct hprof_field *f);
/* The known layouts, the first being HotSpot's default on 64 bits (compressed oops and class pointers), the
 * last a 32-bit JVM's. */
#define HPROF_LAYOUTS 4
extern const struct hprof_layout hprof_layouts[HPROF_LAYOUTS];
#endif
