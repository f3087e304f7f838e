#include "stack_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"

void stack_text_frame(char *buf, size_t bufsz, const struct stack_frame *f, int source)
{
    char fn[512], where[512] = "", raw[1200];
    if (f->function && f->inlined) snprintf(fn, sizeof fn, "%s (inlined)", f->function);
    else if (f->function) snprintf(fn, sizeof fn, "%s+0x%llx", f->function, f->offset);
    else if (f->module) snprintf(fn, sizeof fn, "%s+0x%llx", f->module, f->offset);
    else snprintf(fn, sizeof fn, "0x%llx", f->pc);
    if (source && f->file) snprintf(where, sizeof where, "  %s:%d", f->file, f->line);
    snprintf(raw, sizeof raw, "%-28s%s  [%s]", fn, where, f->module ? f->module : "?");
    text_sanitize_display(buf, bufsz, raw, strlen(raw));
}

static int same_stack(const struct stack_thread *a, const struct stack_thread *b)
{
    if (a->npcs != b->npcs || strcmp(a->error, b->error) != 0 || a->mark[0] || b->mark[0]) return 0;
    if (a->left_running != b->left_running || !thread_wait_same(a->wait, b->wait)) return 0;
    for (int i = 0; i < a->npcs; i++)
        if (a->pcs[i].pc != b->pcs[i].pc) return 0;
    return 1;
}

static void cpu_text(char *buf, size_t n, double cpu)
{
    if (cpu < 0) snprintf(buf, n, "-");
    else snprintf(buf, n, "%.1f%%", cpu);
}

/* A core's thread: no name, state or CPU was recorded. "Thread 1234 (main): took SIGSEGV" or "8 threads: ..." */
static int offline_header(const struct stack_result *r, const int *members, int n, struct text_lines *out)
{
    const struct stack_thread *first = &r->threads[members[0]];
    if (n == 1)
        return text_lines_add(out, "Thread %d%s%s%s", first->tid, first->tid == r->pid ? " (main)" : "",
                              first->mark[0] ? ": " : "", first->mark);
    char tids[256] = "";
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        if (off < sizeof tids - 16)
            off += (size_t)snprintf(tids + off, sizeof tids - off, "%s%d", i ? " " : "", r->threads[members[i]].tid);
        else if (off < sizeof tids - 4) off += (size_t)snprintf(tids + off, sizeof tids - off, " ...");
    }
    return text_lines_add(out, "%d threads: %s", n, tids);
}

/* "Thread 1234 "name" S, 0.0% CPU" or "8 threads: 1235 1236 ... S, 0.0% CPU in all" */
static int group_header(const struct stack_result *r, const int *members, int n, struct text_lines *out)
{
    const struct stack_thread *first = &r->threads[members[0]];
    char name[96], cpu[32];
    text_sanitize_display(name, sizeof name, first->name, strlen(first->name));
    if (r->offline) return offline_header(r, members, n, out);
    if (n == 1) {
        cpu_text(cpu, sizeof cpu, first->cpu_percent);
        return text_lines_add(out, "Thread %d \"%s\" %c, %s CPU%s", first->tid, name, first->state ? first->state : '?',
                              cpu, first->tid == r->pid ? " (main)" : "");
    }
    char tids[256] = "";
    size_t off = 0;
    double total = 0;
    int sampled = 0;
    for (int i = 0; i < n; i++) {
        const struct stack_thread *t = &r->threads[members[i]];
        if (t->cpu_percent >= 0) {
            total += t->cpu_percent;
            sampled = 1;
        }
        if (off < sizeof tids - 16)
            off += (size_t)snprintf(tids + off, sizeof tids - off, "%s%d", i ? " " : "", t->tid);
        else if (off < sizeof tids - 4) off += (size_t)snprintf(tids + off, sizeof tids - off, " ...");
    }
    cpu_text(cpu, sizeof cpu, sampled ? total : -1);
    return text_lines_add(out, "%d threads: %s  \"%s\"... %c, %s CPU in all", n, tids, name,
                          first->state ? first->state : '?', cpu);
}

/* What a blocked thread waits on, and as root the kernel stack of one in D; a thread left running says so. */
static int wait_lines(const struct stack_thread *t, struct text_lines *out)
{
    char raw[1024], line[1024];
    if (t->left_running &&
        text_lines_add(out, "  (in uninterruptible sleep: not stopped; its stack read from memory as it slept)") < 0)
        return -1;
    if (!t->wait) return 0;
    thread_wait_describe(t->wait, raw, sizeof raw);
    text_sanitize_display(line, sizeof line, raw, strlen(raw));
    if (text_lines_add(out, "  waiting in %s", line) < 0) return -1;
    if (t->wait->nkernel && text_lines_add(out, "  kernel stack:") < 0) return -1;
    for (int i = 0; i < t->wait->nkernel; i++) {
        text_sanitize_display(line, sizeof line, t->wait->kernel[i], strlen(t->wait->kernel[i]));
        if (text_lines_add(out, "    %s", line) < 0) return -1;
    }
    return 0;
}

int stack_text_frames(const struct stack_frame *f, int n, const char *error, int source, struct text_lines *out)
{
    char line[1400];
    for (int i = 0; i < n; i++) {
        stack_text_frame(line, sizeof line, &f[i], source);
        if (text_lines_add(out, "  #%-3d %s", i, line) < 0) return -1;
    }
    if (n == 0 && text_lines_add(out, "  (no frames)") < 0) return -1;
    if (error[0] && text_lines_add(out, "  (%s)", error) < 0) return -1;
    return 0;
}

int stack_text_render(const struct stack_result *r, const struct stack_text_opts *o, struct text_lines *out)
{
    char comm[96];
    text_sanitize_display(comm, sizeof comm, r->comm, strlen(r->comm));
    int rc0 = r->not_stopped
                  ? text_lines_add(out, "Process %d (%s): %d thread%s, read while it ran (nothing stopped)", r->pid,
                                   comm, r->nthreads, r->nthreads == 1 ? "" : "s")
                  : text_lines_add(out, "Process %d (%s): %d thread%s, stopped for %.2f ms%s", r->pid, comm,
                                   r->nthreads, r->nthreads == 1 ? "" : "s", r->stopped_ms,
                                   r->target_was_stopped ? " (it was stopped before and stays stopped)" : "");
    return rc0 < 0 ? -1 : stack_text_threads(r, o, out);
}

int stack_text_threads(const struct stack_result *r, const struct stack_text_opts *o, struct text_lines *out)
{
    int *members = malloc((size_t)(r->nthreads ? r->nthreads : 1) * sizeof *members);
    char *done = calloc((size_t)(r->nthreads ? r->nthreads : 1), 1);
    int rc = members && done ? 0 : -1;
    for (int i = 0; i < r->nthreads && rc == 0; i++) {
        if (done[i]) continue;
        int n = 0;
        for (int k = i; k < r->nthreads; k++) {
            if (done[k] || (k != i && (!o->group || !same_stack(&r->threads[i], &r->threads[k])))) continue;
            members[n++] = k;
            done[k] = 1;
        }
        if (text_lines_add(out, "%s", "") < 0 || group_header(r, members, n, out) < 0 ||
            wait_lines(&r->threads[i], out) < 0 || stack_text_frames(r->threads[i].frames, r->threads[i].nframes, r->threads[i].error, o->source, out) < 0)
            rc = -1;
    }
    free(members);
    free(done);
    return rc;
}
