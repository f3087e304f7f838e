#include "dwarf_scopes.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define UNIT_BUCKETS 256
#define MAX_DEPTH 64      /* nesting of namespaces, blocks and inlined calls followed */
#define OVERLAP_LOOKBACK 8 /* earlier ranges checked when the nearest does not contain the pc */

struct range {
    Dwarf_Addr lo, hi;
    size_t order;  /* of the DIE in the unit: aliases share a range (gas emits __clone3, __GI___clone3 and
                    * clone3 for one function), and the first, as libdw's walk meets it, is the one named */
    Dwarf_Die die; /* the function */
};

struct unit {
    const void *key; /* the unit DIE's address in the mapped DWARF: unique while the modules live */
    struct range *r;
    size_t n, cap;
    struct unit *next;
};

struct dwarf_scopes {
    struct unit *buckets[UNIT_BUCKETS];
};

struct dwarf_scopes *dwarf_scopes_new(void) { return calloc(1, sizeof(struct dwarf_scopes)); }

void dwarf_scopes_clear(struct dwarf_scopes *ds)
{
    for (int i = 0; i < UNIT_BUCKETS; i++) {
        for (struct unit *u = ds->buckets[i], *next; u; u = next) {
            next = u->next;
            free(u->r);
            free(u);
        }
        ds->buckets[i] = NULL;
    }
}

void dwarf_scopes_free(struct dwarf_scopes *ds)
{
    if (!ds) return;
    dwarf_scopes_clear(ds);
    free(ds);
}

static int add_range(struct unit *u, Dwarf_Addr lo, Dwarf_Addr hi, const Dwarf_Die *die)
{
    if (hi <= lo) return 0;
    if (u->n == u->cap) {
        size_t c = u->cap ? u->cap * 2 : 256;
        struct range *nr = realloc(u->r, c * sizeof *nr);
        if (!nr) return -1;
        u->r = nr;
        u->cap = c;
    }
    u->r[u->n] = (struct range){lo, hi, u->n, *die};
    u->n++;
    return 0;
}

/* Every range of a function's code (DW_AT_low_pc/high_pc, or DW_AT_ranges). */
static int add_function(struct unit *u, Dwarf_Die *die)
{
    Dwarf_Addr base, lo, hi;
    ptrdiff_t off = 0;
    while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0)
        if (add_range(u, lo, hi, die) < 0) return -1;
    return 0;
}

/* Functions are the unit's children, or inside namespaces, classes and modules (C++, Fortran): one walk. */
static int index_children(struct unit *u, Dwarf_Die *parent, int depth)
{
    Dwarf_Die child;
    if (depth > MAX_DEPTH || dwarf_child(parent, &child) != 0) return 0;
    do {
        switch (dwarf_tag(&child)) {
        case DW_TAG_subprogram:
        case DW_TAG_entry_point:
            if (add_function(u, &child) < 0) return -1;
            break;
        case DW_TAG_namespace:
        case DW_TAG_class_type:
        case DW_TAG_structure_type:
        case DW_TAG_union_type:
        case DW_TAG_module:
            if (index_children(u, &child, depth + 1) < 0) return -1;
            break;
        default:
            break;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return 0;
}

static int by_lo(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static struct unit *unit_of(struct dwarf_scopes *ds, Dwarf_Die *cu)
{
    unsigned h = (unsigned)(((uintptr_t)cu->addr >> 4) % UNIT_BUCKETS);
    for (struct unit *u = ds->buckets[h]; u; u = u->next)
        if (u->key == cu->addr) return u;
    struct unit *u = calloc(1, sizeof *u);
    if (!u) return NULL;
    u->key = cu->addr;
    if (index_children(u, cu, 0) < 0) {
        free(u->r);
        free(u);
        return NULL;
    }
    qsort(u->r, u->n, sizeof *u->r, by_lo);
    u->next = ds->buckets[h];
    ds->buckets[h] = u;
    return u;
}

static Dwarf_Die *function_at(struct unit *u, Dwarf_Addr addr)
{
    size_t lo = 0, hi = u->n; /* the first range starting after addr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u->r[mid].lo <= addr) lo = mid + 1;
        else hi = mid;
    }
    /* The containing range that starts last; of aliases starting there, the first in the unit. */
    struct range *best = NULL;
    for (size_t i = lo, k = 0; i > 0 && (best || k < OVERLAP_LOOKBACK); i--, k++) {
        struct range *r = &u->r[i - 1];
        if (best && r->lo < best->lo) break;
        if (addr < r->hi) best = r;
    }
    return best ? &best->die : NULL;
}

/* The child of die whose code contains addr (an inlined call or a block), if any. */
static int child_at(Dwarf_Die *die, Dwarf_Addr addr, Dwarf_Die *out)
{
    if (dwarf_child(die, out) != 0) return 0;
    do {
        int tag = dwarf_tag(out);
        if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
             tag == DW_TAG_catch_block || tag == DW_TAG_with_stmt) && dwarf_haspc(out, addr) > 0)
            return 1;
    } while (dwarf_siblingof(out, out) == 0);
    return 0;
}

int dwarf_scopes_chain(struct dwarf_scopes *ds, Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die **chain)
{
    *chain = NULL;
    struct unit *u = unit_of(ds, cu);
    if (!u) return -1;
    Dwarf_Die *fn = function_at(u, addr);
    if (!fn) return 0;
    Dwarf_Die path[MAX_DEPTH];
    int n = 0;
    path[n++] = *fn;
    while (n < MAX_DEPTH && child_at(&path[n - 1], addr, &path[n])) n++;
    Dwarf_Die *c = malloc((size_t)n * sizeof *c);
    if (!c) return -1;
    for (int i = 0; i < n; i++) c[i] = path[n - 1 - i]; /* innermost first */
    *chain = c;
    return n;
}
