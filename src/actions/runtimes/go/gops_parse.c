#include "gops_parse.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/protobuf.h"
#include "util/text.h"

#define MAX_TEXT 4096    /* bytes kept of a name, file, state or value */
#define MAX_FRAMES 1024  /* per goroutine (Go itself prints at most 100) */
#define MAX_FIELDS 256   /* per reply */

/* ---- lines ---- */

struct lines {
    const char *p, *end;
};

/* The next line, without its newline (and a \r before it). Returns 0 at the end. */
static int next_line(struct lines *it, const char **s, size_t *n)
{
    if (it->p >= it->end) return 0;
    const char *nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
    const char *e = nl ? nl : it->end;
    *s = it->p;
    *n = (size_t)(e - it->p);
    if (*n && (*s)[*n - 1] == '\r') (*n)--;
    it->p = nl ? nl + 1 : it->end;
    return 1;
}

static int starts(const char *s, size_t n, const char *prefix)
{
    size_t l = strlen(prefix);
    return n >= l && memcmp(s, prefix, l) == 0;
}

static char *dup_bounded(const char *s, size_t n) { return strndup(s, n < MAX_TEXT ? n : MAX_TEXT); }

/* Strict decimal: all n bytes are digits, no overflow. */
static int parse_u64(const char *s, size_t n, unsigned long long *out)
{
    if (n == 0 || n > 20) return -1;
    unsigned long long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (ULLONG_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t')) (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t')) (*n)--;
}

/* ---- goroutine dump ---- */

struct stack_parse {
    struct rt_stack *out;
    size_t cap;         /* of out->threads */
    size_t fcap;        /* of the current thread's frames */
    struct rt_thread *t;
    int want_location;  /* 1: the next "\tfile:line" line is the last frame's; 2: created by's */
    char *created_func; /* created by, until its location comes */
    long long creator;  /* "in goroutine N", or -1 */
};

/* "/src/main.go:12 +0x1d" (or with fp=/sp=/pc= after it): the file and the line, at the last ":digits" that
 * ends the path. Returns 0, or -1 when the line is not a location. */
static int split_location(const char *s, size_t n, size_t *filelen, int *line)
{
    trim(&s, &n);
    for (size_t i = n; i-- > 0;) {
        if (s[i] != ':') continue;
        size_t j = i + 1;
        while (j < n && s[j] >= '0' && s[j] <= '9') j++;
        if (j == i + 1 || (j < n && s[j] != ' ')) continue;
        unsigned long long v;
        if (parse_u64(s + i + 1, j - i - 1, &v) < 0 || v > INT32_MAX) return -1;
        *filelen = i;
        *line = (int)v;
        return 0;
    }
    return -1;
}

/* The function of "pkg.(*T).method(0xc000010000, {0x4b2f60, 0x1})": without the trailing argument list (found
 * by matching parentheses from the end, since the name itself may hold some). */
static size_t function_len(const char *s, size_t n)
{
    if (n == 0 || s[n - 1] != ')') return n;
    int depth = 0;
    for (size_t i = n; i-- > 0;) {
        if (s[i] == ')') depth++;
        else if (s[i] == '(' && --depth == 0) return i ? i : n;
    }
    return n;
}

/* "3 minutes" (Go says "1 minutes" too; "1 minute" accepted). */
static int is_minutes(const char *s, size_t n, unsigned long long *minutes)
{
    const char *sp = memchr(s, ' ', n);
    if (!sp) return 0;
    size_t rest = (size_t)(s + n - sp);
    if (!((rest == 8 && memcmp(sp, " minutes", 8) == 0) || (rest == 7 && memcmp(sp, " minute", 7) == 0))) return 0;
    return parse_u64(s, (size_t)(sp - s), minutes) == 0 && *minutes <= LLONG_MAX / 60;
}

/* "goroutine 7 [chan receive, 3 minutes]:" (Go 1.23 puts "gp=... m=..." before the bracket). */
static int begin_goroutine(struct stack_parse *sp, const char *s, size_t n)
{
    const char *p = s + 10, *e = s + n; /* after "goroutine " */
    const char *d = p;
    while (d < e && *d >= '0' && *d <= '9') d++;
    unsigned long long id;
    if (parse_u64(p, (size_t)(d - p), &id) < 0 || id > LLONG_MAX) return 0;
    const char *open = memchr(d, '[', (size_t)(e - d));
    if (!open || n < 2 || e[-1] != ':' || e[-2] != ']') return 0;
    const char *in = open + 1, *in_end = e - 2;

    if (GROW(sp->out->threads, sp->cap, sp->out->n, 64) < 0) return -ENOMEM;
    struct rt_thread *t = &sp->out->threads[sp->out->n++];
    memset(t, 0, sizeof *t);
    t->id = (long long)id;
    t->wait_seconds = -1;
    sp->t = t;
    sp->fcap = 0;
    sp->want_location = 0;

    /* The bracket: the state, then ", N minutes" and flags such as ", locked to thread". */
    char state[MAX_TEXT];
    size_t sl = 0;
    for (const char *q = in; q < in_end;) {
        const char *c = memmem(q, (size_t)(in_end - q), ", ", 2);
        if (!c) c = in_end;
        const char *part = q;
        size_t pl = (size_t)(c - q);
        q = c < in_end ? c + 2 : in_end;
        unsigned long long minutes;
        if (part != in && is_minutes(part, pl, &minutes)) {
            t->wait_seconds = (long long)minutes * 60;
            continue;
        }
        if (sl && sl + 2 < sizeof state) memcpy(state + sl, ", ", 2), sl += 2;
        size_t take = pl < sizeof state - 1 - sl ? pl : sizeof state - 1 - sl;
        memcpy(state + sl, part, take);
        sl += take;
    }
    if (!(t->state = strndup(state, sl))) return -ENOMEM;
    return 1;
}

static int add_frame(struct stack_parse *sp, const char *s, size_t n)
{
    struct rt_thread *t = sp->t;
    if (t->nframes >= MAX_FRAMES) {
        sp->want_location = 0;
        return 0;
    }
    if (GROW(t->frames, sp->fcap, t->nframes, 16) < 0) return -ENOMEM;
    struct rt_frame *f = &t->frames[t->nframes];
    memset(f, 0, sizeof *f);
    if (!(f->function = dup_bounded(s, function_len(s, n)))) return -ENOMEM;
    t->nframes++;
    sp->want_location = 1;
    return 0;
}

/* "created by main.main" or "created by main.main in goroutine 1". */
static int begin_created_by(struct stack_parse *sp, const char *s, size_t n)
{
    s += 11, n -= 11; /* "created by " */
    sp->creator = -1;
    const char *g = memmem(s, n, " in goroutine ", 14);
    if (g) {
        unsigned long long id;
        const char *d = g + 14;
        if (parse_u64(d, (size_t)(s + n - d), &id) == 0 && id <= LLONG_MAX) sp->creator = (long long)id;
        n = (size_t)(g - s);
    }
    free(sp->created_func);
    if (!(sp->created_func = dup_bounded(s, function_len(s, n)))) return -ENOMEM;
    free(sp->t->created_by);
    sp->t->created_by = NULL;
    /* Without a location line after it, created_by is the function alone. */
    char creator[40] = "";
    if (sp->creator >= 0) snprintf(creator, sizeof creator, " (goroutine %lld)", sp->creator);
    if (asprintf(&sp->t->created_by, "%s%s", sp->created_func, creator) < 0) {
        sp->t->created_by = NULL;
        return -ENOMEM;
    }
    sp->want_location = 2;
    return 0;
}

static int location(struct stack_parse *sp, const char *s, size_t n)
{
    trim(&s, &n);
    size_t filelen;
    int line;
    if (split_location(s, n, &filelen, &line) < 0) return 0;
    if (sp->want_location == 1) {
        struct rt_frame *f = &sp->t->frames[sp->t->nframes - 1];
        if (!(f->file = dup_bounded(s, filelen))) return -ENOMEM;
        f->line = line;
    } else {
        char creator[40] = "";
        if (sp->creator >= 0) snprintf(creator, sizeof creator, " (goroutine %lld)", sp->creator);
        char *c;
        if (asprintf(&c, "%s in %.*s:%d%s", sp->created_func, (int)(filelen < MAX_TEXT ? filelen : MAX_TEXT), s,
                     line, creator) < 0)
            return -ENOMEM;
        free(sp->t->created_by);
        sp->t->created_by = c;
    }
    sp->want_location = 0;
    return 0;
}

int gops_parse_stack(const char *text, size_t len, struct rt_stack *out, char *err, size_t errlen)
{
    struct stack_parse sp = {.out = out, .creator = -1};
    struct lines it = {text, text + len};
    const char *s;
    size_t n;
    int rc = 0;
    while (rc == 0 && next_line(&it, &s, &n)) {
        if (starts(s, n, "goroutine ")) {
            int b = begin_goroutine(&sp, s, n);
            if (b < 0) rc = b;
            else if (b == 0) sp.t = NULL; /* not a goroutine header after all: what follows is not kept */
        } else if (!sp.t || n == 0) {
            sp.t = n == 0 ? NULL : sp.t; /* a blank line ends the goroutine */
        } else if (s[0] == '\t' || s[0] == ' ') {
            if (sp.want_location) rc = location(&sp, s, n);
        } else if (starts(s, n, "created by ")) {
            rc = begin_created_by(&sp, s, n);
        } else if (starts(s, n, "...")) {
            sp.want_location = 0; /* "...additional frames elided..." */
        } else {
            rc = add_frame(&sp, s, n);
        }
    }
    free(sp.created_func);
    if (rc < 0) {
        rt_stack_free(out);
        snprintf(err, errlen, "out of memory");
        return rc;
    }
    if (out->n == 0) {
        snprintf(err, errlen, "the reply is not a goroutine dump (no \"goroutine N [state]:\" line in %zu bytes)",
                 len);
        return -EBADMSG;
    }
    return 0;
}

/* ---- memstats and stats: "key: value" lines ---- */

enum form { F_BYTES, F_COUNT, F_NS, F_TIME, F_DURATION, F_RATIO, F_BOOL, F_TEXT, F_NEXT_GC, F_GUESS };

struct key_form {
    const char *key, *old; /* the current name, and the name of agents <= v0.3.28 */
    enum form form;
};

static const struct key_form memstats_keys[] = {
    {"alloc", NULL, F_BYTES},
    {"total-alloc", NULL, F_BYTES},
    {"sys", NULL, F_BYTES},
    {"lookups", NULL, F_COUNT},
    {"mallocs", NULL, F_COUNT},
    {"frees", NULL, F_COUNT},
    {"heap-alloc", NULL, F_BYTES},
    {"heap-sys", NULL, F_BYTES},
    {"heap-idle", NULL, F_BYTES},
    {"heap-in-use", NULL, F_BYTES},
    {"heap-released", NULL, F_BYTES},
    {"heap-objects", NULL, F_COUNT},
    {"stack-in-use", NULL, F_BYTES},
    {"stack-sys", NULL, F_BYTES},
    {"mspan-in-use", "stack-mspan-inuse", F_BYTES},
    {"mspan-sys", "stack-mspan-sys", F_BYTES},
    {"mcache-in-use", "stack-mcache-inuse", F_BYTES},
    {"mcache-sys", "stack-mcache-sys", F_BYTES},
    {"buck-hash-sys", NULL, F_BYTES},
    {"other-sys", NULL, F_BYTES},
    {"gc-sys", NULL, F_BYTES},
    {"next-gc", NULL, F_NEXT_GC},
    {"last-gc", NULL, F_TEXT},
    {"gc-pause-total", NULL, F_DURATION},
    {"gc-pause", NULL, F_NS},
    {"gc-pause-end", NULL, F_TIME},
    {"num-gc", NULL, F_COUNT},
    {"num-forced-gc", NULL, F_COUNT},
    {"gc-cpu-fraction", NULL, F_RATIO},
    {"enable-gc", NULL, F_BOOL},
    {"debug-gc", NULL, F_BOOL},
};

static const struct key_form stats_keys[] = {
    {"goroutines", NULL, F_COUNT},
    {"OS threads", NULL, F_COUNT},
    {"GOMAXPROCS", NULL, F_COUNT},
    {"num CPU", NULL, F_COUNT},
};

/* "123 bytes" or "62.42MB (65453848 bytes)". */
static int parse_bytes(const char *s, size_t n, unsigned long long *v)
{
    if (n > 7 && s[n - 1] == ')' && memcmp(s + n - 7, " bytes)", 7) == 0) {
        const char *open = memrchr(s, '(', n);
        return open ? parse_u64(open + 1, (size_t)(s + n - 7 - open - 1), v) : -1;
    }
    if (n > 6 && memcmp(s + n - 6, " bytes", 6) == 0) return parse_u64(s, n - 6, v);
    return -1;
}

/* A float as Go's %v prints one: digits, '.', exponent ("6.9e-05"); no hex, inf or nan. */
static int parse_double(const char *s, size_t n, double *v)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf) return -1;
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789.eE+-", s[i])) return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    double d = strtod(buf, &end);
    if (errno || *end || !isfinite(d)) return -1;
    *v = d;
    return 0;
}

int gops_parse_duration(const char *s, size_t len, unsigned long long *ns)
{
    static const struct { const char *unit; unsigned long long ns; } units[] = {
        {"ns", 1ULL}, {"us", 1000ULL}, {"\xc2\xb5s", 1000ULL}, {"\xce\xbcs", 1000ULL}, {"ms", 1000000ULL},
        {"s", 1000000000ULL}, {"m", 60000000000ULL}, {"h", 3600000000000ULL},
    };
    if (len == 0) return -1;
    if (len == 1 && s[0] == '0') {
        *ns = 0;
        return 0;
    }
    unsigned long long total = 0;
    size_t i = 0;
    while (i < len) {
        unsigned long long whole = 0, frac = 0, scale = 1;
        size_t d0 = i;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            if (whole > (ULLONG_MAX - 9) / 10) return -1;
            whole = whole * 10 + (unsigned)(s[i++] - '0');
        }
        int digits = i > d0;
        if (i < len && s[i] == '.') {
            i++;
            while (i < len && s[i] >= '0' && s[i] <= '9') {
                if (scale < 1000000000000000000ULL) { /* beyond 18 digits: below a nanosecond anyway */
                    frac = frac * 10 + (unsigned)(s[i] - '0');
                    scale *= 10;
                }
                i++;
                digits = 1;
            }
        }
        if (!digits) return -1;
        size_t best = 0;
        unsigned long long unit = 0;
        for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) { /* the longest unit that matches: ms, m */
            size_t ul = strlen(units[u].unit);
            if (ul > best && i + ul <= len && memcmp(s + i, units[u].unit, ul) == 0) {
                best = ul;
                unit = units[u].ns;
            }
        }
        if (!best) return -1;
        i += best;
        if (whole && unit > ULLONG_MAX / whole) return -1;
        /* frac / scale of a unit, exactly: unit is a multiple of scale's factors only when it is; split to
         * stay in 64 bits (frac < scale <= 1e18, unit <= 3.6e12). */
        unsigned long long part = whole * unit;
        unsigned long long fpart = (unsigned long long)((__int128)frac * unit / scale);
        if (part > ULLONG_MAX - fpart || total > ULLONG_MAX - part - fpart) return -1;
        total += part + fpart;
    }
    *ns = total;
    return 0;
}

static const struct key_form *key_lookup(const struct key_form *keys, size_t nkeys, const char *k, size_t kl)
{
    for (size_t i = 0; i < nkeys; i++)
        if ((strlen(keys[i].key) == kl && memcmp(keys[i].key, k, kl) == 0) ||
            (keys[i].old && strlen(keys[i].old) == kl && memcmp(keys[i].old, k, kl) == 0))
            return &keys[i];
    return NULL;
}

/* One "key: value" field in its form, or as text when the value does not have it. */
static int add_field(struct rt_fields *out, const char *section, const char *key, enum form form, const char *v,
                     size_t vl)
{
    unsigned long long u;
    double d;
    if (form == F_NEXT_GC && starts(v, vl, "when heap-alloc >= ")) v += 19, vl -= 19;
    if (form == F_GUESS) form = parse_bytes(v, vl, &u) == 0 ? F_BYTES : parse_u64(v, vl, &u) == 0 ? F_COUNT : F_TEXT;
    switch (form) {
    case F_BYTES:
    case F_NEXT_GC:
        if (parse_bytes(v, vl, &u) == 0) return rt_fields_add_u64(out, section, key, RT_BYTES, u);
        break;
    case F_COUNT:
        if (parse_u64(v, vl, &u) == 0) return rt_fields_add_u64(out, section, key, RT_COUNT, u);
        break;
    case F_NS:
        if (parse_u64(v, vl, &u) == 0) return rt_fields_add_u64(out, section, key, RT_NANOSECONDS, u);
        break;
    case F_TIME: /* gc-pause-end: the end of the last pause, nanoseconds since the epoch */
        if (parse_u64(v, vl, &u) == 0) return rt_fields_add_u64(out, section, key, RT_TIME, u);
        break;
    case F_DURATION:
        if (gops_parse_duration(v, vl, &u) == 0) return rt_fields_add_u64(out, section, key, RT_NANOSECONDS, u);
        break;
    case F_RATIO:
        if (parse_double(v, vl, &d) == 0) return rt_fields_add_double(out, section, key, d);
        break;
    case F_BOOL:
        if (vl == 4 && memcmp(v, "true", 4) == 0) return rt_fields_add_u64(out, section, key, RT_BOOL, 1);
        if (vl == 5 && memcmp(v, "false", 5) == 0) return rt_fields_add_u64(out, section, key, RT_BOOL, 0);
        break;
    default: break;
    }
    char *t = dup_bounded(v, vl);
    if (!t) return -ENOMEM;
    int rc = rt_fields_add_text(out, section, key, t);
    free(t);
    return rc;
}

static int parse_key_values(const char *text, size_t len, const char *section, const struct key_form *keys,
                            size_t nkeys, struct rt_fields *out, char *err, size_t errlen)
{
    struct lines it = {text, text + len};
    const char *s;
    size_t n;
    int lines = 0;
    while (next_line(&it, &s, &n) && lines < MAX_FIELDS) {
        const char *colon = memmem(s, n, ": ", 2);
        if (!colon || colon == s || colon - s > 64) continue;
        size_t kl = (size_t)(colon - s), vl = n - kl - 2;
        const char *v = colon + 2;
        trim(&v, &vl);
        int printable = 1;
        for (size_t i = 0; i < kl; i++)
            if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f) printable = 0;
        if (!printable) continue;
        const struct key_form *kf = key_lookup(keys, nkeys, s, kl);
        char label[72], key[72];
        if (kf) snprintf(label, sizeof label, "%s", kf->key);
        else snprintf(label, sizeof label, "%.*s", (int)kl, s);
        lines++;
        text_snake_key(label, key, sizeof key);
        if (rt_fields_find(out, key)) continue; /* a label said twice (or an old name and its new one): the first wins */
        if (add_field(out, section, label, kf ? kf->form : F_GUESS, v, vl) < 0) {
            snprintf(err, errlen, "out of memory");
            return -ENOMEM;
        }
    }
    if (lines == 0) {
        snprintf(err, errlen, "the reply has no \"key: value\" line (%zu bytes)", len);
        return -EBADMSG;
    }
    return 0;
}

int gops_parse_memstats(const char *text, size_t len, struct rt_fields *out, char *err, size_t errlen)
{
    return parse_key_values(text, len, "memstats", memstats_keys, sizeof memstats_keys / sizeof memstats_keys[0],
                            out, err, errlen);
}

int gops_parse_stats(const char *text, size_t len, struct rt_fields *out, char *err, size_t errlen)
{
    return parse_key_values(text, len, "runtime", stats_keys, sizeof stats_keys / sizeof stats_keys[0], out, err,
                            errlen);
}

/* The first line, trimmed, bounded, printable ASCII only (or NULL). */
static char *first_line(const char *text, size_t len, size_t max)
{
    struct lines it = {text, text + len};
    const char *s;
    size_t n;
    if (!next_line(&it, &s, &n)) return NULL;
    trim(&s, &n);
    if (n == 0 || n > max) return NULL;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f) return NULL;
    return strndup(s, n);
}

int gops_parse_version(const char *text, size_t len, struct rt_fields *out, char *err, size_t errlen)
{
    char *v = first_line(text, len, 128);
    if (!v) {
        snprintf(err, errlen, "the version reply is not a version (%zu bytes)", len);
        return -EBADMSG;
    }
    int rc = rt_fields_add_text(out, "runtime", "version", v);
    free(v);
    if (rc < 0) snprintf(err, errlen, "out of memory");
    return rc;
}

int gops_parse_setgc(const char *text, size_t len, char **message, char *err, size_t errlen)
{
    *message = first_line(text, len, 256);
    if (!*message || strncmp(*message, "New GC percent set to ", 22) != 0) {
        free(*message);
        *message = NULL;
        snprintf(err, errlen, "the reply to setgc is not \"New GC percent set to ...\" (%zu bytes)", len);
        return -EBADMSG;
    }
    return 0;
}

size_t gops_encode_setgc(long long percent, unsigned char *buf)
{
    buf[0] = 0x10;
    return 1 + pb_put_varint(buf + 1, pb_zigzag_encode((int64_t)percent));
}
