#include "batch.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "render/header_text.h"
#include "render/snapshot_json.h"
#include "render/table_text.h"
#include "util/clock.h"
#include "util/quit_signals.h"
#include "model/monitor.h"

#define INITIAL_SAMPLE_SECONDS 0.2 /* like top, the first frame shows CPU% over a short sample, not lifetimes */

static volatile sig_atomic_t batch_stop;

static void on_stop_signal(int sig)
{
    (void)sig;
    batch_stop = 1;
}

static int print_text(struct monitor *m, const struct settings *s)
{
    header_text_write(stdout, m->sys, &m->counts);
    char line[8192];
    table_text_titles(line, sizeof line, s->cols, s->ncols, 0);
    printf("\n%s\n", line);
    for (size_t i = 0; i < m->view.n; i++) {
        table_text_line(line, sizeof line, s->cols, s->ncols, &m->view.rows[i], &m->ctx, 0);
        puts(line);
    }
    putchar('\n');
    return 0;
}

static int print_json(struct monitor *m)
{
    char *doc = snapshot_json(m->sys, &m->counts, &m->view, &m->ctx, proctable_interval(m->table));
    if (!doc) return -1;
    puts(doc);
    free(doc);
    return 0;
}

int batch_run(const struct options *o, const struct settings *s, const struct procview_opts *vo)
{
    quit_signals_install(on_stop_signal);

    struct monitor m;
    char err[256];
    if (monitor_init(&m, err, sizeof err) < 0) {
        fprintf(stderr, "diagtop: %s\n", err);
        return 1;
    }
    /* JSON carries every field; text needs only what its columns show. */
    unsigned needs = o->json ? PROC_NEED_ALL : monitor_needs_of(s->cols, s->ncols);
    int status = 0;
    if (monitor_refresh(&m, vo, err, sizeof err) < 0) {
        fprintf(stderr, "diagtop: %s\n", err);
        monitor_destroy(&m);
        return 1;
    }
    monitor_fill_rows(&m, 0, m.view.n, needs); /* the first sample of the rates the first report shows */
    clock_sleep(s->delay < INITIAL_SAMPLE_SECONDS ? s->delay : INITIAL_SAMPLE_SECONDS, &batch_stop);
    for (int it = 0; !batch_stop && (o->iterations == 0 || it < o->iterations); it++) {
        if (it > 0) clock_sleep(s->delay, &batch_stop);
        if (batch_stop) break;
        if (monitor_refresh(&m, vo, err, sizeof err) < 0) {
            fprintf(stderr, "diagtop: %s\n", err);
            status = 1;
            break;
        }
        monitor_fill_rows(&m, 0, m.view.n, needs);
        if ((o->json ? print_json(&m) : print_text(&m, s)) < 0 || fflush(stdout) == EOF || ferror(stdout)) {
            if (errno != EPIPE) {
                fprintf(stderr, "diagtop: cannot write output: %s\n", strerror(errno));
                status = 1;
            }
            break;
        }
    }
    monitor_destroy(&m);
    return status;
}
