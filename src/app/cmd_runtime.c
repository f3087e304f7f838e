#include "cmd_runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actions/capture/capture.h"
#include "util/dump_path.h"
#include "actions/runtimes/provider.h"
#include "actions/runtimes/heap_site.h"
#include "util/saved_file.h"
#include "collect/procinfo.h"
#include "render/cpu_json.h"
#include "render/cpu_top.h"
#include "render/flame.h"
#include "render/heap_view.h"
#include "render/pprof_write.h"
#include "render/json_util.h"
#include "render/procinfo_json.h"
#include "render/procinfo_text.h"
#include "render/rt_json.h"
#include "render/rt_text.h"
#include "util/clock.h"
#include "util/fileio.h"
#include "util/quit_signals.h"
#include "util/text.h"
#include "config_file.h"
#include "output_file.h"

/* A signal during a request becomes a cancel request: the provider gives up cleanly (a forked helper is killed,
 * a connection closed). */
static volatile sig_atomic_t runtime_cancel;

static void on_signal(int sig)
{
    (void)sig;
    runtime_cancel = 1;
}

static const char runtime_usage[] =
    "usage: diagtop memstats PID [--json] [--native] [--timeout SECONDS] [-o FILE]\n"
    "       diagtop gc PID [--percent N] [--json] [--timeout SECONDS] [-o FILE]\n"
    "       diagtop heap PID [--json] [--live] [--diff OLD.json] [--all] [--watch SECONDS [--count N]]\n"
    "                    [--drop-frames REGEX] [--timeout SECONDS] [-o FILE]\n"
    "       diagtop profile PID [-d SECONDS] [--rate HZ] [-f pprof|folded|svg|json|text] [-t TID]\n"
    "                       [--method perf|ptrace] [--native] [--json] [--timeout SECONDS] [-o FILE]\n"
    "  asks the runtime inside the process: a Go program through its gops agent, a JVM through HotSpot attach, a\n"
    "  native program through the diagtop agent it loads (LD_PRELOAD=libdiagtop-agent.so: malloc statistics,\n"
    "  malloc_trim as its gc, a sampled heap profile by allocation site, a CPU profile from inside);\n"
    "  what no runtime answers, diagtop does where it can: memstats from /proc, CPU profiles of any process by\n"
    "  its own sampler (perf_event_open, else ptrace; the target is never stopped by perf, and by ptrace for\n"
    "  tens of microseconds a sample). Files a runtime writes (heap and CPU profiles) are saved 0600 in the\n"
    "  dump directory (see diagtop dump --help), and their absolute path is printed.\n"
    "      --json          JSON (docs/json.md)\n"
    "      --native        ask /proc (and ptrace), not the runtime\n"
    "      --timeout S     seconds allowed for each exchange with an agent (default 5; config: agent_timeout=)\n"
    "  -o, --output FILE   write the output to a new file (0600, never overwriting) instead of stdout\n"
    "      --percent N     gc: set the GC target instead of collecting (Go's GOGC; -1 turns the GC off)\n"
    "      --live          heap: live objects only (Java: forces a full GC first)\n"
    "      --diff OLD.json heap: with each row's change since an earlier `diagtop heap --json` of the process\n"
    "      --all           heap: every row in text (default: the top 30)\n"
    "      --watch S       heap: a snapshot every S seconds, each shown against the first and the previous\n"
    "                      (with --json, one document per line)\n"
    "      --count N       heap: with --watch, N snapshots (default: until interrupted)\n"
    "      --drop-frames RE  heap: frames to skip when naming an allocation site's row, besides the built-in\n"
    "                      allocation wrappers (malloc's, sqlite3Malloc, g_malloc, xmalloc, operator new,\n"
    "                      PyMem_*...) and a stripped allocator library's own frames; an extended regex that\n"
    "                      must match the whole function name, as pprof's -drop_frames (config: drop_frames=)\n"
    "  -d, --duration S    profile: seconds of sampling (default 10; Java: 30; Go's agent always takes 30)\n"
    "                      (the diagtop agent's profile takes -f, --rate and -t as the sampler does)\n"
    "      --native        profile: diagtop's sampler even for a Go program or a JVM\n"
    "      --rate HZ       profile (sampler): samples per second per thread (default 100)\n"
    "  -f, --format F      profile (sampler): text (the top functions), json, folded (flamegraph.pl,\n"
    "                      speedscope), svg (an interactive flame graph), pprof (gzipped, for go tool pprof;\n"
    "                      without -o it is saved in the dump directory)\n"
    "  -t, --tid TID       profile (sampler): only this thread\n"
    "      --method M      profile (sampler): perf or ptrace (default: perf, else ptrace; also\n"
    "                      DIAGTOP_PROFILE_METHOD=)\n";

enum runtime_cmd { CMD_MEMSTATS, CMD_GC, CMD_HEAP, CMD_PROFILE };

struct runtime_cli {
    enum runtime_cmd cmd;
    struct settings settings; /* the config file's: agent timeout, dump directory */
    const char *name;
    int pid, json, native, all;
    const char *output;
    const char *diff;
    struct provider_request rq;
    /* the sampler's profile */
    int hz, tid;
    const char *format;
    enum cpu_method method;
    int seconds_set;
    /* heap --watch */
    double watch;
    unsigned long long count;
};

/* ---- options: one helper per option with a value, each printing its own complaint (-1) ---- */

static int opt_watch(struct runtime_cli *c, const char *v)
{
    double secs;
    if (text_parse_seconds(v, &secs) < 0 || secs < 0.1 || secs > 86400) {
        fprintf(stderr, "diagtop %s: --watch: '%s' is not a number of seconds (0.1 to 86400)\n", c->name, v);
        return -1;
    }
    c->watch = secs;
    return 0;
}

static int opt_count(struct runtime_cli *c, const char *v)
{
    if (text_parse_u64(v, &c->count) < 0 || c->count == 0 || c->count > 1000000) {
        fprintf(stderr, "diagtop %s: --count: '%s' is not a number of snapshots (1 to 1000000)\n", c->name, v);
        return -1;
    }
    return 0;
}

/* --timeout ('T') and --duration ('d'): the same range; -d also tells the profile its length was chosen. */
static int opt_seconds(struct runtime_cli *c, int opt, const char *v)
{
    double secs;
    if (text_parse_seconds(v, &secs) < 0 || secs <= 0 || secs > 3600) {
        fprintf(stderr, "diagtop %s: %s: '%s' is not a number of seconds (up to 3600)\n", c->name,
                opt == 'T' ? "--timeout" : "--duration", v);
        return -1;
    }
    if (opt == 'T') c->rq.timeout = secs;
    else c->rq.seconds = secs;
    c->seconds_set |= opt == 'd';
    return 0;
}

/* --rate ('r') and --tid ('t'): positive numbers, each with its own bound. */
static int opt_number(struct runtime_cli *c, int opt, const char *v)
{
    unsigned long long n = 0;
    int tid = 0;
    if (opt == 'r' ? text_parse_u64(v, &n) < 0 || n == 0 || n > 10000 : text_parse_pid(v, &tid) < 0) {
        fprintf(stderr, "diagtop %s: %s: '%s' is not %s\n", c->name, opt == 'r' ? "--rate" : "--tid", v,
                opt == 'r' ? "a rate in Hz (1 to 10000)" : "a thread id");
        return -1;
    }
    if (opt == 'r') c->hz = (int)n;
    else c->tid = tid;
    return 0;
}

static int opt_format(struct runtime_cli *c, const char *v)
{
    static const char *const formats[] = {"text", "json", "folded", "svg", "pprof"};
    size_t k = 0;
    while (k < sizeof formats / sizeof formats[0] && strcmp(v, formats[k])) k++;
    if (k == sizeof formats / sizeof formats[0]) {
        fprintf(stderr, "diagtop %s: --format: '%s' is not one of text, json, folded, svg, pprof\n", c->name, v);
        return -1;
    }
    c->format = formats[k];
    return 0;
}

static int opt_method(struct runtime_cli *c, const char *v)
{
    if (strcmp(v, "perf") && strcmp(v, "ptrace")) {
        fprintf(stderr, "diagtop %s: --method: '%s' is not perf or ptrace\n", c->name, v);
        return -1;
    }
    c->method = v[1] == 'e' ? CPU_METHOD_PERF : CPU_METHOD_PTRACE;
    return 0;
}

/* -1 is a percentage here: Go's GOGC=off. */
static int opt_percent(struct runtime_cli *c, const char *v)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < -1 || n > 100000) {
        fprintf(stderr, "diagtop %s: --percent: '%s' is not a GC percentage (-1 for off)\n", c->name, v);
        return -1;
    }
    c->rq.set_gc_percent = 1;
    c->rq.gc_percent = (int)n;
    return 0;
}

static int opt_drop(struct runtime_cli *c, const char *v)
{
    struct heap_drop d;
    char err[300];
    if (heap_drop_init(&d, v, err, sizeof err) < 0) {
        fprintf(stderr, "diagtop %s: --drop-frames: %s\n", c->name, err);
        return -1;
    }
    heap_drop_free(&d);
    return 0;
}

/* One option the command takes (parse checked that), with its value v. Returns 0 or -1. */
static int set_option(struct runtime_cli *c, int opt, const char *v)
{
    switch (opt) {
    case 'j': c->json = 1; return 0;
    case 'n': c->native = 1; return 0;
    case 'a': c->all = 1; return 0;
    case 'l': c->rq.live = 1; return 0;
    case 'o': c->output = v; return 0;
    case 'D': c->diff = v; return 0;
    case 'F': c->rq.drop_frames = v; return opt_drop(c, v);
    case 'W': return opt_watch(c, v);
    case 'N': return opt_count(c, v);
    case 'T':
    case 'd': return opt_seconds(c, opt, v);
    case 'r':
    case 't': return opt_number(c, opt, v);
    case 'f': return opt_format(c, v);
    case 'M': return opt_method(c, v);
    case 'p': return opt_percent(c, v);
    }
    return 0;
}

/* What comes after the options: exactly one process id; and --count only means something with --watch. */
static int check_rest(struct runtime_cli *c, int argc, char **argv)
{
    if (c->count && !c->watch) {
        fprintf(stderr, "diagtop %s: --count goes with --watch\n", c->name);
        return -1;
    }
    if (optind != argc - 1 || text_parse_pid(argv[optind], &c->pid) < 0) {
        fprintf(stderr, "diagtop %s: %s\n%s", c->name, optind < argc ? "not a process id" : "which process?",
                runtime_usage);
        return -1;
    }
    c->rq.pid = c->pid;
    return 0;
}

/* Options each command takes, as getopt_long sees them: every command knows every option's name, and refuses
 * the ones it does not take (allowed) as unknown. Returns 0, 1 (--help shown) or -1. */
static int parse(struct runtime_cli *c, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, 0, 'j'},          {"native", no_argument, 0, 'n'},
        {"timeout", required_argument, 0, 'T'}, {"output", required_argument, 0, 'o'},
        {"percent", required_argument, 0, 'p'}, {"live", no_argument, 0, 'l'},
        {"diff", required_argument, 0, 'D'},    {"all", no_argument, 0, 'a'},
        {"duration", required_argument, 0, 'd'}, {"help", no_argument, 0, 'h'},
        {"rate", required_argument, 0, 'r'},    {"format", required_argument, 0, 'f'},
        {"tid", required_argument, 0, 't'},     {"method", required_argument, 0, 'M'},
        {"watch", required_argument, 0, 'W'},   {"count", required_argument, 0, 'N'},
        {"drop-frames", required_argument, 0, 'F'}, {0, 0, 0, 0}};
    static const char *const allowed[] = {[CMD_MEMSTATS] = "jnTo", [CMD_GC] = "jTop", [CMD_HEAP] = "jTolDaWNF",
                                          [CMD_PROFILE] = "jTodnrftM"};
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":o:d:f:t:h", longopts, NULL)) != -1) {
        if (opt == 'h') {
            fputs(runtime_usage, stdout);
            return 1;
        }
        if (opt == ':') {
            fprintf(stderr, "diagtop %s: %s needs a value\n", c->name, argv[optind - 1]);
            return -1;
        }
        if (opt == '?' || !strchr(allowed[c->cmd], opt)) {
            fprintf(stderr, "diagtop %s: unknown option %s\n%s", c->name, argv[optind - 1], runtime_usage);
            return -1;
        }
        if (set_option(c, opt, optarg) < 0) return -1;
    }
    return check_rest(c, argc, argv);
}

/* ---- output ---- */

/* Prints a JSON document (owned: freed here) or text lines. Returns the exit status. */
static int emit(const struct runtime_cli *c, char *doc, struct text_lines *tl)
{
    FILE *f = output_open(c->name, c->output);
    int bad = !f;
    if (f && doc) bad = fputs(doc, f) == EOF || fputc('\n', f) == EOF;
    else if (f && tl) bad = text_lines_write(tl, f) < 0;
    else if (f) bad = 1;
    if (f) bad = output_close(c->name, c->output, f, bad);
    free(doc);
    if (tl) text_lines_free(tl);
    return bad;
}

static int fail(const struct runtime_cli *c, const char *provider, const char *err)
{
    fprintf(stderr, "diagtop %s: %s\n", c->name, err);
    if (c->json) emit(c, rt_json_error(c->pid, provider, err), NULL);
    return 1;
}

/* A progress line on a terminal for long requests (a CPU profile). */
static void show_progress(void *arg, double fraction)
{
    const struct runtime_cli *c = arg;
    fprintf(stderr, "\r%s of %d: %3.0f%%", c->name, c->pid, fraction * 100.0);
}

/* ---- the commands ---- */

/* The provider for op, or NULL with the reason printed (and the exit status in *status). */
static const struct provider *choose(const struct runtime_cli *c, enum provider_op op, int *status)
{
    char why[512];
    const struct provider *p = provider_choose(c->pid, op, c->native, why, sizeof why);
    if (!p) *status = fail(c, NULL, why);
    else if (why[0]) fprintf(stderr, "diagtop %s: %s; %s answers\n", c->name, why, p->name);
    return p;
}

/* memstats: the kernel's view of the process's memory, and next to it the runtime's own when one answers. */
static int run_memstats(struct runtime_cli *c)
{
    struct proc_info pi;
    char err[512] = "";
    if (procinfo_collect(c->pid, PI_MEMORY, 0, &pi, err, sizeof err) < 0) return fail(c, NULL, err);
    const struct provider *p = c->native ? NULL : provider_runtime_of(c->pid);
    struct rt_fields fs = {0};
    int have = 0;
    if (p && p->memstats && p->probe(c->pid, err, sizeof err) == 0)
        have = p->memstats(&c->rq, &fs, err, sizeof err) == 0;
    int status;
    if (c->json) {
        char *doc = procinfo_json(&pi, 0), *merged = NULL;
        if (doc && have) {
            char *rt = rt_json_fields(c->pid, &fs);
            merged = rt ? json_merge(doc, "runtime", rt) : NULL;
            free(rt);
        } else if (doc && p) {
            char *e = rt_json_error(c->pid, p->name, err);
            merged = e ? json_merge(doc, "runtime", e) : NULL;
            free(e);
        }
        if (merged) {
            free(doc);
            doc = merged;
        }
        status = emit(c, doc, NULL);
    } else {
        struct text_lines tl = {0};
        char comm[96];
        text_sanitize_display(comm, sizeof comm, pi.general.comm, strlen(pi.general.comm));
        text_lines_add(&tl, "Process %d (%s)", pi.pid, comm);
        text_lines_add(&tl, "%s", "");
        text_lines_add(&tl, "== memory (kernel)");
        struct procinfo_text_opts o = {0, NULL};
        procinfo_text_section(&pi, PI_MEMORY, &o, &tl);
        if (p) {
            text_lines_add(&tl, "%s", "");
            if (have) rt_text_fields(&fs, &tl);
            else {
                char clean[600];
                text_sanitize_display(clean, sizeof clean, err, strlen(err));
                text_lines_add(&tl, "runtime memstats (%s): not available: %s", p->name, clean);
            }
        }
        status = emit(c, NULL, &tl);
    }
    rt_fields_free(&fs);
    procinfo_free(&pi);
    return status;
}

static int run_gc(struct runtime_cli *c)
{
    int status = 1;
    const struct provider *p = choose(c, OP_GC, &status);
    if (!p) return status;
    struct rt_gc g = {0};
    char err[512];
    if (p->gc(&c->rq, &g, err, sizeof err) < 0) return fail(c, p->name, err);
    struct text_lines tl = {0};
    if (!c->json) rt_text_gc(&g, &tl);
    status = emit(c, c->json ? rt_json_gc(c->pid, &g) : NULL, c->json ? NULL : &tl);
    rt_gc_free(&g);
    return status;
}

/* Where files a runtime writes for us go: the dump directory. */
static void save_dir(struct runtime_cli *c, char *dir, size_t n)
{
    char err[256];
    if (dump_directory(NULL, c->settings.dump_dir, dir, n, err, sizeof err) == 0) c->rq.save_dir = dir;
    else fprintf(stderr, "diagtop %s: %s (nothing will be saved)\n", c->name, err);
}

/* One snapshot's table, against the first and the previous of the series (either may be NULL), to f. */
static int heap_write(const struct runtime_cli *c, FILE *f, const struct rt_heap *cur, const struct rt_heap *prev,
                      const struct rt_heap *first)
{
    struct heap_view v;
    if (heap_view_build(&v, cur, prev ? prev : first, first) < 0) {
        fprintf(stderr, "diagtop %s: out of memory\n", c->name);
        return 1;
    }
    int bad;
    if (c->json) {
        char *doc = rt_json_heap(&v);
        bad = !doc || fputs(doc, f) == EOF || fputc('\n', f) == EOF;
        free(doc);
    } else {
        struct text_lines tl = {0};
        rt_text_heap(&v, c->all ? 0 : 30, 0, &tl);
        bad = text_lines_write(&tl, f) < 0;
        text_lines_free(&tl);
        if (c->watch && !bad) bad = fputc('\n', f) == EOF;
    }
    fflush(f);
    heap_view_free(&v);
    return bad;
}

/* heap: one snapshot (against --diff OLD), or with --watch a series, each against the first (or OLD) and the
 * previous. */
static int run_heap(struct runtime_cli *c)
{
    struct rt_heap first = {0}, prev = {0}, cur = {0};
    int have_first = 0, have_prev = 0;
    char err[512];
    if (c->diff) {
        char *text = fileio_read_file(AT_FDCWD, c->diff, 256 << 20, NULL);
        if (!text) {
            fprintf(stderr, "diagtop heap: cannot read %s: %s\n", c->diff, strerror(errno));
            return 1;
        }
        int rc = rt_json_read_heap(text, &first, err, sizeof err);
        free(text);
        if (rc < 0) {
            fprintf(stderr, "diagtop heap: %s: %s\n", c->diff, err);
            return 1;
        }
        have_first = 1;
    }
    int status = 1;
    const struct provider *p = choose(c, OP_HEAP, &status);
    if (!p) {
        rt_heap_free(&first);
        return status;
    }
    char dir[4096];
    save_dir(c, dir, sizeof dir);
    FILE *f = output_open(c->name, c->output);
    if (!f) {
        rt_heap_free(&first);
        return 1;
    }
    status = 0;
    unsigned long long want = c->watch ? c->count : 1;
    for (unsigned long long i = 0; status == 0 && !runtime_cancel && (want == 0 || i < want); i++) {
        if (i > 0) {
            clock_sleep(c->watch, &runtime_cancel);
            if (runtime_cancel) break;
        }
        if (p->heap(&c->rq, &cur, err, sizeof err) < 0) {
            /* SIGINT ends a series quietly (what it printed stands); a single snapshot fails */
            if (!(runtime_cancel && c->watch && i > 0)) status = fail(c, p->name, err);
            break;
        }
        if (have_first && i == 0 && first.kind[0] && strcmp(first.kind, cur.kind))
            fprintf(stderr, "diagtop heap: %s holds a %s, this is a %s: rows will not match\n", c->diff, first.kind,
                    cur.kind);
        status = heap_write(c, f, &cur, have_prev ? &prev : NULL, have_first ? &first : NULL);
        /* The snapshot joins the series: the first stays the first, the current becomes the previous. */
        if (!have_first) {
            first = cur;
            have_first = 1;
        } else {
            rt_heap_free(&prev);
            prev = cur;
            have_prev = 1;
        }
        memset(&cur, 0, sizeof cur);
    }
    status = output_close(c->name, c->output, f, status) || status;
    rt_heap_free(&cur);
    rt_heap_free(&prev);
    rt_heap_free(&first);
    return status;
}

/* The sampler's profile in the asked format. pprof is binary: without -o it goes to a file in the dump
 * directory, never to a terminal. */
static int emit_cpu_report(struct runtime_cli *c, const struct cpu_report *r)
{
    const char *f = c->json ? "json" : c->format ? c->format : "text";
    char err[256];
    if (strcmp(f, "text") && strcmp(f, "json")) /* the file says no more than the stacks: the numbers on stderr */
        fprintf(stderr, "diagtop profile: %lld samples of %d in %.2f s at %d Hz (%s), %lld lost\n", r->samples, r->pid,
                r->seconds, r->hz, r->method, r->lost);
    if (!strcmp(f, "pprof")) {
        unsigned char *bytes = NULL;
        size_t len = 0;
        if (pprof_write_cpu(r, &bytes, &len, err, sizeof err) < 0) return fail(c, "native", err);
        int status;
        if (c->output) {
            status = output_write(c->name, c->output, bytes, len);
        } else { /* saved like the runtimes' profiles: 0600 in the dump directory, never overwriting */
            char dir[4096], *path = NULL;
            status = dump_directory(NULL, c->settings.dump_dir, dir, sizeof dir, err, sizeof err) < 0 ||
                     saved_file_write(c->pid, dir, "cpu", ".pb.gz", bytes, len, &path, err, sizeof err) < 0;
            if (status) fprintf(stderr, "diagtop %s: %s\n", c->name, err);
            else printf("%s\n", path);
            free(path);
        }
        free(bytes);
        return status;
    }
    if (!strcmp(f, "svg")) {
        struct flame_svg_opts o = {c->tid, 0, 0, NULL};
        char *svg = NULL;
        size_t len = 0;
        if (flame_svg(r, &o, &svg, &len) < 0) return fail(c, "native", "out of memory");
        int status = output_write(c->name, c->output, svg, len);
        free(svg);
        return status;
    }
    if (!strcmp(f, "json")) {
        struct cpu_json_opts o = {c->tid, 0, 0};
        return emit(c, cpu_json(r, &o), NULL);
    }
    struct text_lines tl = {0};
    if (!strcmp(f, "folded")) {
        flame_folded(r, c->tid, &tl);
    } else {
        struct cpu_top_opts o = {CPU_TOP_BY_OWN, c->tid, c->all ? 0 : 40};
        struct cpu_top top;
        if (cpu_top_build(r, &o, &top) < 0) return fail(c, "native", "out of memory");
        cpu_top_text(&top, 0, &tl);
        cpu_top_free(&top);
    }
    return emit(c, NULL, &tl);
}

/* A CPU profile: the runtime's profiler (Go's pprof, Java's JFR: its top functions and the file it saved), the
 * diagtop agent's (taken inside the process) or diagtop's sampler (any process, the target never stopped by perf,
 * by ptrace for microseconds): the last two as a report, in the formats -f asks. */
static int run_profile(struct runtime_cli *c)
{
    struct capture_profile_options o;
    capture_profile_options_default(&o);
    o.from = c->native ? CAPTURE_NATIVE : CAPTURE_AUTO;
    o.want_report = 1;
    if (c->seconds_set) o.seconds = c->rq.seconds;
    o.hz = c->hz;
    if (c->method != CPU_METHOD_AUTO) o.method = c->method;
    o.timeout = c->rq.timeout;
    o.cancel = &runtime_cancel;
    if (isatty(STDERR_FILENO)) {
        o.progress = show_progress;
        o.progress_arg = c;
    }
    /* Who answers, said before the profile runs (seconds), with the options it will not use. */
    struct capture_who w;
    capture_profile_who(c->pid, &o, &w);
    if (!w.by) return fail(c, NULL, w.note);
    if (w.note[0]) fprintf(stderr, "diagtop %s: %s; %s answers\n", c->name, w.note, w.by);
    int runtime = w.from == CAPTURE_RUNTIME;
    if (runtime && w.is_report && c->method != CPU_METHOD_AUTO)
        fprintf(stderr, "diagtop profile: the agent takes the profile: --method is for diagtop's sampler (--native)\n");
    else if (runtime && !w.is_report && (c->format || c->hz || c->tid || c->method != CPU_METHOD_AUTO))
        fprintf(stderr, "diagtop profile: %s takes the profile: -f, --rate, -t and --method are for diagtop's own "
                "sampler (--native)\n", w.by);
    char dir[4096], err[512];
    if (!w.is_report) {
        save_dir(c, dir, sizeof dir);
        o.save_dir = c->rq.save_dir;
    }
    o.from = w.from; /* the one just said */
    struct capture_profile r;
    int rc = capture_profile(c->pid, &o, &r, err, sizeof err);
    if (o.progress) fputc('\n', stderr);
    if (rc < 0) return fail(c, r.by, err);
    if (runtime_cancel && !runtime)
        fprintf(stderr, "diagtop profile: interrupted: the %.1f s sampled so far\n", r.report.seconds);
    int status;
    if (r.is_report) {
        status = emit_cpu_report(c, &r.report);
    } else {
        struct text_lines tl = {0};
        if (!c->json) rt_text_profile(&r.rt, 30, &tl);
        status = emit(c, c->json ? rt_json_profile(c->pid, &r.rt) : NULL, c->json ? NULL : &tl);
    }
    capture_profile_free(&r);
    return status;
}

static int run(enum runtime_cmd cmd, const char *name, int argc, char **argv)
{
    struct runtime_cli c = {.cmd = cmd, .name = name};
    config_file_settings(&c.settings);
    provider_request_default(&c.rq, 0);
    c.rq.timeout = c.settings.agent_timeout;
    if (c.settings.drop_frames[0]) c.rq.drop_frames = c.settings.drop_frames;
    int rc = parse(&c, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 2;
    quit_signals_install(on_signal);
    c.rq.cancel = &runtime_cancel;
    switch (cmd) {
    case CMD_MEMSTATS: return run_memstats(&c);
    case CMD_GC: return run_gc(&c);
    case CMD_HEAP: return run_heap(&c);
    default: return run_profile(&c);
    }
}

int cmd_memstats(int argc, char **argv) { return run(CMD_MEMSTATS, "memstats", argc, argv); }
int cmd_gc(int argc, char **argv) { return run(CMD_GC, "gc", argc, argv); }
int cmd_heap(int argc, char **argv) { return run(CMD_HEAP, "heap", argc, argv); }
int cmd_profile(int argc, char **argv) { return run(CMD_PROFILE, "profile", argc, argv); }
