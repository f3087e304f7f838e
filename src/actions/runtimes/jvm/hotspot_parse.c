#include "hotspot_parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

/* Bounds on what one reply may make us hold: the reply itself is capped by the attach client. */
#define MAX_STRING 1024       /* a thread or class name, a function, a file */
#define MAX_FRAMES 4096       /* HotSpot prints at most MaxJavaStackTraceDepth (1024 by default) */
#define MAX_THREADS 1000000
#define MAX_ROWS 1000000
#define MAX_NAME_LINES 16     /* a thread name with newlines in it spans lines */

struct cursor {
    const char *p, *end;
};

/* The next line without its newline (and a '\r' before it). Returns 0 at the end. */
static int next_line(struct cursor *c, const char **line, size_t *len)
{
    if (c->p >= c->end) return 0;
    const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
    const char *e = nl ? nl : c->end;
    *line = c->p;
    *len = (size_t)(e - c->p);
    if (*len && e[-1] == '\r') (*len)--;
    c->p = nl ? nl + 1 : c->end;
    return 1;
}

static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t')) (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r')) (*n)--;
}

static int starts(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    return n >= k && memcmp(s, prefix, k) == 0;
}

/* A bounded, NUL-terminated copy (NUL bytes from the peer end the string early: they are never meaningful). */
static char *dupn(const char *s, size_t n)
{
    if (n > MAX_STRING) n = MAX_STRING;
    char *c = malloc(n + 1);
    if (!c) return NULL;
    memcpy(c, s, n);
    c[n] = '\0';
    return c;
}

/* Decimal digits at s (at most 18, so no overflow); returns how many were read, 0 if none. */
static size_t read_u64(const char *s, size_t n, unsigned long long *v)
{
    size_t i = 0;
    *v = 0;
    while (i < n && i < 18 && s[i] >= '0' && s[i] <= '9') *v = *v * 10 + (unsigned long long)(s[i++] - '0');
    if (i < n && i == 18 && s[i] >= '0' && s[i] <= '9') return 0; /* too long to be a real figure */
    return i;
}

static size_t read_hex(const char *s, size_t n, unsigned long long *v)
{
    size_t i = 0;
    *v = 0;
    while (i < n && i < 16 && isxdigit((unsigned char)s[i])) {
        char ch = s[i++];
        *v = *v * 16 + (unsigned long long)(ch <= '9' ? ch - '0' : (ch | 0x20) - 'a' + 10);
    }
    return i;
}

/* ---- status and errors ---- */

int hotspot_parse_status(const char *buf, size_t n, int *status, size_t *text_off)
{
    size_t i = 0;
    int neg = 0;
    if (i < n && buf[i] == '-') neg = 1, i++;
    size_t d0 = i;
    long v = 0;
    while (i < n && i - d0 < 9 && buf[i] >= '0' && buf[i] <= '9') v = v * 10 + (buf[i++] - '0');
    if (i == d0 || (i < n && buf[i] != '\n')) return -EPROTO;
    *status = (int)(neg ? -v : v);
    *text_off = i < n ? i + 1 : n;
    return 0;
}

int hotspot_parse_error(const char *text, size_t n, char *line, size_t linesz)
{
    static const char *const starts_with[] = {"Unable to", "Could not", "Cannot", "Can not", "Error", "Failed",
                                              "No recordings", "Invalid", "Unknown", "Operation ", NULL};
    static const char *const contains[] = {"not enabled", "not recognized", "File exists", "Exception",
                                           "No such file", "Permission denied", "not supported", NULL};
    if (linesz) line[0] = '\0';
    struct cursor c = {text, text + n};
    const char *l;
    size_t len;
    while (next_line(&c, &l, &len)) {
        trim(&l, &len);
        int bad = 0;
        for (int i = 0; starts_with[i] && !bad; i++) bad = starts(l, len, starts_with[i]);
        for (int i = 0; contains[i] && !bad; i++) bad = memmem(l, len, contains[i], strlen(contains[i])) != NULL;
        if (!bad) continue;
        if (linesz) {
            size_t k = len < linesz - 1 ? len : linesz - 1;
            memcpy(line, l, k);
            line[k] = '\0';
        }
        return 1;
    }
    return 0;
}

/* ---- thread dump ---- */

/* "1.14ms" with unit "ms": 1.14; -1 when it is not a number followed by exactly that unit. */
static double read_decimal(const char *s, size_t n, const char *unit)
{
    char buf[32];
    size_t u = strlen(unit);
    if (n <= u || n - u >= sizeof buf || memcmp(s + n - u, unit, u) != 0) return -1;
    memcpy(buf, s, n - u);
    buf[n - u] = '\0';
    char *end;
    double v = strtod(buf, &end);
    return *end == '\0' && v >= 0 && v < 1e15 ? v : -1;
}

/* "<0x000000069ec1a960> (a java.lang.Object)" into l; -1 when it is not a lock reference ("<no object reference
 * available>", "<owner is scalar replaced>"). */
static int parse_lock_ref(const char *s, size_t n, struct rt_lock *l)
{
    memset(l, 0, sizeof *l);
    trim(&s, &n);
    const char *close = n > 3 && starts(s, n, "<0x") ? memchr(s, '>', n) : NULL;
    if (!close) return -1;
    const char *cls = memmem(close, (size_t)(s + n - close), "(a ", 3);
    size_t an = (size_t)(close - s - 1);
    if (!(l->address = dupn(s + 1, an))) return -ENOMEM;
    if (cls && s[n - 1] == ')' && !(l->class_name = dupn(cls + 3, (size_t)(s + n - 1 - cls - 3)))) return -ENOMEM;
    return 0;
}

static int add_held(struct rt_thread *t, const char *s, size_t n)
{
    struct rt_lock l;
    int rc = parse_lock_ref(s, n, &l);
    if (rc < 0 || t->nholds >= MAX_FRAMES) {
        rt_lock_free(&l);
        return rc == -ENOMEM ? rc : 0;
    }
    size_t cap = (size_t)t->nholds; /* grown one at a time: a thread holds few locks */
    if (GROW(t->holds, cap, t->nholds, 1) < 0) {
        rt_lock_free(&l);
        return -ENOMEM;
    }
    t->holds[t->nholds++] = l;
    return 0;
}

/* A lock line under a frame, trimmed, after "- ": what the thread waits for (the first such line: frame 0's) or
 * a monitor it holds. */
static int parse_lock_line(struct rt_thread *t, const char *s, size_t n)
{
    static const char *const waits[] = {"waiting to lock", "parking to wait for", "waiting to re-lock in wait()",
                                        "waiting on"};
    if (starts(s, n, "locked ")) return add_held(t, s + 7, n - 7);
    for (size_t i = 0; i < sizeof waits / sizeof waits[0]; i++) {
        size_t k = strlen(waits[i]);
        if (!starts(s, n, waits[i]) || n <= k || s[k] != ' ') continue;
        if (t->wait_how) return 0;
        struct rt_lock l;
        int rc = parse_lock_ref(s + k, n - k, &l);
        if (rc == 0 && !(t->wait_how = dupn(waits[i], k))) rc = -ENOMEM;
        if (rc < 0) {
            rt_lock_free(&l);
            return rc == -ENOMEM ? rc : 0;
        }
        t->waits_for = l;
        return 0;
    }
    return 0;
}

/* The deadlock report after the threads:
 *   Found one Java-level deadlock:
 *   "dl-a":
 *     waiting to lock monitor 0x00007f49c00015a0 (object 0x000000069ec1a960, a java.lang.Object),
 *     which is held by "dl-b"
 *   ... then "Java stack information for the threads listed above:" and their stacks again (skipped). */
struct deadlock_reader {
    int in_cycle;    /* between "Found one Java-level deadlock:" and "Java stack information" */
    size_t cap;      /* of the current cycle's edges */
};

static struct rt_deadlock_edge *last_edge(struct rt_stack *out)
{
    struct rt_deadlock *d = out->ndeadlocks ? &out->deadlocks[out->ndeadlocks - 1] : NULL;
    return d && d->n ? &d->edges[d->n - 1] : NULL;
}

/* "waiting to lock monitor 0x.. (object 0x.., a java.lang.Object)," or "waiting for ownable synchronizer 0x..,
 * (a java.util.concurrent.locks.ReentrantLock$NonfairSync)," into e. */
static int parse_deadlock_wait(const char *s, size_t n, struct rt_deadlock_edge *e)
{
    const char *paren = memchr(s, '(', n);
    if (!paren || e->how) return 0;
    const char *how_end = paren;
    while (how_end > s && how_end[-1] == ' ') how_end--;
    const char *mon = memmem(s, (size_t)(how_end - s), " 0x", 3); /* the monitor's own address: not the object */
    if (mon) how_end = mon;
    if (!(e->how = dupn(s, (size_t)(how_end - s)))) return -ENOMEM;
    const char *in = paren + 1, *end = s + n;
    while (end > in && (end[-1] == ',' || end[-1] == ' ')) end--;
    if (end > in && end[-1] == ')') end--;
    if (starts(in, (size_t)(end - in), "object ")) {
        in += 7;
        const char *comma = memchr(in, ',', (size_t)(end - in));
        if (!comma) return 0;
        if (!(e->lock.address = dupn(in, (size_t)(comma - in)))) return -ENOMEM;
        in = comma + 1;
    } else if (mon) { /* an ownable synchronizer: the address before the parenthesis is the object's */
        const char *a = mon + 1, *ae = a;
        while (ae < paren && *ae != ',' && *ae != ' ') ae++;
        if (!(e->lock.address = dupn(a, (size_t)(ae - a)))) return -ENOMEM;
    }
    while (in < end && *in == ' ') in++;
    if (starts(in, (size_t)(end - in), "a ")) in += 2;
    return end > in && !(e->lock.class_name = dupn(in, (size_t)(end - in))) ? -ENOMEM : 0;
}

static int parse_deadlock_line(struct deadlock_reader *dr, const char *l, size_t len, struct rt_stack *out)
{
    const char *s = l;
    size_t n = len;
    trim(&s, &n);
    if (starts(s, n, "Found one Java-level deadlock")) {
        if (out->ndeadlocks >= 1024) return 0;
        struct rt_deadlock *d = realloc(out->deadlocks, (size_t)(out->ndeadlocks + 1) * sizeof *d);
        if (!d) return -ENOMEM;
        out->deadlocks = d;
        memset(&d[out->ndeadlocks++], 0, sizeof *d);
        dr->in_cycle = 1;
        dr->cap = 0;
        return 0;
    }
    if (starts(s, n, "Java stack information")) dr->in_cycle = 0;
    if (!dr->in_cycle || !out->ndeadlocks) return 0;
    struct rt_deadlock *d = &out->deadlocks[out->ndeadlocks - 1];
    if (len && l[0] == '"' && n > 2 && s[n - 1] == ':' && s[n - 2] == '"') { /* "name": */
        if (d->n >= 4096 || GROW(d->edges, dr->cap, d->n, 4) < 0) return d->n >= 4096 ? 0 : -ENOMEM;
        struct rt_deadlock_edge *e = &d->edges[d->n];
        memset(e, 0, sizeof *e);
        if (!(e->thread = dupn(s + 1, n - 3))) return -ENOMEM;
        d->n++;
        return 0;
    }
    struct rt_deadlock_edge *e = last_edge(out);
    if (!e) return 0;
    if (starts(s, n, "which is held by \"") && n > 18 && s[n - 1] == '"' && !e->held_by)
        return (e->held_by = dupn(s + 18, n - 19)) ? 0 : -ENOMEM;
    if (starts(s, n, "waiting ")) return parse_deadlock_wait(s, n, e);
    return 0;
}

/* A thread in Object.wait() is listed as having locked the monitor it waits on, which it released: not held. */
static void drop_released(struct rt_thread *t)
{
    if (!t->waits_for.address || !t->wait_how || strncmp(t->wait_how, "waiting ", 8) != 0 ||
        strcmp(t->wait_how, "waiting to lock") == 0)
        return;
    int kept = 0;
    for (int j = 0; j < t->nholds; j++) {
        if (t->holds[j].address && strcmp(t->holds[j].address, t->waits_for.address) == 0) {
            rt_lock_free(&t->holds[j]);
        } else {
            t->holds[kept++] = t->holds[j];
        }
    }
    t->nholds = kept;
}

/* Who holds what each thread waits for: the other thread whose held locks include it. */
static void link_holders(struct rt_stack *out)
{
    for (int i = 0; i < out->n; i++) drop_released(&out->threads[i]);
    for (int i = 0; i < out->n; i++) {
        struct rt_thread *t = &out->threads[i];
        if (!t->waits_for.address || (t->wait_how && strcmp(t->wait_how, "waiting on") == 0)) continue;
        for (int k = 0; k < out->n && t->held_by < 0; k++) {
            const struct rt_thread *h = &out->threads[k];
            if (k == i) continue;
            for (int j = 0; j < h->nholds; j++)
                if (h->holds[j].address && strcmp(h->holds[j].address, t->waits_for.address) == 0) t->held_by = k;
        }
    }
}

/* The header after the name: "#12 [4711] daemon prio=5 os_prio=0 cpu=.. elapsed=.. tid=0x.. nid=0x710b waiting
 * on condition  [0x00007f2e1434c000]". The name ends at the line's last quote: nothing after it holds one. */
static int parse_header(const char *l, size_t len, struct rt_thread *t)
{
    const char *q = memrchr(l, '"', len);
    if (!q || q == l) return -1;
    t->id = -1;
    t->wait_seconds = -1;
    t->cpu_ms = t->elapsed_s = -1;
    t->held_by = -1;
    if (!(t->name = dupn(l + 1, (size_t)(q - l - 1)))) return -ENOMEM;
    const char *p = q + 1, *end = l + len, *summary = NULL;
    while (p < end) {
        while (p < end && *p == ' ') p++;
        const char *w = p;
        while (p < end && *p != ' ') p++;
        size_t wn = (size_t)(p - w);
        unsigned long long v;
        if (wn > 1 && w[0] == '#' && t->id < 0 && read_u64(w + 1, wn - 1, &v) == wn - 1) t->id = (long long)v;
        else if (wn > 2 && w[0] == '[' && w[wn - 1] == ']' && !t->os_tid && read_u64(w + 1, wn - 2, &v) == wn - 2)
            t->os_tid = (int)v; /* JDK 19+: the OS thread id in brackets */
        else if (wn == 6 && memcmp(w, "daemon", 6) == 0) t->daemon = 1;
        else if (starts(w, wn, "cpu=")) t->cpu_ms = read_decimal(w + 4, wn - 4, "ms");
        else if (starts(w, wn, "elapsed=")) t->elapsed_s = read_decimal(w + 8, wn - 8, "s");
        else if (starts(w, wn, "nid=")) {
            size_t k = starts(w, wn, "nid=0x") ? read_hex(w + 6, wn - 6, &v) + 6 : read_u64(w + 4, wn - 4, &v) + 4;
            if (k == wn && v < 0x7fffffff) t->os_tid = (int)v;
            summary = p;
            break;
        }
    }
    /* What the VM says it does ("runnable", "waiting on condition"): the state of threads without a Java one. */
    if (summary) {
        size_t sn = (size_t)(end - summary);
        const char *addr = memmem(summary, sn, " [0x", 4);
        if (addr) sn = (size_t)(addr - summary);
        trim(&summary, &sn);
        if (sn && !(t->state = dupn(summary, sn))) return -ENOMEM;
    }
    return 0;
}

/* "at pkg.Class.method(java.base@17.0.15/Thread.java:1313)", "at X.run(Unknown Source)", "at Y.z(Native Method)" */
static int parse_frame(const char *s, size_t n, struct rt_frame *f)
{
    memset(f, 0, sizeof *f);
    const char *open = n && s[n - 1] == ')' ? memrchr(s, '(', n) : NULL;
    size_t fn = open ? (size_t)(open - s) : n;
    if (!(f->function = dupn(s, fn))) return -ENOMEM;
    if (!open) return 0;
    const char *loc = open + 1;
    size_t ln = (size_t)(s + n - 1 - loc);
    const char *slash = memrchr(loc, '/', ln); /* "module@version/" or "app//" before the file */
    if (slash) {
        ln -= (size_t)(slash + 1 - loc);
        loc = slash + 1;
    }
    if ((ln == 13 && memcmp(loc, "Native Method", 13) == 0) || (ln == 14 && memcmp(loc, "Unknown Source", 14) == 0) ||
        ln == 0)
        return 0;
    const char *colon = memrchr(loc, ':', ln);
    unsigned long long v;
    size_t dn = colon ? (size_t)(loc + ln - colon - 1) : 0;
    if (colon && dn && read_u64(colon + 1, dn, &v) == dn && v < 0x7fffffff) {
        f->line = (int)v;
        ln = (size_t)(colon - loc);
    }
    if (ln && !(f->file = dupn(loc, ln))) return -ENOMEM;
    return 0;
}

static int add_frame(struct rt_thread *t, size_t *cap, const char *s, size_t n)
{
    if (t->nframes >= MAX_FRAMES) return 0;
    if (GROW(t->frames, *cap, t->nframes, 16) < 0) return -ENOMEM;
    int rc = parse_frame(s, n, &t->frames[t->nframes]);
    if (rc < 0) {
        free(t->frames[t->nframes].function);
        return rc;
    }
    t->nframes++;
    return 0;
}

int hotspot_parse_threaddump(const char *text, size_t n, struct rt_stack *out)
{
    struct cursor c = {text, text + n};
    const char *l;
    size_t len, tcap = (size_t)out->n, fcap = 0;
    int dump_seen = 0, cur = -1, rc = 0, tail = 0, synchronizers = 0;
    struct deadlock_reader dr = {0};
    while (rc == 0 && next_line(&c, &l, &len)) {
        if (tail) { /* after the threads: only the deadlock report */
            rc = parse_deadlock_line(&dr, l, len, out);
            continue;
        }
        if (starts(l, len, "Full thread dump")) {
            dump_seen = 1;
            continue;
        }
        if (starts(l, len, "JNI global refs")) {
            tail = 1;
            continue;
        }
        if (len && l[0] == '"') {
            /* A name with newlines: the header goes on until a line that holds the closing quote. */
            for (int k = 0; k < MAX_NAME_LINES && !memchr(l + 1, '"', len - 1) && c.p < c.end; k++) {
                const char *more;
                size_t mlen;
                next_line(&c, &more, &mlen);
                len = (size_t)(more + mlen - l);
            }
            if (out->n >= MAX_THREADS) break;
            if (GROW(out->threads, tcap, out->n, 64) < 0) {
                rc = -ENOMEM;
                break;
            }
            struct rt_thread *t = &out->threads[out->n];
            memset(t, 0, sizeof *t);
            int hr = parse_header(l, len, t);
            if (hr < 0) {
                free(t->name);
                free(t->state);
                if (hr == -ENOMEM) rc = hr;
                cur = -1;
                continue;
            }
            cur = out->n++;
            fcap = 0;
            synchronizers = 0;
            continue;
        }
        if (cur < 0) continue;
        struct rt_thread *t = &out->threads[cur];
        const char *s = l;
        size_t sn = len;
        trim(&s, &sn);
        if (starts(s, sn, "java.lang.Thread.State: ")) {
            s += 24, sn -= 24;
            trim(&s, &sn);
            char *state = dupn(s, sn);
            if (!state) rc = -ENOMEM;
            else {
                free(t->state);
                t->state = state;
            }
        } else if (starts(s, sn, "at ") && len && l[0] == '\t') {
            rc = add_frame(t, &fcap, s + 3, sn - 3);
        } else if (starts(s, sn, "Locked ownable synchronizers:")) {
            synchronizers = 1;
        } else if (starts(s, sn, "- ") && len && l[0] == '\t') {
            /* "- locked <0x..> (a X)", "- waiting to lock <..>"; under "Locked ownable synchronizers:", "- <0x..>" */
            rc = synchronizers ? add_held(t, s + 2, sn - 2) : parse_lock_line(t, s + 2, sn - 2);
        }
    }
    if (rc == 0 && !dump_seen && out->n == 0) rc = -EPROTO;
    if (rc == 0) link_holders(out);
    return rc;
}

/* ---- class histogram ---- */

int hotspot_parse_histogram(const char *text, size_t n, struct rt_heap *out)
{
    struct cursor c = {text, text + n};
    const char *l;
    size_t len, cap = (size_t)out->n;
    int header = 0;
    while (next_line(&c, &l, &len)) {
        if (!header) {
            header = memmem(l, len, "#instances", 10) && memmem(l, len, "#bytes", 6);
            continue;
        }
        /* "   1:        126006        6049336  [J (java.base@17.0.15)" */
        const char *s = l;
        size_t sn = len;
        trim(&s, &sn);
        unsigned long long num, count, bytes;
        size_t k = read_u64(s, sn, &num);
        if (!k || k >= sn || s[k] != ':') continue; /* the separator line, "Total ...", anything else */
        s += k + 1, sn -= k + 1;
        trim(&s, &sn);
        if (!(k = read_u64(s, sn, &count)) || k >= sn || s[k] != ' ') continue;
        s += k, sn -= k;
        trim(&s, &sn);
        if (!(k = read_u64(s, sn, &bytes)) || k >= sn || s[k] != ' ') continue;
        s += k, sn -= k;
        trim(&s, &sn);
        /* The module in parentheses goes: names never hold a space, modules neither. */
        const char *paren = sn && s[sn - 1] == ')' ? memmem(s, sn, " (", 2) : NULL;
        if (paren && !memchr(paren + 2, ' ', (size_t)(s + sn - paren - 2))) sn = (size_t)(paren - s);
        if (!sn) continue;
        if (out->n >= MAX_ROWS) break;
        if (GROW(out->rows, cap, out->n, 256) < 0) return -ENOMEM;
        struct rt_heap_row *r = &out->rows[out->n];
        memset(r, 0, sizeof *r);
        if (!(r->name = dupn(s, sn))) return -ENOMEM;
        r->count = (long long)count;
        r->bytes = (long long)bytes;
        r->alloc_count = r->alloc_bytes = -1;
        out->n++;
    }
    return header ? 0 : -EPROTO;
}

/* ---- GC.heap_info ---- */

/* A word of a heap_info line. */
enum wkind { W_WORD, W_SIZE, W_COUNT, W_PERCENT, W_PSIZE /* "(8192K)" */ };

struct word {
    const char *s;
    size_t n;
    enum wkind kind;
    unsigned long long v;
};

static void classify(struct word *w)
{
    const char *s = w->s;
    size_t n = w->n;
    int paren = n > 2 && s[0] == '(' && s[n - 1] == ')';
    if (paren) s++, n -= 2;
    unsigned long long v;
    size_t k = read_u64(s, n, &v);
    w->kind = W_WORD;
    if (!k) return;
    unsigned long long mult = 0;
    if (k == n) mult = 1;
    else if (k + 1 == n) {
        switch (s[k]) {
        case 'B': mult = 1; break;
        case 'K': mult = 1ULL << 10; break;
        case 'M': mult = 1ULL << 20; break;
        case 'G': mult = 1ULL << 30; break;
        case '%':
            if (!paren) {
                w->kind = W_PERCENT;
                w->v = v;
            }
            return;
        }
    }
    if (!mult || v > (1ULL << 40)) return;
    w->v = v * mult;
    w->kind = paren ? W_PSIZE : (k == n ? W_COUNT : W_SIZE);
}

/* Keys that come before their value ("used 20329K", "region size 4096K") or after it ("378M committed"). */
static int is_key(const struct word *w, int nw)
{
    static const char *const keys[] = {"total", "used", "committed", "reserved", "capacity", "max", "regions", NULL};
    static const char *const keys2[] = {"region size", "max capacity", "soft max", NULL};
    if (nw >= 2) {
        for (int i = 0; keys2[i]; i++) {
            size_t a = w[0].n, k = strlen(keys2[i]);
            if (a + 1 + w[1].n == k && memcmp(w[0].s, keys2[i], a) == 0 && keys2[i][a] == ' ' &&
                memcmp(w[1].s, keys2[i] + a + 1, w[1].n) == 0)
                return 2;
        }
    }
    for (int i = 0; nw >= 1 && keys[i]; i++)
        if (strlen(keys[i]) == w[0].n && memcmp(w[0].s, keys[i], w[0].n) == 0) return 1;
    return 0;
}

/* "garbage-first heap" -> "garbage-first-heap"; words joined by '-', lower case. */
static void slug_append(char *dst, size_t dstsz, const struct word *w, int nw)
{
    size_t o = strlen(dst);
    for (int i = 0; i < nw; i++)
        for (size_t j = 0; j <= w[i].n && o + 1 < dstsz; j++) {
            if (j == w[i].n) {
                if (i + 1 < nw) dst[o++] = '-';
                continue;
            }
            unsigned char ch = (unsigned char)w[i].s[j];
            dst[o++] = (char)(isalnum(ch) || ch == '-' || ch == '_' ? tolower(ch) : '_');
        }
    dst[o] = '\0';
}

struct heap_acc {
    struct rt_fields *out;
    char space[96];        /* the current space's slug */
    char first_space[96];  /* the first one named: tells the collector */
    int space_is_heap;     /* named at the top level and not Metaspace or class space */
    int counted_committed; /* this space's committed size was added */
    long long used, committed;
    int figures;
    int rc;
};

static void add_figure(struct heap_acc *a, const char *key, enum rt_unit unit, unsigned long long v)
{
    char k[200];
    snprintf(k, sizeof k, "%s%s%s", a->space, a->space[0] ? "." : "", key);
    if (a->rc == 0) a->rc = rt_fields_add_u64(a->out, "heap", k, unit, v);
    a->figures++;
    if (!a->space_is_heap || unit != RT_BYTES) return;
    if (strcmp(key, "used") == 0) a->used = (a->used < 0 ? 0 : a->used) + (long long)v;
    /* A space's size: G1 and the generations say total, Z capacity, Shenandoah committed. */
    if (!a->counted_committed && (!strcmp(key, "total") || !strcmp(key, "capacity") || !strcmp(key, "committed"))) {
        a->committed = (a->committed < 0 ? 0 : a->committed) + (long long)v;
        a->counted_committed = 1;
    }
}

static void set_space(struct heap_acc *a, const struct word *w, int nw, int indent)
{
    a->space[0] = '\0';
    slug_append(a->space, sizeof a->space, w, nw);
    if (!a->first_space[0]) snprintf(a->first_space, sizeof a->first_space, "%s", a->space);
    a->space_is_heap = indent <= 1 && strcmp(a->space, "metaspace") != 0 && strcmp(a->space, "class-space") != 0;
    a->counted_committed = 0;
}

/* One comma-separated clause: "used 20329K", "2 young (8192K)", "14% used", "6028M soft max", "3014 x 2048K
 * regions", or, first on a line, the space's name before the first figure. */
static void heap_clause(struct heap_acc *a, struct word *w, int nw, int first, int indent)
{
    int v = 0;
    while (v < nw && w[v].kind == W_WORD) v++;
    if (v == nw) {
        if (first && nw && nw <= 4) set_space(a, w, nw, indent); /* "Shenandoah Heap" */
        return;
    }
    char key[96] = "";
    if (v > 0) { /* words, then the figure: the last one or two words are the key, the rest names the space */
        int k = v >= 2 && is_key(&w[v - 2], 2) == 2 ? 2 : is_key(&w[v - 1], 1) ? 1 : 0;
        int name = v - k;
        /* JDK 25: "garbage-first heap   total reserved 6172672K, committed ...": "total" is a heading there */
        if (k && name >= 2 && w[name - 1].n == 5 && memcmp(w[name - 1].s, "total", 5) == 0) name--;
        if (first && name > 0) set_space(a, w, name, indent);
        else if (!first && name > 0) return; /* not a shape we know */
        if (k) slug_append(key, sizeof key, &w[v - k], k);
        else snprintf(key, sizeof key, "size"); /* "eden space 103296K" */
        if (w[v].kind == W_SIZE) add_figure(a, key, RT_BYTES, w[v].v);
        else if (w[v].kind == W_COUNT) add_figure(a, key, RT_COUNT, w[v].v);
        return;
    }
    if (w[0].kind == W_PERCENT && nw == 2) { /* "14% used" */
        snprintf(key, sizeof key, "%.*s-ratio", (int)(w[1].n < 40 ? w[1].n : 40), w[1].s);
        char k[200];
        snprintf(k, sizeof k, "%s%s%s", a->space, a->space[0] ? "." : "", key);
        if (a->rc == 0) a->rc = rt_fields_add_double(a->out, "heap", k, (double)w[0].v / 100.0);
        a->figures++;
        return;
    }
    if (nw == 4 && w[0].kind == W_COUNT && w[1].n == 1 && w[1].s[0] == 'x' && w[2].kind == W_SIZE) {
        add_figure(a, "regions", RT_COUNT, w[0].v); /* "3014 x 2048K regions" */
        add_figure(a, "region-size", RT_BYTES, w[2].v);
        return;
    }
    if (nw == 3 && w[0].kind == W_COUNT && w[1].kind == W_WORD && w[2].kind == W_PSIZE) { /* "2 young (8192K)" */
        slug_append(key, sizeof key, &w[1], 1);
        add_figure(a, key, RT_COUNT, w[0].v);
        size_t o = strlen(key);
        snprintf(key + o, sizeof key - o, "-bytes");
        add_figure(a, key, RT_BYTES, w[2].v);
        return;
    }
    if ((w[0].kind == W_SIZE || w[0].kind == W_COUNT) && nw >= 2 && nw <= 3 && is_key(&w[1], nw - 1) == nw - 1) {
        slug_append(key, sizeof key, &w[1], nw - 1); /* "378M committed", "6028M soft max" */
        add_figure(a, key, w[0].kind == W_SIZE ? RT_BYTES : RT_COUNT, w[0].v);
    }
}

static const char *collector_of(const char *space)
{
    static const char *const map[][2] = {{"garbage-first-heap", "G1"}, {"def-new-generation", "Serial"},
                                         {"psyounggen", "Parallel"},   {"zheap", "Z"},
                                         {"shenandoah-heap", "Shenandoah"}, {"epsilon-heap", "Epsilon"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(space, map[i][0]) == 0) return map[i][1];
    return space;
}

int hotspot_parse_heap_info(const char *text, size_t n, struct rt_fields *out, long long *used, long long *committed)
{
    /* Figures go into a scratch list first: the sums lead the section but are known only at the end. */
    struct rt_fields detail = {0};
    struct heap_acc a = {.out = &detail, .used = -1, .committed = -1};
    struct cursor c = {text, text + n};
    const char *l;
    size_t len;
    while (a.rc == 0 && next_line(&c, &l, &len)) {
        if (len > 4096) continue;
        size_t indent = 0;
        while (indent < len && l[indent] == ' ') indent++;
        const char *s = l + indent;
        size_t sn = len - indent;
        const char *br = memchr(s, '[', sn); /* address ranges say nothing we keep */
        if (br) sn = (size_t)(br - s);
        trim(&s, &sn);
        if (!sn || s[0] == '-' || memchr(s, ':', sn)) continue; /* "Status: ...", "Reserved region:", " - map" */
        int first = 1;
        while (sn) {
            const char *comma = memchr(s, ',', sn);
            size_t cn = comma ? (size_t)(comma - s) : sn;
            struct word w[12];
            int nw = 0;
            for (size_t i = 0; i < cn && nw < 12;) {
                while (i < cn && (s[i] == ' ' || s[i] == '\t')) i++;
                size_t j = i;
                while (j < cn && s[j] != ' ' && s[j] != '\t') j++;
                if (j > i) {
                    w[nw] = (struct word){s + i, j - i, W_WORD, 0};
                    classify(&w[nw]);
                    nw++;
                }
                i = j;
            }
            heap_clause(&a, w, nw, first, (int)indent);
            first = 0;
            s += cn + (comma ? 1 : 0);
            sn -= cn + (comma ? 1 : 0);
        }
    }
    int rc = a.rc;
    if (rc == 0 && a.figures == 0) rc = -EPROTO;
    if (rc == 0 && a.used >= 0) rc = rt_fields_add_u64(out, "heap", "heap-used", RT_BYTES, (unsigned long long)a.used);
    if (rc == 0 && a.committed >= 0)
        rc = rt_fields_add_u64(out, "heap", "heap-committed", RT_BYTES, (unsigned long long)a.committed);
    if (rc == 0 && a.first_space[0]) rc = rt_fields_add_text(out, "heap", "collector", collector_of(a.first_space));
    for (int i = 0; rc == 0 && i < detail.n; i++) {
        const struct rt_field *f = &detail.f[i];
        rc = f->is_double ? rt_fields_add_double(out, f->section, f->label, f->d)
                          : rt_fields_add_u64(out, f->section, f->label, f->unit, f->u);
    }
    rt_fields_free(&detail);
    if (used) *used = a.used;
    if (committed) *committed = a.committed;
    return rc;
}
