#include "flame.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"
#include "cpu_top.h"

/* ---- the merged call tree ----
 * Stacks become paths of name ranks (root first) sorted like strings: equal prefixes are then adjacent, so one
 * pass over the sorted paths yields the merged tree in pre-order, each node covering the samples [start,
 * start + samples) of the sorted order (flamegraph.pl's flow()). Equal names share a rank, as they would in
 * folded text. */

struct path {
    size_t off; /* into tree.seq */
    int n;
    long long samples;
};

struct node {
    int depth, fn;
    long long start, samples;
};

struct tree {
    struct cpu_top_index x;
    int *rank;  /* per function: its name's rank */
    int *fn_of; /* per rank: one function of that name */
    int *seq;   /* the ranks of all paths */
    struct path *paths;
    int npaths;
    struct node *nodes;
    size_t nnodes;
    long long total;
    int maxdepth; /* deepest node (0 = roots only), -1 when empty */
};

static void tree_free(struct tree *t)
{
    cpu_top_index_free(&t->x);
    free(t->rank);
    free(t->fn_of);
    free(t->seq);
    free(t->paths);
    free(t->nodes);
}

static int fn_cmp(const void *a, const void *b, void *arg)
{
    const struct cpu_top_index *x = arg;
    return strcmp(x->fns[*(const int *)a].shown, x->fns[*(const int *)b].shown);
}

static int path_cmp(const void *pa, const void *pb, void *arg)
{
    const int *seq = arg;
    const struct path *a = pa, *b = pb;
    for (int i = 0; i < a->n && i < b->n; i++)
        if (seq[a->off + i] != seq[b->off + i]) return seq[a->off + i] < seq[b->off + i] ? -1 : 1;
    return (a->n > b->n) - (a->n < b->n);
}

static int ranks_build(struct tree *t)
{
    int n = t->x.nfns;
    int *order = malloc((n ? (size_t)n : 1) * sizeof *order);
    t->rank = malloc((n ? (size_t)n : 1) * sizeof *t->rank);
    t->fn_of = malloc((n ? (size_t)n : 1) * sizeof *t->fn_of);
    if (!order || !t->rank || !t->fn_of) {
        free(order);
        return -ENOMEM;
    }
    for (int i = 0; i < n; i++) order[i] = i;
    qsort_r(order, (size_t)n, sizeof *order, fn_cmp, &t->x);
    int r = -1;
    for (int i = 0; i < n; i++) {
        if (i == 0 || strcmp(t->x.fns[order[i]].shown, t->x.fns[order[i - 1]].shown) != 0) t->fn_of[++r] = order[i];
        t->rank[order[i]] = r;
    }
    free(order);
    return 0;
}

static int paths_build(struct tree *t, const struct cpu_report *r, int tid)
{
    size_t nseq = 0;
    for (int i = 0; i < r->nstacks; i++) nseq += r->stacks[i].nframes > 0 ? (size_t)r->stacks[i].nframes : 0;
    t->seq = malloc((nseq ? nseq : 1) * sizeof *t->seq);
    t->paths = malloc((r->nstacks > 0 ? (size_t)r->nstacks : 1) * sizeof *t->paths);
    if (!t->seq || !t->paths) return -ENOMEM;
    size_t off = 0;
    for (int i = 0; i < r->nstacks; i++) {
        const struct cpu_stack *s = &r->stacks[i];
        if (s->samples <= 0 || (tid && s->tid != tid)) continue;
        struct path *p = &t->paths[t->npaths];
        p->off = off;
        p->n = 0;
        p->samples = s->samples;
        for (int k = s->nframes - 1; k >= 0; k--) {
            int f = cpu_top_index_at(&t->x, r, s, k);
            if (f >= 0) t->seq[off + (size_t)p->n++] = t->rank[f];
        }
        if (p->n == 0) continue; /* no frame to draw */
        off += (size_t)p->n;
        t->npaths++;
    }
    qsort_r(t->paths, (size_t)t->npaths, sizeof *t->paths, path_cmp, t->seq);
    return 0;
}

static int nodes_build(struct tree *t)
{
    size_t cap = 0;
    int maxn = 0;
    for (int i = 0; i < t->npaths; i++) {
        cap += (size_t)t->paths[i].n;
        if (t->paths[i].n > maxn) maxn = t->paths[i].n;
    }
    t->nodes = malloc((cap ? cap : 1) * sizeof *t->nodes);
    size_t *open = malloc((maxn ? (size_t)maxn : 1) * sizeof *open); /* the previous path's nodes by depth */
    if (!t->nodes || !open) {
        free(open);
        return -ENOMEM;
    }
    const struct path *prev = NULL;
    for (int i = 0; i < t->npaths; i++) {
        const struct path *p = &t->paths[i];
        int common = 0;
        const int *seq = t->seq + p->off, *pseq = prev ? t->seq + prev->off : NULL;
        while (prev && common < p->n && common < prev->n && seq[common] == pseq[common]) common++;
        for (int d = 0; d < common; d++) t->nodes[open[d]].samples += p->samples;
        for (int d = common; d < p->n; d++) {
            open[d] = t->nnodes;
            t->nodes[t->nnodes++] = (struct node){d, t->fn_of[seq[d]], t->total, p->samples};
        }
        if (p->n - 1 > t->maxdepth) t->maxdepth = p->n - 1;
        t->total += p->samples;
        prev = p;
    }
    free(open);
    return 0;
}

static int tree_build(const struct cpu_report *r, int tid, int with_nodes, struct tree *t)
{
    memset(t, 0, sizeof *t);
    t->maxdepth = -1;
    int rc = cpu_top_index_build(r, &t->x);
    if (rc == 0) rc = ranks_build(t);
    if (rc == 0) rc = paths_build(t, r, tid);
    if (rc == 0 && with_nodes) rc = nodes_build(t);
    if (rc < 0) tree_free(t);
    return rc;
}

static const char *node_name(const struct tree *t, const struct node *n) { return t->x.fns[n->fn].shown; }

/* ---- folded stacks ---- */

int flame_folded(const struct cpu_report *r, int tid, struct text_lines *out)
{
    struct tree t;
    if (tree_build(r, tid, 0, &t) < 0) return -ENOMEM;
    int rc = 0;
    char *line = NULL;
    size_t cap = 0;
    for (int i = 0; i < t.npaths && rc == 0;) {
        const struct path *p = &t.paths[i];
        long long count = 0;
        int j = i;
        for (; j < t.npaths && path_cmp(p, &t.paths[j], t.seq) == 0; j++) count += t.paths[j].samples;
        size_t need = 32;
        for (int k = 0; k < p->n; k++) need += strlen(t.x.fns[t.fn_of[t.seq[p->off + (size_t)k]]].shown) + 1;
        if (need > cap) {
            free(line);
            if (!(line = malloc(cap = need))) {
                rc = -ENOMEM;
                break;
            }
        }
        char *o = line;
        for (int k = 0; k < p->n; k++) {
            if (k) *o++ = ';';
            for (const char *c = t.x.fns[t.fn_of[t.seq[p->off + (size_t)k]]].shown; *c; c++)
                *o++ = *c == ';' ? '?' : *c; /* ';' separates frames */
        }
        snprintf(o, 32, " %lld", count);
        rc = text_lines_add(out, "%s", line);
        i = j;
    }
    free(line);
    tree_free(&t);
    return rc;
}

/* ---- text icicle ---- */

static long long col_of(long long sample, long long total, int width)
{
    return (long long)((__int128)sample * width / total);
}

/* Appends up to cols code points of s (valid UTF-8), ".." replacing the end when it does not fit. Returns the
 * columns written. */
static int put_clipped(char **dst, const char *s, int cols)
{
    int have = 0;
    for (const char *c = s; *c; c++) have += ((unsigned char)*c & 0xC0) != 0x80;
    int keep = have <= cols ? have : cols >= 3 ? cols - 2 : cols, seen = 0;
    const char *c = s;
    for (; *c; c++) {
        if (((unsigned char)*c & 0xC0) != 0x80 && seen++ == keep) break;
        *(*dst)++ = *c;
    }
    if (keep < have && cols >= 3) {
        memcpy(*dst, "..", 2);
        *dst += 2;
        keep += 2;
    }
    return keep;
}

int flame_icicle(const struct cpu_report *r, int tid, int width, int height, struct text_lines *out)
{
    if (width < 1) return -EINVAL;
    struct tree t;
    if (tree_build(r, tid, 1, &t) < 0) return -ENOMEM;
    int depths = t.maxdepth + 1, rc = 0;
    if (height > 0 && height < depths) depths = height;
    /* The nodes by depth, each depth left to right (pre-order keeps that within a depth): a counting sort. */
    size_t ndepth = (size_t)t.maxdepth + 1, *first = calloc(ndepth + 1, sizeof *first),
           *fill = calloc(ndepth + 1, sizeof *fill), *order = malloc((t.nnodes ? t.nnodes : 1) * sizeof *order);
    char *line = malloc((size_t)width * 4 + 1); /* a column is one code point: at most 4 bytes */
    if (!first || !fill || !order || !line) rc = -ENOMEM;
    for (size_t i = 0; i < t.nnodes && rc == 0; i++) first[t.nodes[i].depth + 1]++;
    for (size_t d = 0; d < ndepth && rc == 0; d++) first[d + 1] += first[d];
    if (rc == 0) memcpy(fill, first, (ndepth + 1) * sizeof *fill);
    for (size_t i = 0; i < t.nnodes && rc == 0; i++) order[fill[t.nodes[i].depth]++] = i;
    for (int d = 0; d < depths && rc == 0; d++) {
        char *p = line;
        long long cursor = 0;
        for (size_t k = first[d]; k < first[d + 1]; k++) {
            const struct node *n = &t.nodes[order[k]];
            long long c0 = col_of(n->start, t.total, width), c1 = col_of(n->start + n->samples, t.total, width);
            if (c1 - c0 < 1) continue;
            for (; cursor < c0; cursor++) *p++ = ' ';
            int room = (int)(c1 - c0 - 1), used = put_clipped(&p, node_name(&t, n), room);
            for (; used < room; used++) *p++ = ' ';
            *p++ = '|';
            cursor = c1;
        }
        *p = '\0';
        rc = text_lines_add(out, "%s", line);
    }
    free(first);
    free(fill);
    free(order);
    free(line);
    tree_free(&t);
    return rc;
}

/* ---- SVG ---- */

enum { FRAME_H = 16, FONT_PX = 12, XPAD = 10, TOP = 50, BOTTOM = 30 };
#define CHAR_W 7.2 /* px per character of a 12 px monospace font */
#define MIN_PX 0.1

/* XML text or attribute content from display-sanitized text (valid UTF-8, no control characters): the five
 * special characters escaped, and U+FFFE/U+FFFF, which XML forbids, replaced. */
static void xml_put(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0xEF && i + 2 < n && (unsigned char)s[i + 1] == 0xBF && ((unsigned char)s[i + 2] & 0xFE) == 0xBE) {
            fputc('?', f);
            i += 2;
        } else if (c == '&') fputs("&amp;", f);
        else if (c == '<') fputs("&lt;", f);
        else if (c == '>') fputs("&gt;", f);
        else if (c == '"') fputs("&quot;", f);
        else if (c == '\'') fputs("&apos;", f);
        else fputc(c, f);
    }
}

static void xml_puts(FILE *f, const char *s) { xml_put(f, s, strlen(s)); }

/* Raw untrusted bytes, sanitized for display, then escaped. */
static int xml_put_raw(FILE *f, const char *raw, size_t n)
{
    char *s = malloc(n + 1);
    if (!s) return -ENOMEM;
    text_sanitize_display(s, n + 1, raw, n);
    xml_puts(f, s);
    free(s);
    return 0;
}

/* The label drawn in a block of w px: the name, or its start and "..", or nothing under 3 characters; the
 * script refits it the same way on zoom. */
static void xml_put_label(FILE *f, const char *s, double w)
{
    int cols = (int)((w - 6) / CHAR_W);
    if (cols < 3) return;
    char *buf = malloc(strlen(s) + 3), *p = buf;
    if (!buf) return;
    put_clipped(&p, s, cols);
    xml_put(f, buf, (size_t)(p - buf));
    free(buf);
}

static uint32_t hash32(const char *s)
{
    uint32_t h = 2166136261u;
    for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static double hsl_part(double p, double q, double t)
{
    if (t < 0) t += 1;
    if (t > 1) t -= 1;
    if (t < 1.0 / 6) return p + (q - p) * 6 * t;
    if (t < 0.5) return q;
    if (t < 2.0 / 3) return p + (q - p) * (2.0 / 3 - t) * 6;
    return p;
}

static void color_of(const char *name, const char *module, int by_module, int rgb[3])
{
    uint32_t h = hash32(name);
    if (!by_module) { /* flamegraph.pl's "hot" palette */
        rgb[0] = 205 + (int)(h % 50);
        rgb[1] = (int)((h >> 8) % 230);
        rgb[2] = (int)((h >> 16) % 55);
        return;
    }
    if (!module) {
        rgb[0] = rgb[1] = rgb[2] = 190 + (int)(h % 20);
        return;
    }
    /* A hue per module; the lightness varies a little by name so that neighbours stay apart. */
    double hue = (hash32(module) % 360) / 360.0, s = 0.6, l = 0.62 + (h % 12) / 100.0;
    double q = l + s - l * s, p = 2 * l - q;
    rgb[0] = (int)(255 * hsl_part(p, q, hue + 1.0 / 3));
    rgb[1] = (int)(255 * hsl_part(p, q, hue));
    rgb[2] = (int)(255 * hsl_part(p, q, hue - 1.0 / 3));
}

/* Zoom: a block and what lies inside it fill the width, its callers span it, the rest hides; unzoom is a zoom on
 * the "all" block. Search: blocks whose name holds the text turn magenta; the matched share counts nested
 * matches once (document order is the tree's pre-order). */
static const char svg_script[] =
    "var frames, details, matched, unzoom;\n"
    "function attr(g, a) { return +g.getAttribute('data-' + a); }\n"
    "function fname(g) { return g.getElementsByTagName('title')[0].textContent.split('\\n')[0]; }\n"
    "function frameOf(e) { for (var n = e.target; n && n.getAttribute; n = n.parentNode)\n"
    "  if (n.getAttribute('class') && n.getAttribute('class').indexOf('f') == 0) return n; return null; }\n"
    "function fit(g, w) { var c = Math.floor((w - 6) / CHARW), name = fname(g);\n"
    "  g.getElementsByTagName('text')[0].textContent =\n"
    "    c < 3 ? '' : name.length <= c ? name : name.substring(0, c - 2) + '..'; }\n"
    "function place(g, x, w) { var r = g.getElementsByTagName('rect')[0];\n"
    "  r.setAttribute('x', x.toFixed(2)); r.setAttribute('width', w.toFixed(2));\n"
    "  g.getElementsByTagName('text')[0].setAttribute('x', (x + 3).toFixed(2)); fit(g, w); }\n"
    "function zoom(z) { var zs = attr(z, 's'), zn = attr(z, 'n'), zd = attr(z, 'd');\n"
    "  for (var i = 0; i < frames.length; i++) {\n"
    "    var g = frames[i], s = attr(g, 's'), n = attr(g, 'n'), d = attr(g, 'd');\n"
    "    if (d >= zd && s >= zs && s + n <= zs + zn && n * PLOTW / zn >= MINPX) {\n"
    "      g.setAttribute('class', 'f'); place(g, XPAD + (s - zs) * PLOTW / zn, n * PLOTW / zn);\n"
    "    } else if (d < zd && s <= zs && s + n >= zs + zn) {\n"
    "      g.setAttribute('class', 'f anc'); place(g, XPAD, PLOTW);\n"
    "    } else g.setAttribute('class', 'f hide'); }\n"
    "  unzoom.setAttribute('class', zd > 0 ? '' : 'hide'); }\n"
    "function search() { var term = prompt('Search for a function (substring):', ''); if (term === null) return;\n"
    "  var total = attr(frames[0], 'n'), sum = 0, end = -1;\n"
    "  for (var i = 0; i < frames.length; i++) { var g = frames[i], r = g.getElementsByTagName('rect')[0];\n"
    "    if (!r.getAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));\n"
    "    var hit = term !== '' && fname(g).indexOf(term) >= 0;\n"
    "    r.setAttribute('fill', hit ? 'rgb(230,0,230)' : r.getAttribute('data-fill'));\n"
    "    if (hit && attr(g, 's') >= end) { sum += attr(g, 'n'); end = attr(g, 's') + attr(g, 'n'); } }\n"
    "  matched.textContent = term === '' ? ' ' : 'Matched: ' + (100 * sum / total).toFixed(2) + '%'; }\n"
    "function init() {\n"
    "  frames = document.getElementById('frames').getElementsByTagName('g');\n"
    "  details = document.getElementById('details'); matched = document.getElementById('matched');\n"
    "  unzoom = document.getElementById('unzoom');\n"
    "  var box = document.getElementById('frames');\n"
    "  box.addEventListener('click', function (e) { var g = frameOf(e); if (g) zoom(g); });\n"
    "  box.addEventListener('mouseover', function (e) { var g = frameOf(e);\n"
    "    if (g) details.textContent = g.getElementsByTagName('title')[0].textContent.replace('\\n', '  '); });\n"
    "  box.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
    "  unzoom.addEventListener('click', function () { zoom(frames[0]); });\n"
    "  document.getElementById('search').addEventListener('click', search);\n"
    "  document.addEventListener('keydown', function (e) {\n"
    "    if ((e.ctrlKey || e.metaKey) && e.keyCode == 70) { e.preventDefault(); search(); } }); }\n"
    "window.addEventListener('load', init);\n";

static void svg_frame(FILE *f, const struct tree *t, const char *name, const char *module, int by_module,
                      long long start, long long samples, int depth, double plotw, int height, double period_ms)
{
    double x = XPAD + (double)start * plotw / (double)t->total, w = (double)samples * plotw / (double)t->total;
    int y = height - BOTTOM - (depth + 1) * FRAME_H, rgb[3];
    color_of(name, module, by_module, rgb);
    fprintf(f, "<g class=\"f\" data-s=\"%lld\" data-n=\"%lld\" data-d=\"%d\"><title>", start, samples, depth);
    xml_puts(f, name);
    fputc('\n', f);
    if (module) {
        fputc('[', f);
        xml_put_raw(f, module, strlen(module));
        fputs("] ", f);
    }
    fprintf(f, "%lld samples (%.2f%%), %.0f ms</title>", samples, 100.0 * (double)samples / (double)t->total,
            (double)samples * period_ms);
    fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/>",
            x, y, w, FRAME_H - 1, rgb[0], rgb[1], rgb[2]);
    fprintf(f, "<text x=\"%.2f\" y=\"%d\">", x + 3, y + FRAME_H - 4);
    xml_put_label(f, name, w);
    fputs("</text></g>\n", f);
}

static void svg_header(FILE *f, const struct cpu_report *r, const struct flame_svg_opts *o, int width, int height,
                       double plotw)
{
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
               "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "xmlns=\"http://www.w3.org/2000/svg\">\n",
            width, height, width, height);
    fputs("<style type=\"text/css\"><![CDATA[\n"
          "text { font-family: monospace; font-size: 12px; fill: rgb(0,0,0); }\n"
          "#title { font-size: 17px; } #search, #unzoom { cursor: pointer; }\n"
          ".f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; cursor: pointer; }\n"
          ".anc rect { opacity: 0.5; } .hide { display: none; }\n"
          "]]></style>\n",
          f);
    fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\nvar PLOTW = %.2f, XPAD = %d, CHARW = %.1f, MINPX = %.1f;\n",
            plotw, XPAD, CHAR_W, MIN_PX);
    fputs(svg_script, f);
    fputs("]]></script>\n", f);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"rgb(248,248,248)\"/>\n", width, height);
    fprintf(f, "<text id=\"title\" x=\"%d\" y=\"22\" text-anchor=\"middle\">", width / 2);
    if (o->title) xml_put_raw(f, o->title, strlen(o->title));
    else {
        fprintf(f, "CPU profile of PID %d (", r->pid);
        xml_put_raw(f, r->comm, strnlen(r->comm, sizeof r->comm));
        fputc(')', f);
    }
    fprintf(f, "</text>\n<text id=\"subtitle\" x=\"%d\" y=\"40\" text-anchor=\"middle\">", width / 2);
    fprintf(f, "%lld samples in %.2f s at %d Hz (", r->samples, r->seconds, r->hz);
    xml_put_raw(f, r->method, strnlen(r->method, sizeof r->method));
    fprintf(f, "), %lld lost", r->lost);
    if (o->tid) fprintf(f, "; thread %d", o->tid);
    fputs("</text>\n", f);
    fprintf(f, "<text id=\"unzoom\" x=\"%d\" y=\"22\" class=\"hide\">Reset Zoom</text>\n", XPAD);
    fprintf(f, "<text id=\"search\" x=\"%d\" y=\"22\" text-anchor=\"end\">Search</text>\n", width - XPAD);
    fprintf(f, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", XPAD, height - 10);
    fprintf(f, "<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"> </text>\n", width - XPAD, height - 10);
}

int flame_svg(const struct cpu_report *r, const struct flame_svg_opts *o, char **out, size_t *len)
{
    static const struct flame_svg_opts defaults = {0};
    if (!o) o = &defaults;
    *out = NULL;
    *len = 0;
    struct tree t;
    if (tree_build(r, o->tid, 1, &t) < 0) return -ENOMEM;
    int width = o->width > 2 * XPAD + 10 ? o->width : 1200;
    double plotw = width - 2 * XPAD;
    /* Depth 0 is "all"; the report's outermost frames sit on it. Only drawn blocks count for the height. */
    int maxd = 0;
    for (size_t i = 0; i < t.nnodes; i++)
        if (t.nodes[i].depth + 1 > maxd && (double)t.nodes[i].samples * plotw / (double)t.total >= MIN_PX)
            maxd = t.nodes[i].depth + 1;
    int height = TOP + (maxd + 1) * FRAME_H + BOTTOM;
    double period_ms = r->period_ns / 1e6;
    FILE *f = open_memstream(out, len);
    if (!f) {
        tree_free(&t);
        return -ENOMEM;
    }
    svg_header(f, r, o, width, height, plotw);
    fputs("<g id=\"frames\">\n", f);
    if (t.total > 0) {
        svg_frame(f, &t, "all", NULL, o->color_by_module, 0, t.total, 0, plotw, height, period_ms);
        for (size_t i = 0; i < t.nnodes; i++) {
            const struct node *n = &t.nodes[i];
            if ((double)n->samples * plotw / (double)t.total < MIN_PX) continue;
            svg_frame(f, &t, node_name(&t, n), t.x.fns[n->fn].module, o->color_by_module, n->start, n->samples,
                      n->depth + 1, plotw, height, period_ms);
        }
    }
    fputs("</g>\n</svg>\n", f);
    int bad = ferror(f);
    tree_free(&t);
    if (fclose(f) != 0 || bad) {
        free(*out);
        *out = NULL;
        *len = 0;
        return -ENOMEM;
    }
    return 0;
}
