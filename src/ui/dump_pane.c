#include "dump_pane.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../actions/dump.h"
#include "../app/cmd_dump.h"
#include "../app/job.h"
#include "../util/clock.h"
#include "pane.h"
#include "tui_state.h"

struct dump_pane {
    struct job job;
    int pid;
    char path[4096];
    struct dump_options opts;
    struct dump_result result;
    int rc;
    char err[512];
    /* Written by the worker, read by the screen: progress is only displayed, so torn reads do no harm. */
    volatile unsigned long long done, total;
    double started;
};

static void on_progress(void *arg, unsigned long long done, unsigned long long total)
{
    struct dump_pane *dp = arg;
    dp->done = done;
    dp->total = total;
}

static void run(struct job *j)
{
    struct dump_pane *dp = j->arg;
    dp->opts.cancel = &j->cancel;
    dp->rc = dump_write(dp->pid, &dp->opts, &dp->result, dp->err, sizeof dp->err);
}

static void progress_text(const struct tui *t, char *buf, size_t n)
{
    const struct dump_pane *dp = t->dump;
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

static void render(struct tui *t)
{
    struct dump_pane *dp = t->dump;
    struct text_lines tl = {0};
    if (dp->rc < 0) {
        text_lines_add(&tl, "No dump: %s", dp->err);
        text_lines_add(&tl, "(no file was left behind; the process runs on)");
    } else {
        const struct dump_result *r = &dp->result;
        text_lines_add(&tl, "Core file      %s", r->path);
        text_lines_add(&tl, "On disk        %.1f MiB (%.1f MiB apparent, sparse)", r->allocated_bytes / 1048576.0,
                       r->apparent_bytes / 1048576.0);
        text_lines_add(&tl, "Threads        %d", r->threads);
        text_lines_add(&tl, "Mappings       %d written, %d skipped (coredump_filter 0x%x)", r->mappings_written,
                       r->mappings_skipped, r->filter);
        text_lines_add(&tl, "Stopped for    %.1f ms  (whole dump %.0f ms)", r->stopped_ms, r->total_ms);
        text_lines_add(&tl, "%s", "");
        text_lines_add(&tl, "Open it with:  gdb /proc/%d/exe %s   (or: eu-stack --core %s)", dp->pid, r->path, r->path);
    }
    pane_set_lines(t, &tl);
}

static void cancel(struct tui *t)
{
    struct dump_pane *dp = t->dump;
    if (dp && dp->job.running) job_cancel(&dp->job, 5.0);
}

static const struct pane_owner dump_owner = {NULL, NULL, NULL, cancel, NULL, NULL, progress_text};

int dump_pane_prepare(struct tui *t, int pid, char *question, size_t qsz)
{
    if (t->dump && t->dump->job.running) {
        snprintf(question, qsz, "a dump is already being written");
        return -1;
    }
    if (!t->dump && !(t->dump = calloc(1, sizeof *t->dump))) return -1;
    struct dump_pane *dp = t->dump;
    dp->pid = pid;
    dump_options_default(&dp->opts);
    char dir[4096], err[256];
    if (dump_directory(NULL, dir, sizeof dir, err, sizeof err) < 0) {
        snprintf(question, qsz, "%s", err);
        return -1;
    }
    dump_default_name(pid, dir, dp->path, sizeof dp->path);
    unsigned long long bytes = 0;
    if (dump_estimate(pid, &dp->opts, &bytes, err, sizeof err) < 0) {
        snprintf(question, qsz, "%s", err);
        return -1;
    }
    snprintf(question, qsz, "Dump %d to %.200s (up to %.0f MiB, stops it meanwhile)? [y/N] ", pid, dp->path,
             bytes / 1048576.0);
    return 0;
}

unsigned dump_pane_start(struct tui *t)
{
    struct dump_pane *dp = t->dump;
    if (!dp) return EFFECT_NONE;
    char title[160];
    snprintf(title, sizeof title, "Dump of %d", dp->pid);
    pane_open(t, &dump_owner, title, "");
    dp->opts.path = dp->path;
    dp->opts.progress = on_progress;
    dp->opts.progress_arg = dp;
    dp->done = dp->total = 0;
    dp->started = clock_monotonic_seconds();
    t->pane.busy_since = dp->started;
    pane_set_busy(t, "Dumping...");
    if (job_start(&dp->job, run, dp) < 0) {
        dp->rc = -1;
        snprintf(dp->err, sizeof dp->err, "cannot start a worker thread");
        render(t);
    }
    return EFFECT_NONE;
}

void dump_pane_done(struct tui *t)
{
    struct dump_pane *dp = t->dump;
    if (!dp || !dp->job.running) return;
    job_finish(&dp->job);
    if (t->pane.open && t->pane.owner == &dump_owner) render(t);
    tui_set_status(t, dp->rc < 0, dp->rc < 0 ? "dump failed: %s" : "core written to %s",
                   dp->rc < 0 ? dp->err : dp->result.path);
}

int dump_pane_fd(const struct tui *t) { return t->dump && t->dump->job.running ? t->dump->job.done_fd : -1; }

void dump_pane_shutdown(struct tui *t)
{
    struct dump_pane *dp = t->dump;
    if (!dp) return;
    if (dp->job.running && job_cancel(&dp->job, 5.0) < 0) {
        t->dump = NULL; /* still running: exiting detaches; its partial file may remain */
        return;
    }
    free(dp);
    t->dump = NULL;
}
