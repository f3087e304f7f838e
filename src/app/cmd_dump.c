#include "cmd_dump.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actions/dump/dump.h"
#include "util/dump_path.h"
#include "actions/runtimes/provider.h"
#include "render/rt_json.h"
#include "render/rt_text.h"
#include "render/dump_json.h"
#include "render/json_util.h"
#include "util/clock.h"
#include "util/fileio.h"
#include "util/quit_signals.h"
#include "util/text.h"
#include "config_file.h"

static const char dump_usage[] =
    "usage: diagtop dump PID [-o PATH] [--dump-dir DIR] [-t TID] [--filter MASK] [--full] [--snapshot | --stop]\n"
    "                    [--json]\n"
    "       diagtop dump PID --heap [-o PATH] [--dump-dir DIR] [--json] [--timeout SECONDS]\n"
    "  writes a core file of PID that gdb and eu-stack load. By default from a snapshot: the process clones a\n"
    "  frozen copy of itself, paused only while the kernel copies its page tables (as long as a fork: tens of ms a\n"
    "  GiB of 4K pages), and the copy is read while the process runs on; where that is not safe, stop-and-copy\n"
    "  (the process is stopped until its memory is copied), and the summary says why.\n"
    "  --heap: a JVM's heap dump instead (.hprof.gz, written by the JVM and copied back 0600; jcmd GC.heap_dump)\n"
    "  -o, --output PATH  the file (never overwritten); default core.<comm>.<pid>.<YYYYmmdd-HHMMSS> in the dump\n"
    "                     directory: --dump-dir, $DIAGTOP_DUMP_DIR, dump_dir= in the config file, the current\n"
    "                     directory if writable, else $XDG_STATE_HOME/diagtop/dumps\n"
    "  -t, --tid TID      the thread written first (gdb's current thread); default the main thread\n"
    "      --filter MASK  coredump_filter bits (hex, as /proc/PID/coredump_filter; default: the process's own)\n"
    "      --full         every readable mapping, whole\n"
    "      --snapshot     a snapshot or nothing: fails with the reason instead of falling back\n"
    "      --stop         stop-and-copy\n"
    "      --json         a JSON summary instead of text\n";

static volatile sig_atomic_t dump_cancel;
static void on_signal(int sig)
{
    (void)sig;
    dump_cancel = 1;
}

struct progress_state {
    double start, last;
};

/* A progress line on a terminal: bytes, MB/s, time left. */
static void show_progress(void *arg, unsigned long long done, unsigned long long total)
{
    struct progress_state *p = arg;
    double now = clock_monotonic_seconds();
    if (now - p->last < 0.1 && done < total) return;
    p->last = now;
    double el = now - p->start, rate = el > 0 ? (double)done / el : 0;
    double left = rate > 0 ? (double)(total - done) / rate : 0;
    fprintf(stderr, "\r  %7.1f / %.1f MiB  %6.1f MB/s  %4.1f s left ", done / 1048576.0, total / 1048576.0,
            rate / 1e6, left);
}

/* --heap: the runtime writes the dump (a JVM's .hprof.gz), the provider copies it into the dump directory. */
static int heap_dump(int pid, const char *output, const char *dir_opt, int json, double timeout)
{
    struct settings s;
    char dir[4096], err[512];
    config_file_settings(&s);
    const struct provider *p = provider_choose(pid, OP_HEAP_DUMP, 0, err, sizeof err);
    if (!p) {
        fprintf(stderr, "diagtop dump: %s\n", err);
        return 1;
    }
    struct provider_request rq;
    provider_request_default(&rq, pid);
    rq.timeout = timeout > 0 ? timeout : s.agent_timeout;
    rq.save_path = output;
    if (!output) {
        if (dump_directory(dir_opt, s.dump_dir, dir, sizeof dir, err, sizeof err) < 0) {
            fprintf(stderr, "diagtop dump: %s\n", err);
            return 1;
        }
        rq.save_dir = dir;
    }
    quit_signals_install(on_signal);
    rq.cancel = &dump_cancel;
    struct rt_file f = {0};
    if (p->heap_dump(&rq, &f, err, sizeof err) < 0) {
        fprintf(stderr, "diagtop dump: %s\n", err);
        if (json) {
            char *doc = rt_json_error(pid, p->name, err);
            if (doc) puts(doc);
            free(doc);
        }
        return 1;
    }
    int status;
    if (json) {
        char *doc = rt_json_file(pid, &f);
        status = !doc || puts(doc) == EOF;
        free(doc);
    } else {
        struct text_lines tl = {0};
        rt_text_file(&f, &tl);
        status = text_lines_write(&tl, stdout) < 0;
        text_lines_free(&tl);
    }
    rt_file_free(&f);
    return status;
}

/* The text summary: the file, the mode and the pauses the process saw, what a snapshot did not hold as it was. */
static void print_summary(const struct dump_result *r)
{
    char safe[1024];
    printf("%s\n  %.1f MiB on disk (%.1f MiB apparent), %d threads, %d mappings written, %d skipped\n", r->path,
           r->allocated_bytes / 1048576.0, r->apparent_bytes / 1048576.0, r->threads, r->mappings_written,
           r->mappings_skipped);
    if (r->mode == DUMP_MODE_SNAPSHOT) {
        printf("  snapshot: the process paused %.1f ms to clone its copy", r->pauses_ms[0]);
        if (r->npauses > 1)
            printf(", its main thread %.1f ms to reap it (%.1f ms in all, longest %.1f ms)", r->pauses_ms[1],
                   r->stopped_ms, r->pause_longest_ms);
        printf("; %.0f ms in all\n", r->total_ms);
    } else {
        text_sanitize_display(safe, sizeof safe, r->mode_reason, strlen(r->mode_reason));
        printf("  stop-and-copy (%s): the process was stopped for %.1f ms; %.0f ms in all\n", safe, r->stopped_ms,
               r->total_ms);
    }
    for (int i = 0; i < r->nregions; i++) {
        const struct dump_region *g = &r->regions[i];
        text_sanitize_display(safe, sizeof safe, g->path, strlen(g->path));
        printf("  %s 0x%llx-0x%llx %s (%s, %.1f MiB)\n",
               g->consistent ? "copied during the pause:" : "not snapshot-consistent, read while the process ran:",
               g->start, g->end, safe[0] ? safe : "[anon]", dump_region_kind_name(g->kind),
               g->bytes / 1048576.0);
    }
    if (r->regions_total > r->nregions) printf("  and %d more such regions\n", r->regions_total - r->nregions);
    if (r->zombie[0]) {
        text_sanitize_display(safe, sizeof safe, r->zombie, strlen(r->zombie));
        printf("  warning: %s\n", safe);
    }
}

/* What the command line asks for. */
struct dump_args {
    struct dump_options o;
    const char *output, *dir_opt;
    int json, heap, pid;
    double timeout; /* --heap's; 0: the config file's agent timeout */
};

/* One option into a: -1 to go on, else the exit status (0 for --help, 2 for a bad value). */
static int parse_option(int c, char **argv, struct dump_args *a)
{
    switch (c) {
    case 't':
        if (text_parse_pid(optarg, &a->o.first_tid) < 0) {
            fprintf(stderr, "diagtop dump: -t: '%s' is not a thread id\n", optarg);
            return 2;
        }
        break;
    case 'o': a->output = optarg; break;
    case 'D': a->dir_opt = optarg; break;
    case 'F': a->o.full = 1; break;
    case 'H': a->heap = 1; break;
    case 'S':
    case 'P':
        if (a->o.mode != DUMP_MODE_AUTO && a->o.mode != (c == 'S' ? DUMP_MODE_SNAPSHOT : DUMP_MODE_STOP)) {
            fprintf(stderr, "diagtop dump: --snapshot and --stop exclude each other\n");
            return 2;
        }
        a->o.mode = c == 'S' ? DUMP_MODE_SNAPSHOT : DUMP_MODE_STOP;
        break;
    case 'T':
        if (text_parse_seconds(optarg, &a->timeout) < 0 || a->timeout <= 0 || a->timeout > 3600) {
            fprintf(stderr, "diagtop dump: --timeout: '%s' is not a number of seconds up to 3600\n", optarg);
            return 2;
        }
        break;
    case 'j': a->json = 1; break;
    case 'f': {
        char *end;
        unsigned long v = strtoul(optarg, &end, 16);
        if (!*optarg || *end || v > 0x1FF) {
            fprintf(stderr, "diagtop dump: --filter: '%s' is not a coredump_filter mask (hex, up to 1ff)\n", optarg);
            return 2;
        }
        a->o.filter = (unsigned)v;
        a->o.filter_set = 1;
        break;
    }
    case 'h': fputs(dump_usage, stdout); return 0;
    case ':': fprintf(stderr, "diagtop dump: %s needs a value\n", argv[optind - 1]); return 2;
    default: fprintf(stderr, "diagtop dump: unknown option %s\n%s", argv[optind - 1], dump_usage); return 2;
    }
    return -1;
}

/* The options and the one PID: -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct dump_args *a)
{
    static const struct option longopts[] = {{"output", required_argument, 0, 'o'},
                                             {"dump-dir", required_argument, 0, 'D'},
                                             {"filter", required_argument, 0, 'f'},
                                             {"full", no_argument, 0, 'F'},
                                             {"tid", required_argument, 0, 't'},
                                             {"json", no_argument, 0, 'j'},
                                             {"heap", no_argument, 0, 'H'},
                                             {"timeout", required_argument, 0, 'T'},
                                             {"snapshot", no_argument, 0, 'S'},
                                             {"stop", no_argument, 0, 'P'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    dump_options_default(&a->o);
    optind = 1;
    opterr = 0;
    int c, status;
    while ((c = getopt_long(argc, argv, ":o:t:h", longopts, NULL)) != -1)
        if ((status = parse_option(c, argv, a)) >= 0) return status;
    if (optind != argc - 1 || text_parse_pid(argv[optind], &a->pid) < 0) {
        fprintf(stderr, "diagtop dump: %s\n%s", optind < argc ? "not a process id" : "which process?", dump_usage);
        return 2;
    }
    return -1;
}

/* The core file: -o as given, else a new name in the dump directory (which the config file may set). */
static int choose_path(const struct dump_args *a, char *path, size_t pathsz)
{
    if (a->output) {
        snprintf(path, pathsz, "%s", a->output);
        return 0;
    }
    struct settings s;
    char dir[4096], err[512];
    config_file_settings(&s);
    if (dump_directory(a->dir_opt, s.dump_dir, dir, sizeof dir, err, sizeof err) < 0) {
        fprintf(stderr, "diagtop dump: %s\n", err);
        return -1;
    }
    dump_default_name(a->pid, dir, path, pathsz);
    return 0;
}

/* The dump itself: a quit signal cancels it (the target is let go), a terminal sees its progress. */
static int run_dump(struct dump_args *a, const char *path, struct dump_result *r, char *err, size_t errlen)
{
    quit_signals_install(on_signal);
    a->o.cancel = &dump_cancel;
    a->o.path = path;
    struct progress_state ps = {clock_monotonic_seconds(), 0};
    if (!a->json && isatty(STDERR_FILENO)) {
        a->o.progress = show_progress;
        a->o.progress_arg = &ps;
    }
    int rc = dump_write(a->pid, &a->o, r, err, errlen);
    if (a->o.progress) fputc('\n', stderr);
    return rc;
}

/* --json's one line: the summary (r), or the error. */
static void print_json(int pid, const struct dump_result *r, const char *err)
{
    cJSON *d = cJSON_CreateObject();
    json_add_i64(d, "pid", pid);
    if (r) dump_json_add(d, r);
    else json_add_string_or_null(d, "error", err);
    char *t = cJSON_PrintUnformatted(d);
    if (t) puts(t);
    free(t);
    cJSON_Delete(d);
}

/* The outcome: an error on stderr (and as JSON with --json), else the summary; returns the exit status. */
static int report(const struct dump_args *a, int rc, const struct dump_result *r, const char *err)
{
    if (rc < 0) {
        fprintf(stderr, "diagtop dump: %s\n", err);
        if (a->json) print_json(a->pid, NULL, err);
        return 1;
    }
    if (a->json) print_json(a->pid, r, NULL);
    else print_summary(r);
    return 0;
}

int cmd_dump(int argc, char **argv)
{
    struct dump_args a;
    int status = parse_args(argc, argv, &a);
    if (status >= 0) return status;
    if (a.heap) return heap_dump(a.pid, a.output, a.dir_opt, a.json, a.timeout);
    char path[4096], err[512];
    if (choose_path(&a, path, sizeof path) < 0) return 1;
    struct dump_result r;
    int rc = run_dump(&a, path, &r, err, sizeof err);
    return report(&a, rc, &r, err);
}
