#include "dump_pane.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "actions/dump/dump.h"
#include "actions/offline/core_report.h"
#include "actions/offline/heap_analysis.h"
#include "util/dump_path.h"
#include "actions/runtimes/provider.h"
#include "render/core_text.h"
#include "render/hprof_text.h"
#include "render/rt_text.h"
#include "collect/proctable.h"
#include "util/clock.h"
#include "util/job.h"
#include "util/text.h"
#include "keymap.h"
#include "pane.h"
#include "tui_state.h"

/* A core file, or for a JVM its heap dump (the JVM writes it, the provider copies it into the dump directory),
 * which a then reads here: a core as diagtop analyze reads it (the signal, every stack, goroutines, the native
 * heap by size), a heap dump's summary, suspects with their paths, the histogram with retained sizes. */
struct dump_pane {
    int pid;
    char path[4096], dir[4096];
    struct dump_options opts;
    struct dump_result result;
    const struct provider *heap; /* who writes a heap dump of this process, NULL when nobody */
    int heap_chosen;             /* the job writes the heap dump */
    struct provider_request rq;
    struct rt_file heap_file;
    int rc;
    char err[512];
    /* Written by the worker, read by the screen: progress is only displayed, so torn reads do no harm. */
    volatile unsigned long long done, total;
    double started;
    /* a: the heap dump analyzed (the job's second kind of work) */
    int analyzing, analyzed;
    char who[TUI_TEXT_MAX];         /* w in a JVM's leak view: the class whose holders are asked for, else empty */
    const char *volatile phase;
    struct heap_analysis *analysis; /* kept while its report is shown: the report names its classes */
    struct heap_report report;
    int core_read;                  /* a: the core's report, in core */
    struct core_report core;
    struct job *job;
};

/* Drops an analysis and its report (a new dump, the pane closing: a big heap's index is worth its memory only
 * while shown). */
static void analysis_drop(struct dump_pane *dp)
{
    if (dp->core_read) core_report_free(&dp->core);
    dp->core_read = 0;
    if (dp->analyzed) heap_report_free(&dp->report);
    heap_analysis_close(dp->analysis);
    dp->analysis = NULL;
    dp->analyzed = 0;
}

/* The analysis's progress: shown, and Esc (the job's cancel flag) stops it. */
static int on_analysis_progress(void *arg, const char *phase, uint64_t done, uint64_t total)
{
    struct dump_pane *dp = arg;
    dp->phase = phase;
    dp->done = done;
    dp->total = total;
    return dp->job && dp->job->cancel;
}

static void run_analysis(struct job *j)
{
    struct dump_pane *dp = j->arg;
    dp->job = j;
    struct heap_analysis_opts o = {.progress = on_analysis_progress, .progress_arg = dp};
    dp->rc = heap_analysis_open(&dp->analysis, dp->heap_file.path, &o, dp->err, sizeof dp->err);
    if (dp->rc == 0) {
        /* who holds a class: the merged paths to its instances; else the suspects and the histogram */
        struct heap_query q = {.share = 0.1, .histogram = 1};
        if (dp->who[0]) q = (struct heap_query){.paths = dp->who};
        dp->rc = heap_report_build(dp->analysis, &q, &dp->report, dp->err, sizeof dp->err);
        dp->analyzed = dp->rc == 0;
        dp->report.path = dp->heap_file.path;
        dp->report.limit = 30;
    }
}

/* The core just written, read as diagtop analyze reads it. */
static void run_core_analysis(struct job *j)
{
    struct dump_pane *dp = j->arg;
    struct core_options o = {.heap = 1, .source = 1};
    dp->rc = core_report_read(dp->result.path, &o, &dp->core, dp->err, sizeof dp->err);
    dp->core_read = dp->rc == 0;
}

/* The file a analyzes: the heap dump, else the core. */
static const char *analyzed_path(const struct dump_pane *dp)
{
    return dp->heap_chosen ? dp->heap_file.path : dp->result.path;
}

static void on_progress(void *arg, unsigned long long done, unsigned long long total)
{
    struct dump_pane *dp = arg;
    dp->done = done;
    dp->total = total;
}

static void run(struct job *j)
{
    struct dump_pane *dp = j->arg;
    dp->opts.cancel = dp->rq.cancel = &j->cancel;
    if (dp->heap_chosen) dp->rc = dp->heap->heap_dump(&dp->rq, &dp->heap_file, dp->err, sizeof dp->err);
    else dp->rc = dump_write(dp->pid, &dp->opts, &dp->result, dp->err, sizeof dp->err);
    if (dp->rc == 0 && dp->who[0] && !j->cancel) { /* then read at once, for the holders asked about */
        dp->analyzing = 1;
        run_analysis(j);
    }
}

static void progress(const struct pane *p, char *buf, size_t n)
{
    const struct dump_pane *dp = p->state;
    if (dp->analyzing && !dp->heap_chosen) {
        snprintf(buf, n, "Reading the core %s...", dp->result.path);
        return;
    }
    if (dp->analyzing) {
        const char *phase = dp->phase;
        snprintf(buf, n, "Analyzing %s: %s %.0f%%  (Esc stops)", dp->heap_file.path, phase ? phase : "opening",
                 dp->total ? 100.0 * (double)dp->done / (double)dp->total : 0.0);
        return;
    }
    if (dp->heap_chosen) {
        snprintf(buf, n, "The JVM %d writes its heap dump (%s)...", dp->pid, dp->heap->name);
        return;
    }
    double el = clock_monotonic_seconds() - dp->started;
    double rate = el > 0 ? (double)dp->done / el : 0;
    double left = rate > 0 && dp->total > dp->done ? (double)(dp->total - dp->done) / rate : 0;
    int width = 30, filled = dp->total ? (int)((double)dp->done * width / (double)dp->total) : 0;
    char bar[64];
    memset(bar, '#', (size_t)filled);
    memset(bar + filled, '.', (size_t)(width - filled));
    bar[width] = '\0';
    snprintf(buf, n, "Dumping %d to %s  [%s] %.0f / %.0f MiB  %.0f MB/s  %.1f s left", dp->pid, dp->path, bar,
             dp->done / 1048576.0, dp->total / 1048576.0, rate / 1e6, left);
}

static void render(struct pane *p)
{
    struct dump_pane *dp = p->state;
    struct text_lines tl = {0};
    if (dp->rc < 0 && dp->analyzing) {
        text_lines_add(&tl, "%s was not analyzed: %s", analyzed_path(dp), dp->err);
        text_lines_add(&tl, "(a analyzes it again; diagtop analyze %s does it offline)", analyzed_path(dp));
    } else if (dp->core_read) {
        struct core_text_opts o = {.path = dp->result.path, .group = 1, .source = 1, .heap_rows = 20};
        core_text_render(&dp->core, &o, &tl);
        text_lines_add(&tl, "%s", "");
        text_lines_add(&tl, "More offline: diagtop analyze %s --json | --all-files | OLDER.core %s", dp->result.path,
                       dp->result.path);
    } else if (dp->rc < 0) {
        text_lines_add(&tl, "No dump: %s", dp->err);
        text_lines_add(&tl, "(no file was left behind; the process runs on)");
    } else if (dp->analyzed) {
        hprof_text_report(&dp->report, &tl);
        text_lines_add(&tl, "%s", "");
        text_lines_add(&tl, "More offline: diagtop analyze %s --paths CLASS | --class CLASS | --object 0xID",
                       dp->heap_file.path);
    } else if (dp->heap_chosen) {
        text_lines_add(&tl, "Heap dump");
        rt_text_file(&dp->heap_file, &tl);
        text_lines_add(&tl, "%s", "");
        text_lines_add(&tl, "a: analyze it here (retained sizes, leak suspects and the paths that hold them);");
        text_lines_add(&tl, "or offline: diagtop analyze %s, Eclipse MAT, VisualVM.", dp->heap_file.path);
    } else {
        const struct dump_result *r = &dp->result;
        text_lines_add(&tl, "Core file      %s", r->path);
        text_lines_add(&tl, "On disk        %.1f MiB (%.1f MiB apparent, sparse)", r->allocated_bytes / 1048576.0,
                       r->apparent_bytes / 1048576.0);
        text_lines_add(&tl, "Threads        %d", r->threads);
        text_lines_add(&tl, "Mappings       %d written, %d skipped (coredump_filter 0x%x)", r->mappings_written,
                       r->mappings_skipped, r->filter);
        if (r->mode == DUMP_MODE_SNAPSHOT) {
            text_lines_add(&tl, "Mode           snapshot: a copy was read while the process ran on");
            if (r->npauses > 1)
                text_lines_add(&tl, "Paused         %.1f ms to clone the copy, %.1f ms (main thread) to reap it; longest %.1f ms",
                               r->pauses_ms[0], r->pauses_ms[1], r->pause_longest_ms);
            else text_lines_add(&tl, "Paused         %.1f ms to clone the copy", r->pauses_ms[0]);
        } else {
            text_lines_add(&tl, "Mode           stop-and-copy (%s)", r->mode_reason);
        }
        text_lines_add(&tl, "Stopped for    %.1f ms  (whole dump %.0f ms)", r->stopped_ms, r->total_ms);
        for (int i = 0; i < r->nregions; i++) {
            const struct dump_region *g = &r->regions[i];
            char name[512]; /* a mapping's name is the process's to choose */
            text_sanitize_display(name, sizeof name, g->path[0] ? g->path : "[anon]", strlen(g->path[0] ? g->path : "[anon]"));
            text_lines_add(&tl, "Region         0x%llx-0x%llx %s (%s, %.1f MiB): %s", g->start, g->end,
                           name, dump_region_kind_name(g->kind),
                           g->bytes / 1048576.0,
                           g->consistent ? "copied during the pause" : "read while the process ran, not snapshot-consistent");
        }
        if (r->zombie[0]) text_lines_add(&tl, "Warning        %s", r->zombie);
        text_lines_add(&tl, "%s", "");
        text_lines_add(&tl, "a: read it here (the stacks, goroutines, the native heap by size), as diagtop analyze %s",
                       r->path);
        text_lines_add(&tl, "Open it with:  gdb /proc/%d/exe %s   (or: eu-stack --core %s)", dp->pid, r->path, r->path);
    }
    pane_set_lines(p, &tl);
}

/* Starts the pane's job; a failure to start is shown in the pane. */
static void start_work(struct pane *p, void (*fn)(struct job *j))
{
    struct dump_pane *dp = p->state;
    if (pane_start_job(p, fn) == 0) return;
    dp->rc = -1;
    snprintf(dp->err, sizeof dp->err, "cannot start a worker thread");
    render(p);
}

/* After the answer (y, or c / h for a JVM): the pane comes to the front and the dump starts. */
static unsigned start(struct tui *t, void *arg, int key)
{
    struct pane *p = arg;
    struct dump_pane *dp = p->state;
    dp->heap_chosen = key == 'h';
    dp->analyzing = 0;
    dp->who[0] = '\0';
    analysis_drop(dp);
    rt_file_free(&dp->heap_file);
    pane_set_title(p, "%s of %d (%s)", dp->heap_chosen ? "Heap dump" : "Dump", dp->pid, p->proc_name);
    pane_show(t, p);
    dp->opts.path = dp->path;
    dp->opts.progress = on_progress;
    dp->opts.progress_arg = dp;
    dp->done = dp->total = 0;
    dp->started = clock_monotonic_seconds();
    pane_set_busy(p, "Dumping...", dp->started);
    start_work(p, run);
    return EFFECT_NONE;
}

/* w in a JVM's leak view: a heap dump, then the paths from GC roots to the class's instances. Asked first: the JVM
 * pauses for a full GC and the write. */
static unsigned start_holders(struct tui *t, void *arg, int key)
{
    (void)key;
    struct pane *p = arg;
    struct dump_pane *dp = p->state;
    analysis_drop(dp);
    rt_file_free(&dp->heap_file);
    dp->heap_chosen = 1;
    dp->analyzing = 0;
    char cls[120];
    text_sanitize_display(cls, sizeof cls, dp->who, strlen(dp->who));
    pane_set_title(p, "Who holds %s in %d (%s)", cls, dp->pid, p->proc_name);
    pane_show(t, p);
    pane_set_busy(p, "Heap dump...", clock_monotonic_seconds());
    start_work(p, run);
    return EFFECT_NONE;
}

static enum pane_open_result open_holders(struct tui *t, struct pane *p, const struct proc_row *row)
{
    struct dump_pane *dp = p->state;
    if (p->job.running) {
        tui_set_status(t, 1, "a heap dump is already being written or read");
        return PANE_REFUSED;
    }
    dp->pid = row->tgid;
    snprintf(dp->who, sizeof dp->who, "%s", t->pane_arg);
    t->pane_arg[0] = '\0';
    char why[256], err[256];
    if (!dp->who[0] || !(dp->heap = provider_choose(dp->pid, OP_HEAP_DUMP, 0, why, sizeof why))) {
        tui_set_status(t, 1, "who holds these: no heap dump of %d (%s)", dp->pid, dp->who[0] ? why : "no class chosen");
        return PANE_REFUSED;
    }
    if (dump_directory(NULL, t->s->dump_dir, dp->dir, sizeof dp->dir, err, sizeof err) < 0) {
        tui_set_status(t, 1, "%s", err);
        return PANE_REFUSED;
    }
    provider_request_default(&dp->rq, dp->pid);
    dp->rq.timeout = t->s->agent_timeout;
    dp->rq.save_dir = dp->dir;
    char heap[160] = "its heap", cls[120], question[768];
    if (dp->heap->gc_pause) dp->heap->gc_pause(dp->pid, heap, sizeof heap);
    struct statvfs fs;
    double free_gib = statvfs(dp->dir, &fs) == 0 ? (double)fs.f_bavail * (double)fs.f_frsize / 1073741824.0 : -1;
    text_sanitize_display(cls, sizeof cls, dp->who, strlen(dp->who));
    snprintf(question, sizeof question,
             "Who holds %s: a heap dump pauses %d for a full GC and its write (%s), into %.120s (%.1f GiB free), "
             "then read here. Go on? [y/N] ", cls, dp->pid, heap, dp->dir, free_gib);
    keymap_ask(t, question, "y", start_holders, p, "no heap dump taken");
    return PANE_PENDING;
}

/* D: asks first, naming the file and the estimated size. */
static enum pane_open_result open_pane(struct tui *t, struct pane *p, const struct proc_row *row)
{
    struct dump_pane *dp = p->state;
    if (row->is_kernel) {
        tui_set_status(t, 1, "a kernel thread has no memory to dump");
        return PANE_REFUSED;
    }
    if (p->job.running) {
        tui_set_status(t, 1, "a dump is already being written");
        return PANE_REFUSED;
    }
    dp->pid = row->tgid;
    dump_options_default(&dp->opts);
    char err[256];
    if (dump_directory(NULL, t->s->dump_dir, dp->dir, sizeof dp->dir, err, sizeof err) < 0) {
        tui_set_status(t, 1, "%s", err);
        return PANE_REFUSED;
    }
    dump_default_name(dp->pid, dp->dir, dp->path, sizeof dp->path);
    char why[256];
    dp->heap = provider_choose(dp->pid, OP_HEAP_DUMP, 0, why, sizeof why);
    provider_request_default(&dp->rq, dp->pid);
    dp->rq.timeout = t->s->agent_timeout;
    dp->rq.save_dir = dp->dir;
    unsigned long long bytes = 0;
    if (dump_estimate(dp->pid, &dp->opts, &bytes, err, sizeof err) < 0) {
        tui_set_status(t, 1, "%s", err);
        return PANE_REFUSED;
    }
    /* Which mode will run, and why when it is not a snapshot. */
    char mode_why[256], mode[400];
    if (dump_mode_predict(dp->pid, &dp->opts, mode_why, sizeof mode_why) == DUMP_MODE_SNAPSHOT)
        snprintf(mode, sizeof mode, "a snapshot: paused only to clone a copy");
    else snprintf(mode, sizeof mode, "stops it meanwhile: %.200s", mode_why);
    char question[768];
    if (dp->heap)
        snprintf(question, sizeof question,
                 "Dump %d: c core file to %.160s (up to %.0f MiB, %s), h heap dump (.hprof.gz by the JVM)? [c/h/N] ",
                 dp->pid, dp->path, bytes / 1048576.0, mode);
    else
        snprintf(question, sizeof question, "Dump %d to %.200s (up to %.0f MiB, %s)? [y/N] ", dp->pid, dp->path,
                 bytes / 1048576.0, mode);
    keymap_ask(t, question, dp->heap ? "ch" : "y", start, p, "no dump written");
    return PANE_PENDING;
}

/* a, once a heap dump or a core is written: reads it in the pane's job. */
static unsigned key(struct tui *t, struct pane *p, int k)
{
    struct dump_pane *dp = p->state;
    if (k != 'a') return PANE_KEY_UNHANDLED;
    const char *path = analyzed_path(dp);
    if (!path || !path[0] || (dp->rc < 0 && !dp->analyzing) || p->job.running) {
        tui_set_status(t, 1, "a analyzes a core or a heap dump once written (D)");
        return EFFECT_NONE;
    }
    analysis_drop(dp);
    dp->analyzing = 1;
    dp->phase = NULL;
    dp->done = dp->total = 0;
    pane_set_busy(p, "Analyzing...", clock_monotonic_seconds());
    start_work(p, dp->heap_chosen ? run_analysis : run_core_analysis);
    return EFFECT_NONE;
}

static void ready(struct tui *t, struct pane *p)
{
    struct dump_pane *dp = p->state;
    if (t->panes.front == p) render(p);
    if (dp->analyzing)
        tui_set_status(t, dp->rc < 0, dp->rc < 0 ? "analysis failed: %s" : "%s analyzed: %s",
                       dp->rc < 0 ? dp->err : dp->heap_chosen ? "heap dump" : "core", analyzed_path(dp));
    else
        tui_set_status(t, dp->rc < 0, dp->rc < 0 ? "dump failed: %s" : dp->heap_chosen ? "heap dump written to %s" :
                       "core written to %s", dp->rc < 0 ? dp->err : dp->heap_chosen ? dp->heap_file.path : dp->result.path);
}

static void closed(struct pane *p, int stopped)
{
    (void)stopped;
    analysis_drop(p->state);
}

static void destroy(struct pane *p)
{
    struct dump_pane *dp = p->state;
    analysis_drop(dp);
    rt_file_free(&dp->heap_file);
}

/* The same pane, opened by w in a JVM's leak view (heap_pane): it shares the dump pane's state type and work. */
const struct pane_class holders_pane_class = {
    .name = "holders",
    .keys_help = "a analyze again|a again",
    .state_size = sizeof(struct dump_pane),
    .open = open_holders,
    .key = key,
    .ready = ready,
    .progress = progress,
    .closed = closed,
    .destroy = destroy,
};

const struct pane_class dump_pane_class = {
    .name = "dump",
    .keys_help = "a analyze the dump|a analyze",
    .state_size = sizeof(struct dump_pane),
    .open = open_pane,
    .key = key,
    .ready = ready,
    .closed = closed,
    .progress = progress,
    .destroy = destroy,
};
