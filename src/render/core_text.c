#include "core_text.h"

#include <elf.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "stack_text.h"
#include "util/text.h"

/* A string from the core, made safe for a terminal. */
static const char *shown(char *buf, size_t bufsz, const char *s)
{
    text_sanitize_display(buf, bufsz, s, strlen(s));
    return buf;
}

/* The auxiliary vector's few entries a reader wants at a glance (--json has them all, as gdb's `info auxv`). */
static int auxv_line(const struct core_report *r, struct text_lines *out)
{
    const struct core_notes *n = &r->notes;
    char line[1024] = "", text[300];
    size_t off = 0;
    for (int i = 0; i < n->nauxv && off < sizeof line - 320; i++) {
        const struct core_auxv_entry *a = &n->auxv[i];
        const char *str = r->auxv_strings ? r->auxv_strings[i] : NULL;
        const char *sep = off ? ", " : "";
        if (a->type == AT_EXECFN && str)
            off += (size_t)snprintf(line + off, sizeof line - off, "%sstarted as %s", sep, shown(text, sizeof text, str));
        else if (a->type == AT_PLATFORM && str)
            off += (size_t)snprintf(line + off, sizeof line - off, "%splatform %s", sep, shown(text, sizeof text, str));
        else if (a->type == AT_ENTRY)
            off += (size_t)snprintf(line + off, sizeof line - off, "%sentry 0x%llx", sep, a->value);
        else if (a->type == AT_PAGESZ)
            off += (size_t)snprintf(line + off, sizeof line - off, "%spage size %llu", sep, a->value);
        else if (a->type == AT_SECURE && a->value)
            off += (size_t)snprintf(line + off, sizeof line - off, "%ssetuid-like (AT_SECURE)", sep);
    }
    return off ? text_lines_add(out, "  Auxv: %s", line) : 0;
}

static int process_lines(const struct core_report *r, const char *path, struct text_lines *out)
{
    const struct core_notes *n = &r->notes;
    char p[512], comm[64], args[256], sig[200], size[32], need[32];
    text_format_bytes(size, sizeof size, (long long)n->file_size);
    if (text_lines_add(out, "Core %s: process %d (%s), %d thread%s, %s", shown(p, sizeof p, path), r->stacks.pid,
                       shown(comm, sizeof comm, n->fname), r->stacks.nthreads, r->stacks.nthreads == 1 ? "" : "s",
                       size) < 0)
        return -1;
    if (n->signal.present &&
        text_lines_add(out, "  Signal: %s%s", core_notes_signal_describe(&n->signal, sig, sizeof sig),
                       r->signal_tid ? "" : " (the thread that took it is not known)") < 0)
        return -1;
    if (r->signal_tid && text_lines_add(out, "  Taken by thread %d, shown first", r->signal_tid) < 0) return -1;
    if (!n->signal.present && text_lines_add(out, "  Signal: none (a dump of a live process)") < 0) return -1;
    if (n->state && (text_lines_add(out, "  Command: %s", shown(args, sizeof args, n->args)) < 0 ||
                     text_lines_add(out, "  State %c, uid %d, gid %d, parent %d", n->state, n->uid, n->gid,
                                    n->ppid) < 0))
        return -1;
    if (auxv_line(r, out) < 0) return -1;
    if (n->taken_realtime_ns) {
        time_t secs = (time_t)(n->taken_realtime_ns / 1000000000LL);
        struct tm tm;
        char when[64];
        if (gmtime_r(&secs, &tm) && strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm) &&
            text_lines_add(out, "  Taken: %s, by diagtop", when) < 0)
            return -1;
    }
    if (n->needed_size > n->file_size) {
        text_format_bytes(need, sizeof need, (long long)n->needed_size);
        if (text_lines_add(out, "  Truncated: %s of %s (a dump cut short?): memory past that is missing, and "
                                "stacks that need it end early", size, need) < 0)
            return -1;
    }
    return 0;
}

/* ---- goroutines, grouped by state and stack, as `gops stack` or a goroutine profile's debug=1 ---- */

static int same_goroutine(const struct goroutine *a, const struct goroutine *b)
{
    if (a->npcs != b->npcs || strcmp(a->state, b->state) != 0 || strcmp(a->error, b->error) != 0 || a->tid || b->tid ||
        a->gopc != b->gopc)
        return 0;
    for (int i = 0; i < a->npcs; i++)
        if (a->pcs[i].pc != b->pcs[i].pc) return 0;
    return 1;
}

static int goroutine_header(const struct goroutines *gs, const int *members, int n, struct text_lines *out)
{
    const struct goroutine *g = &gs->list[members[0]];
    char since[64] = "", ids[256] = "";
    double longest = -1; /* a group's members waited for different times: the longest says most */
    for (int i = 0; i < n; i++)
        if (gs->list[members[i]].waited_s > longest) longest = gs->list[members[i]].waited_s;
    if (longest >= 0) snprintf(since, sizeof since, ", %s%.2f s when dumped", n > 1 ? "up to " : "", longest);
    else if (g->waiting_since_s >= 0) snprintf(since, sizeof since, ", since %.2f s after start", g->waiting_since_s);
    if (n == 1) return text_lines_add(out, "Goroutine %lld [%s%s]:", g->id, g->state, since);
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        if (off < sizeof ids - 24)
            off += (size_t)snprintf(ids + off, sizeof ids - off, "%s%lld", i ? " " : "", gs->list[members[i]].id);
        else if (off < sizeof ids - 4) off += (size_t)snprintf(ids + off, sizeof ids - off, " ...");
    }
    return text_lines_add(out, "%d goroutines [%s%s]: %s", n, g->state, since, ids);
}

static int goroutine_block(const struct goroutine *g, int source, struct text_lines *out)
{
    if (stack_text_frames(g->frames, g->nframes, g->error, source, out) < 0) return -1;
    if (!g->created_by.function) return 0;
    char fn[512], where[600] = "";
    shown(fn, sizeof fn, g->created_by.function);
    if (source && g->created_by.file) {
        char file[512];
        snprintf(where, sizeof where, "  %s:%d", shown(file, sizeof file, g->created_by.file), g->created_by.line);
    }
    return text_lines_add(out, "  created by %s%s", fn, where);
}

static int goroutine_lines(const struct core_report *r, const struct core_text_opts *o, struct text_lines *out)
{
    const struct goroutines *gs = &r->goroutines;
    if (!gs->go) return 0;
    if (gs->why_not[0])
        return text_lines_add(out, "%s", "") < 0 || text_lines_add(out, "Goroutines: %s", gs->why_not) < 0 ? -1 : 0;
    int shown_n = 0;
    for (int i = 0; i < gs->n; i++) shown_n += o->all_goroutines || !gs->list[i].system;
    if (text_lines_add(out, "%s", "") < 0 ||
        text_lines_add(out, "Goroutines: %d%s", gs->n,
                       shown_n < gs->n ? " (the runtime's own hidden, as Go's tracebacks do; --all-goroutines shows them)"
                                       : "") < 0)
        return -1;
    int *members = malloc((size_t)(gs->n ? gs->n : 1) * sizeof *members);
    char *done = calloc((size_t)(gs->n ? gs->n : 1), 1);
    int rc = members && done ? 0 : -1;
    for (int i = 0; i < gs->n && rc == 0; i++) {
        if (done[i] || (!o->all_goroutines && gs->list[i].system)) continue;
        int n = 0;
        for (int k = i; k < gs->n; k++) {
            if (done[k] || (!o->all_goroutines && gs->list[k].system) ||
                (k != i && (!o->group || !same_goroutine(&gs->list[i], &gs->list[k]))))
                continue;
            members[n++] = k;
            done[k] = 1;
        }
        if (text_lines_add(out, "%s", "") < 0 || goroutine_header(gs, members, n, out) < 0 ||
            goroutine_block(&gs->list[i], o->source, out) < 0)
            rc = -1;
    }
    free(members);
    free(done);
    if (rc == 0 && text_lines_add(out, "%s", "") == 0 && text_lines_add(out, "Threads: %d", r->stacks.nthreads) < 0)
        rc = -1;
    return rc;
}

/* ---- the native heap ---- */

/* A sample's first bytes: as text when they are (a leaked string, a protocol's field names: at least 8 printable
 * or white-space bytes first, escaped), else in hex. */
static void head_text(char *buf, size_t bufsz, const unsigned char *b, size_t n)
{
    size_t text = 0, off = 0;
    while (text < n && ((b[text] >= 0x20 && b[text] < 0x7f) || b[text] == '\n' || b[text] == '\t')) text++;
    if (text >= 8) {
        off += (size_t)snprintf(buf, bufsz, "\"");
        for (size_t i = 0; i < text && off + 4 < bufsz; i++)
            off += (size_t)snprintf(buf + off, bufsz - off, "%s", b[i] == '\n' ? "\\n" : b[i] == '\t' ? "\\t" : (char[]){(char)b[i], 0});
        snprintf(buf + off, bufsz - off, "\"");
        return;
    }
    for (size_t i = 0; i < 16 && i < n && off + 3 < bufsz; i++) off += (size_t)snprintf(buf + off, bufsz - off, "%02x", b[i]);
}

static int heap_lines(const struct core_report *r, const struct core_text_opts *o, struct text_lines *out)
{
    const struct core_heap *hp = &r->heap;
    if (!hp->allocator[0] && !hp->why_not[0]) return 0;
    if (text_lines_add(out, "%s", "") < 0) return -1;
    if (!hp->walked)
        return text_lines_add(out, "Native heap%s%s: %s", hp->allocator[0] ? " " : "", hp->allocator, hp->why_not);
    const struct glibc_heap *h = &hp->h;
    char used[32], freeb[32], top[32], mm[32], sys[32];
    text_format_bytes(used, sizeof used, (long long)h->in_use_bytes);
    text_format_bytes(freeb, sizeof freeb, (long long)h->free_bytes);
    text_format_bytes(top, sizeof top, (long long)h->top_bytes);
    text_format_bytes(mm, sizeof mm, (long long)h->mmapped_bytes);
    text_format_bytes(sys, sizeof sys, (long long)h->system_bytes);
    if (text_lines_add(out, "Native heap (glibc malloc, %d arena%s): %s in use in %llu chunks; %s free in %llu chunks "
                            "(%llu in the tcache and fastbins); top %s; arenas hold %s from the system",
                       h->arenas, h->arenas == 1 ? "" : "s", used, h->in_use_chunks, freeb, h->free_chunks,
                       h->cached_chunks, top, sys) < 0 ||
        text_lines_add(out, "  mmapped: %llu chunk%s, %s%s", h->mmapped_chunks, h->mmapped_chunks == 1 ? "" : "s", mm,
                       h->mmapped_expected >= 0 && (unsigned long long)h->mmapped_expected != h->mmapped_chunks
                           ? " (malloc counts a different number: some were not found in the core)"
                           : "") < 0 ||
        (h->warning[0] && text_lines_add(out, "  (%s)", h->warning) < 0))
        return -1;
    int n = h->nclasses < o->heap_rows || o->heap_rows == 0 ? h->nclasses : o->heap_rows;
    if (text_lines_add(out, "  %10s %10s %12s  %s", "CHUNK", "COUNT", "BYTES", "FIRST ONES (address: first bytes)") < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        const struct heap_class *c = &h->classes[i];
        char bytes[32], sample[200] = "";
        text_format_bytes(bytes, sizeof bytes, (long long)c->bytes);
        size_t off = 0;
        for (int k = 0; k < c->nsample && k < 2 && off < sizeof sample - 80; k++) {
            char head[80], safe[100];
            head_text(head, sizeof head, c->head[k], HEAP_SAMPLE_BYTES);
            text_sanitize_display(safe, sizeof safe, head, strlen(head));
            off += (size_t)snprintf(sample + off, sizeof sample - off, "%s0x%llx: %s", k ? "  " : "", c->sample[k], safe);
        }
        if (text_lines_add(out, "  %10llu %10llu %12s  %s", c->chunk_size, c->count, bytes, sample) < 0) return -1;
    }
    if (n < h->nclasses && text_lines_add(out, "  (%d more sizes; --heap-rows 0 lists all)", h->nclasses - n) < 0)
        return -1;
    return 0;
}

static int missing(const struct core_module *m) { return !m->file && !m->in_core; }

static int file_lines(const struct core_report *r, const struct core_text_opts *o, struct text_lines *out)
{
    int listed = 0;
    for (int i = 0; i < r->nmodules; i++) listed += o->all_files || r->modules[i].frames || missing(&r->modules[i]);
    if (text_lines_add(out, "%s", "") < 0 ||
        text_lines_add(out, "Mapped files: %d%s", r->nmodules,
                       listed < r->nmodules ? " (those with frames, and the missing; --all-files lists all)" : "") < 0)
        return -1;
    for (int i = 0; i < r->nmodules; i++) {
        const struct core_module *m = &r->modules[i];
        if (!o->all_files && !m->frames && !missing(m)) continue;
        char name[512], file[512] = "", status[600];
        shown(name, sizeof name, m->name);
        if (m->in_core) snprintf(status, sizeof status, "read from the core");
        else if (!m->file) snprintf(status, sizeof status, "MISSING%s", m->frames ? ": its frames show as file+offset" : "");
        else if (strcmp(m->file, m->name) != 0) snprintf(status, sizeof status, "read from %s", shown(file, sizeof file, m->file));
        else snprintf(status, sizeof status, "found");
        if (text_lines_add(out, "  %016llx-%016llx %-40s build-id %s  %d frame%s, %s", m->start, m->end, name,
                           m->build_id[0] ? m->build_id : "(none)", m->frames, m->frames == 1 ? "" : "s",
                           status) < 0)
            return -1;
    }
    return 0;
}

int core_text_render(const struct core_report *r, const struct core_text_opts *o, struct text_lines *out)
{
    struct stack_text_opts so = {.group = o->group, .source = o->source};
    if (process_lines(r, o->path, out) < 0 || goroutine_lines(r, o, out) < 0 ||
        stack_text_threads(&r->stacks, &so, out) < 0 || heap_lines(r, o, out) < 0)
        return -1;
    if (r->missing && (text_lines_add(out, "%s", "") < 0 ||
                       text_lines_add(out, "%d file%s with frames in %s missing: pass --sysroot DIR or --exe PATH",
                                      r->missing, r->missing == 1 ? "" : "s", r->missing == 1 ? "it is" : "them are") < 0))
        return -1;
    return file_lines(r, o, out);
}

/* ---- two cores ---- */

static int diff_size_lines(const struct core_diff *d, const struct core_text_opts *o, struct text_lines *out)
{
    const struct glibc_heap *a = &d->old->heap.h, *b = &d->new->heap.h;
    char ob[32], nb[32], db[32];
    text_format_bytes(ob, sizeof ob, (long long)a->in_use_bytes);
    text_format_bytes(nb, sizeof nb, (long long)b->in_use_bytes);
    text_format_bytes(db, sizeof db, (long long)b->in_use_bytes - (long long)a->in_use_bytes);
    if (text_lines_add(out, "%s", "") < 0 ||
        text_lines_add(out, "Native heap in use: %s -> %s (%s%s), %llu -> %llu chunks (%+lld)", ob, nb,
                       b->in_use_bytes >= a->in_use_bytes ? "+" : "", db, a->in_use_chunks, b->in_use_chunks,
                       (long long)b->in_use_chunks - (long long)a->in_use_chunks) < 0 ||
        text_lines_add(out, "  %10s %10s %10s %12s %12s", "CHUNK", "COUNT", "DCOUNT", "BYTES", "DBYTES") < 0)
        return -1;
    int shown_rows = 0, unchanged = 0;
    for (int i = 0; i < d->nsizes; i++) {
        const struct core_diff_size *z = &d->sizes[i];
        if (z->new_count == z->old_count && z->new_bytes == z->old_bytes) { /* the same in both: JSON has it */
            unchanged++;
            continue;
        }
        if (o->heap_rows && shown_rows == o->heap_rows) continue;
        char bytes[32], delta[32], signed_delta[40];
        long long dbytes = (long long)z->new_bytes - (long long)z->old_bytes;
        text_format_bytes(bytes, sizeof bytes, (long long)z->new_bytes);
        text_format_bytes(delta, sizeof delta, dbytes);
        snprintf(signed_delta, sizeof signed_delta, "%s%s", dbytes >= 0 ? "+" : "", delta);
        if (text_lines_add(out, "  %10llu %10llu %+10lld %12s %12s", z->chunk_size, z->new_count,
                           (long long)z->new_count - (long long)z->old_count, bytes, signed_delta) < 0)
            return -1;
        shown_rows++;
    }
    return unchanged ? text_lines_add(out, "  (%d sizes unchanged)", unchanged) : 0;
}

int core_text_diff(const struct core_diff *d, const char *old_path, const char *new_path,
                   const struct core_text_opts *o, struct text_lines *out)
{
    char op[512], np[512], comm[64];
    if (text_lines_add(out, "Cores %s -> %s: process %d (%s) -> %d%s", shown(op, sizeof op, old_path),
                       shown(np, sizeof np, new_path), d->old->stacks.pid, shown(comm, sizeof comm, d->old->notes.fname),
                       d->new->stacks.pid, d->same_program ? "" : " (not the same program: compare with care)") < 0 ||
        text_lines_add(out, "  Threads: %d -> %d (%+d)", d->old->stacks.nthreads, d->new->stacks.nthreads,
                       d->new->stacks.nthreads - d->old->stacks.nthreads) < 0 ||
        ((d->old->goroutines.n || d->new->goroutines.n) &&
         text_lines_add(out, "  Goroutines: %d -> %d (%+d)", d->old->goroutines.n, d->new->goroutines.n,
                        d->new->goroutines.n - d->old->goroutines.n) < 0))
        return -1;
    if (d->sizes && diff_size_lines(d, o, out) < 0) return -1;
    if (!d->sizes && text_lines_add(out, "  (the heaps: %s)",
                                    !d->old->heap.walked ? d->old->heap.why_not : d->new->heap.why_not) < 0)
        return -1;
    if (text_lines_add(out, "%s", "") < 0 ||
        text_lines_add(out, "Stacks whose count changed: %d%s", d->nstacks, d->nstacks ? ", most changed first" : "") < 0)
        return -1;
    for (int i = 0; i < d->nstacks; i++) {
        const struct core_diff_stack *s = &d->stacks[i];
        char state[64] = "";
        if (s->state) snprintf(state, sizeof state, " [%s]", s->state);
        if (text_lines_add(out, "%s", "") < 0 ||
            text_lines_add(out, "%+d %s%s: %d -> %d", s->new_count - s->old_count, s->goroutine ? "goroutines" : "threads",
                           state, s->old_count, s->new_count) < 0 ||
            stack_text_frames(s->frames, s->nframes, "", o->source, out) < 0)
            return -1;
    }
    return 0;
}
